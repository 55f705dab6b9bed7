"""Which tools an agent's selection keeps: name globs, behaviour hints, and the checks on them.

``tools`` (allow) and ``exclude`` (deny) entries are globs (``fnmatch``, case-sensitive) over
a tool's qualified name (``files.read_text``) and the name the model would see before any
conflict is resolved (its rename, else its tool name); an entry without ``*?[`` is an exact
name. Hints resolve by MCP's defaults (``resolved_hints``): a hint a tool does not state is
``destructive`` unless the tool is ``read_only``, ``open_world``, and neither ``read_only``
nor ``idempotent``. ``exclude_hints`` drops the tools whose hints resolve to any of its
names (so ``["destructive"]`` drops a tool that states nothing); ``require_hints`` keeps only
the tools whose hints resolve to every one of its names.

``left_out_by`` names the key that leaves a tool out, for ``toolpacks toolset`` and for the
answer to a call of it; a tool hidden for who is asking (``allowed_agents``, scopes) is never
explained there.

Each entry must select something, or the configuration has a typo that would silently do
nothing: an entry that matches no tool, an unknown hint name and a tag that no tool of the
selected packs carries are ``ConfigError`` errors with the closest known names.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields
from fnmatch import fnmatchcase
from typing import Protocol

from toolpacks.core._tool import Tool
from toolpacks.core.define._names import safe_name
from toolpacks.core.define._traits import ToolHints
from toolpacks.exceptions import ConfigError

__all__ = [
    "HINTS",
    "check_aliased",
    "check_hints",
    "check_patterns",
    "check_tags",
    "left_out_by",
    "matches",
    "resolved_hints",
    "tool_names",
]

HINTS: tuple[str, ...] = tuple(f.name for f in fields(ToolHints))
"""The hint names ``exclude_hints`` and ``require_hints`` take: ``read_only``, ..."""

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


def check_aliased(
    scope: str,
    key: str,
    names: Iterable[str],
    loaded: Iterable[str],
    bases: Mapping[str, str | None],
) -> None:
    """Refuse entries under a pack this toolset holds only under an alias.

    ``[packs.other] use = "files"`` with ``packs = ["other"]`` gives tools named
    ``other.*``: an entry ``files.delete`` would apply to nothing (an exclusion or an
    approval silently dropped), so it is an error naming the alias's name for it.

    Raises:
        ConfigError: The entry, the alias and the name to write.
    """
    held = set(loaded)
    for name in sorted(set(names)):
        pack, dot, rest = name.partition(".")
        if not dot or pack in held or not _GLOB.isdisjoint(pack):
            continue
        aliases = sorted(a for a in held if bases.get(a) == pack)
        if aliases:
            raise ConfigError(
                f"{scope}: {key} names {name!r}, but pack {pack!r} is in this toolset only "
                f"as {', '.join(repr(a) for a in aliases)}, so it would apply to nothing; "
                f"write {f'{aliases[0]}.{rest}'!r}"
            )


def check_hints(scope: str, hints: Iterable[str], key: str = "exclude_hints") -> None:
    """Refuse hint names ``key`` (``exclude_hints``, ``require_hints``) does not know.

    Raises:
        ConfigError: The unknown names, the known ones and the closest.
    """
    unknown = sorted(set(hints) - set(HINTS))
    if unknown:
        raise ConfigError(
            f"{scope}: {key} names unknown hint(s) "
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


def resolved_hints(tool: Tool) -> dict[str, bool]:
    """``tool``'s hints with MCP's defaults for the ones it does not state.

    ``read_only`` and ``idempotent`` default to false, ``open_world`` to true, and
    ``destructive`` to true unless the tool is read-only (a read-only tool destroys nothing).
    """
    h = tool.hints
    read_only = h.read_only is True
    destructive = (not read_only) if h.destructive is None else (h.destructive and not read_only)
    return {
        "read_only": read_only,
        "destructive": destructive,
        "idempotent": h.idempotent is True,
        "open_world": h.open_world is not False,
    }


def declares(tool: Tool, hints: Iterable[str]) -> bool:
    """Whether ``tool``'s hints resolve (``resolved_hints``) to true for any of ``hints``."""
    resolved = resolved_hints(tool)
    return any(resolved.get(hint, False) for hint in hints)


class Selecting(Protocol):
    """The keys of an agent's selection ``left_out_by`` reads (a ``ToolsetRequest``)."""

    @property
    def include_tags(self) -> frozenset[str]: ...
    @property
    def exclude_tags(self) -> frozenset[str]: ...
    @property
    def exclude(self) -> frozenset[str]: ...
    @property
    def tools(self) -> frozenset[str]: ...
    @property
    def exclude_hints(self) -> frozenset[str]: ...
    @property
    def require_hints(self) -> frozenset[str]: ...
    @property
    def rename(self) -> Mapping[str, str]: ...
    @property
    def predicate(self) -> Callable[[Tool], bool] | None: ...


def left_out_by(request: Selecting, qualified: str, tool: Tool) -> str | None:
    """The key that leaves ``tool`` out of the selection, or None when it is kept.

    In the order they apply: ``include_tags``, ``exclude_tags``, ``exclude_hints``,
    ``require_hints``, ``exclude`` (which wins over ``tools``), ``tools``, ``predicate``.
    """
    if request.include_tags and request.include_tags.isdisjoint(tool.tags):
        return "include_tags"
    if not request.exclude_tags.isdisjoint(tool.tags):
        return "exclude_tags"
    if request.exclude_hints or request.require_hints:
        resolved = resolved_hints(tool)
        if any(resolved[h] for h in request.exclude_hints if h in resolved):
            return "exclude_hints"
        if not all(resolved.get(h, False) for h in request.require_hints):
            return "require_hints"
    if request.exclude or request.tools:
        names = tool_names(qualified, tool, request.rename)
        if matches(request.exclude, names):
            return "exclude"
        if request.tools and not matches(request.tools, names):
            return "tools"
    if request.predicate is not None and not request.predicate(tool):
        return "predicate"
    return None
