"""The handler of the `shout` file-based tool; TOOL.md declares its parameters."""

from __future__ import annotations

from typing import Any

from toolpacks import ToolContext


def handle(arguments: dict[str, Any], context: ToolContext) -> str:
    """Return the message in capitals with ``times`` exclamation marks."""
    return arguments["message"].upper() + "!" * arguments["times"]
