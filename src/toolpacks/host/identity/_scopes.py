"""Which scopes each exposed tool of a toolset needs, evaluated in one place.

A tool needs the scopes it declares (``@tool(scopes=[...])``, ``scopes:`` in TOOL.md) plus
those of every ``[agents.NAME.tool_scopes]`` glob matching its exposed or qualified name;
the agent itself needs ``[agents.NAME] scopes`` for anything at all. The table is built
once per toolset and read by every road: calls, listings, exports, search and the servers.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from toolpacks.core._principal import Principal, scopes_of
from toolpacks.exceptions import ConfigError

__all__ = ["ScopeTable", "scope_table"]

_NONE: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ScopeTable:
    """The scopes a toolset's agent and each of its exposed tools need."""

    agent: frozenset[str] = _NONE
    """Needed to reach the agent at all (``[agents.NAME] scopes``)."""
    tools: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Exposed name to the scopes the tool needs (only tools that need some)."""

    def needs(self, exposed: str) -> frozenset[str]:
        """The scopes the tool exposed as ``exposed`` needs (the agent's not included)."""
        return self.tools.get(exposed, _NONE)

    def refusal(self, exposed: str | None, principal: Principal | None) -> tuple[str, str] | None:
        """``(reason, message)`` when ``principal`` may not call ``exposed``, else None.

        ``exposed`` None checks the agent only. The reason is ``agent_scope`` or
        ``missing_scope``; the message names each missing scope, or says there is no principal.
        """
        granted = principal.scopes if principal is not None else _NONE
        for reason, needed, what in (
            ("agent_scope", self.agent, "This agent"),
            ("missing_scope", self.needs(exposed) if exposed else _NONE, f"Tool '{exposed}'"),
        ):
            if needed and not needed <= granted:
                if principal is None:
                    return reason, (
                        f"{what} needs scopes {', '.join(sorted(needed))} and the call has no "
                        "principal (no principal: pass ToolContext(principal=...) or use "
                        "Toolset.for_principal)"
                    )
                lacking = ", ".join(sorted(needed - granted))
                return reason, (
                    f"{what} needs scopes that {principal.subject!r} was not granted: "
                    f"missing scope {lacking}. Do not retry it."
                )
        return None

    def allows(self, exposed: str, granted: frozenset[str]) -> bool:
        """Whether scopes ``granted`` reach the agent and the tool exposed as ``exposed``."""
        return self.agent <= granted and self.needs(exposed) <= granted


def _globs(where: str, tool_scopes: Mapping[str, Iterable[str] | str]) -> dict[str, frozenset[str]]:
    checked: dict[str, frozenset[str]] = {}
    for glob, scopes in tool_scopes.items():
        try:
            found = scopes_of(scopes, glob)
        except Exception as exc:  # ToolDefinitionError: say it as a configuration error
            raise ConfigError(f"{where}: tool_scopes {glob!r}: {exc}") from None
        if not found:
            raise ConfigError(
                f"{where}: tool_scopes {glob!r} lists no scope; give at least one "
                f'("{glob}" = ["repo.write"]) or remove the line'
            )
        checked[glob] = found
    return checked


def scope_table(
    entries: Iterable[Any],
    *,
    agent_scopes: Iterable[str] | str = (),
    tool_scopes: Mapping[str, Iterable[str] | str] | None = None,
    where: str = "toolset",
) -> ScopeTable:
    """The table of a toolset's ``ToolEntry``s, with the agent's ``scopes`` and ``tool_scopes``.

    Raises:
        ConfigError: A scope that is not a non-empty string without spaces, a glob with no
            scope, or a ``tool_scopes`` glob matching no exposed or qualified name (with the
            closest names).
    """
    try:
        agent = scopes_of(agent_scopes, where)
    except Exception as exc:
        raise ConfigError(f"{where}: scopes: {exc}") from None
    globs = _globs(where, tool_scopes or {})
    entries = list(entries)
    used: set[str] = set()
    needs: dict[str, frozenset[str]] = {}
    for entry in entries:
        needed = set(entry.tool.scopes)
        for glob, scopes in globs.items():
            if fnmatchcase(entry.exposed, glob) or fnmatchcase(entry.qualified, glob):
                needed |= scopes
                used.add(glob)
        if needed:
            needs[entry.exposed] = frozenset(needed)
    unused = sorted(set(globs) - used)
    if unused:
        names = [n for e in entries for n in (e.exposed, e.qualified)]
        hints = [
            f"{glob!r} → did you mean {close[0]!r}?"
            for glob in unused
            if (close := difflib.get_close_matches(glob, names, n=1, cutoff=0.5))
        ]
        raise ConfigError(
            f"{where}: tool_scopes names unknown tool(s) {', '.join(unused)}; use qualified "
            f"names 'pack.tool', exposed names or globs such as 'pack.*' (known in this "
            f"toolset: {', '.join(sorted(e.qualified for e in entries)) or 'none'})"
            + (f"; {'; '.join(hints)}" if hints else "")
        )
    return ScopeTable(agent, needs)
