"""toolpacks-clock: the current time, time-zone conversion and date arithmetic.

Tools: ``now``, ``convert_time``, ``add_duration``, ``days_between`` (typed functions) and
``weekday`` (a file tool in ``tools/weekday/``: TOOL.md + handler.py). The pack takes no
settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolpacks import hookimpl
from toolpacks.hookspecs import Register

from toolpacks_clock.clock import (
    WEEKDAYS,
    ZonedTime,
    add_duration,
    convert_time,
    days_between,
    now,
)

__all__ = [
    "TOOLS",
    "TOOLS_DIR",
    "WEEKDAYS",
    "ZonedTime",
    "add_duration",
    "convert_time",
    "days_between",
    "now",
    "register_tools",
]

TOOLS = (now, convert_time, add_duration, days_between)
"""The pack's code tools, in registration order."""
TOOLS_DIR = Path(__file__).parent / "tools"
"""The pack's file-tools directory (one ``<tool>/TOOL.md`` + ``handler.py`` per tool)."""
_HOST_KEYS = frozenset({"pack"})
"""Keys the host itself uses in a pack's table (``pack`` names the pack an alias copies)."""


def _check_settings(config: Mapping[str, Any]) -> None:
    unknown = sorted(set(config) - _HOST_KEYS)
    if unknown:
        raise ValueError(
            f"unknown setting(s) {', '.join(unknown)} for the clock pack; it takes no settings"
        )


@hookimpl
def register_tools(register: Register) -> None:
    """Register the clock tools and the ``weekday`` file tool."""
    _check_settings(getattr(register, "config", None) or {})
    for clock_tool in TOOLS:
        register(clock_tool)
    register(TOOLS_DIR)
