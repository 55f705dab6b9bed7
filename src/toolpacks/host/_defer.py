"""Which tools of a toolset are deferred: sent to the model only once a search finds them.

An agent's ``defer`` is a list of patterns, or ``"auto"``: every tool once the toolset has
more than ``defer_threshold`` of them. ``never_defer`` patterns keep tools up front whatever
``defer`` says. A pattern is one of:

- ``tag:NAME``: the tools carrying that tag;
- a bare pack name (``files``): every tool of that pack;
- an exposed or qualified name, or a glob over them (``files.read_*``, ``read_*``).

A pattern that matches no tool of the toolset is a ``ConfigError`` (a typo would silently
defer nothing, or keep a huge pack up front), with a did-you-mean like ``exclude``'s.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import Any, Literal, Protocol, TypeVar

from toolpacks.exceptions import ConfigError

__all__ = ["DEFAULT_THRESHOLD", "DeferSpec", "apply_defer", "matching"]

DEFAULT_THRESHOLD = 30
"""``defer = "auto"`` defers every tool once a toolset has more tools than this."""

DeferSpec = Sequence[str] | Literal["auto"]
"""Patterns of tools to defer, or ``"auto"``."""

_GLOB = frozenset("*?[")


class _Entry(Protocol):
    """What deferral reads of a toolset entry (a ``_toolset.ToolEntry``).

    The class is not imported here: ``Toolset(defer=...)`` imports this module.
    """

    @property
    def exposed(self) -> str: ...
    @property
    def qualified(self) -> str: ...
    @property
    def pack(self) -> str: ...
    @property
    def tool(self) -> Any: ...
    @property
    def deferred(self) -> bool: ...


ToolEntry = TypeVar("ToolEntry", bound=_Entry)


def matching(pattern: str, entries: Sequence[ToolEntry]) -> set[str]:
    """The exposed names of the entries ``pattern`` matches (see the module docstring)."""
    if pattern.startswith("tag:"):
        tag = pattern[4:]
        return {e.exposed for e in entries if tag in e.tool.tags}
    if _GLOB.isdisjoint(pattern):
        whole_pack = {e.exposed for e in entries if e.pack == pattern}
        if whole_pack:
            return whole_pack
        return {e.exposed for e in entries if pattern in (e.exposed, e.qualified)}
    return {
        e.exposed
        for e in entries
        if fnmatchcase(e.exposed, pattern) or fnmatchcase(e.qualified, pattern)
    }


def _match_all(
    patterns: Iterable[str], entries: Sequence[ToolEntry], key: str, scope: str
) -> set[str]:
    """The union of what ``patterns`` match; a pattern matching nothing is a ConfigError."""
    found: set[str] = set()
    for pattern in patterns:
        names = matching(pattern, entries)
        if not names:
            raise ConfigError(_unmatched(pattern, entries, key, scope))
        found |= names
    return found


def _unmatched(pattern: str, entries: Sequence[ToolEntry], key: str, scope: str) -> str:
    known = sorted(
        {e.pack for e in entries if e.pack}
        | {f"tag:{t}" for e in entries for t in e.tool.tags}
        | {e.qualified for e in entries}
        | {e.exposed for e in entries}
    )
    close = difflib.get_close_matches(pattern, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    packs = sorted({e.pack for e in entries if e.pack})
    return (
        f"{scope}: {key} entry {pattern!r} matches no tool of this toolset{hint} (use a pack "
        f"name, 'tag:NAME', or an exposed or qualified name or glob; packs: "
        f"{', '.join(packs) or 'none'})"
    )


def apply_defer(
    entries: Sequence[ToolEntry],
    defer: DeferSpec,
    never_defer: Iterable[str] = (),
    threshold: int = DEFAULT_THRESHOLD,
    scope: str = "Host.toolset()",
) -> list[ToolEntry]:
    """``entries`` with ``deferred`` set on the ones ``defer`` picks and ``never_defer`` keeps.

    Raises:
        ConfigError: A pattern matches no tool, or ``defer`` is a string other than ``auto``.
    """
    if isinstance(defer, str) and defer != "auto":
        raise ConfigError(
            f'{scope}: defer = {defer!r}: use "auto" or a list of patterns (pack names, '
            "'tag:NAME', tool names or globs)"
        )
    kept = _match_all(never_defer, entries, "never_defer", scope)
    if defer == "auto":
        chosen = {e.exposed for e in entries} if len(entries) > threshold else set()
    else:
        chosen = _match_all(defer, entries, "defer", scope)
    chosen -= kept
    return [
        replace(e, deferred=e.exposed in chosen)  # type: ignore[type-var]  # a dataclass
        if e.deferred != (e.exposed in chosen)
        else e
        for e in entries
    ]
