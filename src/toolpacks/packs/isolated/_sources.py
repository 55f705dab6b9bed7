"""The isolated packs a configuration declares, as pack sources the host composes.

``[isolated.NAME]`` adds the pack ``NAME`` (its ``[packs.NAME]`` table, if any, is its
settings); ``[packs.NAME] isolate = ...`` turns the installed pack ``NAME`` into one run in a
child process of the host's environment, with the rest of the table as its settings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from toolpacks.packs._record import PackInfo, PackSource
from toolpacks.packs.isolated._pack import IsolatedSource
from toolpacks.packs.isolated._settings import ISOLATE_KEY, IsolatedConfig, isolation_of

__all__ = ["isolated_sources"]


def isolated_sources(
    isolated: Mapping[str, IsolatedConfig],
    pack_settings: Mapping[str, Mapping[str, Any]],
    known: Mapping[str, PackSource],
    path: Sequence[str] | None,
    claim: Callable[[str, str], None],
) -> dict[str, PackSource]:
    """The sources of isolated packs, by name (replacing installed ones that ``isolate``).

    Args:
        isolated: The ``[isolated.NAME]`` tables.
        pack_settings: The ``[packs.NAME]`` tables.
        known: The packs composed so far (installed, in-process, MCP servers).
        path: Where the host discovers packs (for children of its own environment).
        claim: Raises ``ConfigError`` when a name is already taken.
    """
    out: dict[str, PackSource] = {}
    for name, table in isolated.items():
        claim(name, f"isolated.{name}")
        settings = {k: v for k, v in pack_settings.get(name, {}).items() if k != ISOLATE_KEY}
        info = PackInfo(name, None, None, table.requirement, "available", source="isolated")
        extra = IsolatedSource(name, table, requirement=table.requirement)
        out[name] = PackSource(info, settings=settings, extra=extra)
    for name, settings_table in pack_settings.items():
        limits_of = isolation_of(settings_table, f"packs.{name}")
        origin = known.get(name)
        if limits_of is None or origin is None or name in out:
            continue
        if origin.info.source != "entry_point" or origin.info.status != "available":
            continue
        settings = {k: v for k, v in settings_table.items() if k != ISOLATE_KEY}
        extra = IsolatedSource(
            name,
            limits_of,
            path=tuple(path) if path is not None else None,
            version=origin.info.version,
        )
        out[name] = PackSource(
            replace(origin.info, source="isolated"), settings=settings, extra=extra
        )
    return out
