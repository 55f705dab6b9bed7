"""Which tools an agent's selection keeps: name globs, behaviour hints, and the checks on them.

``tools`` (allow) and ``exclude`` (deny) entries are globs (``fnmatch``, case-sensitive) over
a tool's qualified name (``files.read_text``) and the name the model would see before any
conflict is resolved (its rename, else its tool name); an entry without ``*?[`` is an exact
name. ``exclude_hints`` drops tools that declare a hint (``destructive=True``); a tool that
does not state the hint is kept.

Each entry must select something, or the configuration has a typo that would silently do
nothing: an entry that matches no tool, an unknown hint name and a tag that no tool of the
selected packs carries are ``ConfigError`` errors with the closest known names.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from fnmatch import fnmatchcase

from toolpacks.core._tool import Tool
from toolpacks.core.define._names import safe_name
from toolpacks.core.define._traits import ToolHints
from toolpacks.exceptions import ConfigError

__all__ = ["HINTS", "check_hints", "check_patterns", "check_tags", "matches", "tool_names"]

HINTS: tuple[str, ...] = tuple(f.name for f in fields(ToolHints))
"""The hint names ``exclude_hints`` takes: ``read_only``, ``destructive``, ..."""

_GLOB = frozenset("*?[")


def tool_names(qualified: str, tool: Tool, rename: Mapping[str, str]) -> tuple[str, str]:
    """The two names a selection entry is matched against: qualified, then exposed."""
    return qualified, rename.get(qualified) or safe_name(tool.scoped_name)


def matches(patterns: Iterable[str], names: Sequence[str]) -> bool:
    """Whether any pattern matches any of ``names`` (an exact name matches itself)."""
    return any(
        fnmatchcase(name, pattern) if not _GLOB.isdisjoint(pattern) else name == pattern
        for pattern in patterns
        for name in names
    )


def _hints(words: Iterable[str], known: Iterable[str]) -> str:
    candidates = list(known)
    found = [
        f"{word!r} → did you mean {close[0]!r}?"
        for word in words
        if (close := difflib.get_close_matches(word, candidates, n=1, cutoff=0.5))
    ]
    return f"; {'; '.join(found)}" if found else ""


def check_patterns(
    scope: str,
    key: str,
    patterns: Iterable[str],
    tools: Mapping[str, Mapping[str, Tool]],
    packs: Iterable[str],
    rename: Mapping[str, str],
) -> None:
    """Refuse ``key``'s entries that match no tool of the toolset.

    ``tools`` maps each loaded pack to its tools. An entry under a pack the host knows but
    the toolset does not hold (``files.*`` when ``files`` is disabled or not selected) is let
    through, so leaving a pack out never takes a toolset down.

    Raises:
        ConfigError: An entry that matches nothing, with the closest names.
    """
    known_packs = set(packs)
    names = [
        name
        for pack_tools in tools.values()
        for qualified, t in pack_tools.items()
        for name in tool_names(qualified, t, rename)
    ]
    unknown = []
    for pattern in sorted(set(patterns)):
        pack = pattern.split(".", 1)[0]
        if "." in pattern and _GLOB.isdisjoint(pack) and pack in known_packs - set(tools):
            continue
        if not matches((pattern,), names):
            unknown.append(pattern)
    if unknown:
        qualified = sorted(q for pack_tools in tools.values() for q in pack_tools)
        raise ConfigError(
            f"{scope}: {key} names unknown tool(s) {', '.join(unknown)}; use qualified "
            f"names 'pack.tool', exposed names or globs such as 'pack.*' (known in this "
            f"toolset: {', '.join(qualified) or 'none'}; packs: "
            f"{', '.join(sorted(known_packs)) or 'none'}){_hints(unknown, dict.fromkeys(names))}"
        )


def check_hints(scope: str, hints: Iterable[str]) -> None:
    """Refuse hint names ``exclude_hints`` does not know.

    Raises:
        ConfigError: The unknown names, the known ones and the closest.
    """
    unknown = sorted(set(hints) - set(HINTS))
    if unknown:
        raise ConfigError(
            f"{scope}: exclude_hints names unknown hint(s) "
            f"{', '.join(repr(h) for h in unknown)}; known hints: {', '.join(HINTS)}"
            f"{_hints(unknown, HINTS)}"
        )


def check_tags(scope: str, key: str, tags: Iterable[str], tools: Iterable[Tool]) -> None:
    """Refuse tags of ``key`` that none of ``tools`` carries.

    Raises:
        ConfigError: The tags no tool carries, the tags there are and the closest.
    """
    carried = sorted({tag for t in tools for tag in t.tags})
    unknown = sorted(set(tags) - set(carried))
    if unknown:
        raise ConfigError(
            f"{scope}: {key} names tag(s) {', '.join(repr(t) for t in unknown)} that no tool "
            f"of the selected packs carries (their tags: {', '.join(carried) or 'none'})"
            f"{_hints(unknown, carried)}"
        )


def declares(tool: Tool, hints: Iterable[str]) -> bool:
    """Whether ``tool`` states any of ``hints`` as true."""
    return any(getattr(tool.hints, hint, None) is True for hint in hints)
