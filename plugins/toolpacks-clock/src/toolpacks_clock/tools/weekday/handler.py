"""The handler of the ``weekday`` file tool; TOOL.md declares its parameters."""

from __future__ import annotations

import datetime
from typing import Any

from toolpacks import ToolContext, ToolError

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def handle(arguments: dict[str, Any], context: ToolContext | None) -> str:
    """Return the English weekday name of ``arguments["date"]`` (YYYY-MM-DD)."""
    text = str(arguments["date"]).strip()
    try:
        day = datetime.date.fromisoformat(text)
    except ValueError:
        raise ToolError(
            f"date={text!r} is not a calendar date; use YYYY-MM-DD, for example 2025-03-01"
        ) from None
    return WEEKDAYS[day.weekday()]
