"""``Toolset.for_principal``: a principal's view of a toolset, and the check every call passes.

A view shares its parent's tools, options and hooks; it keeps only the entries the
principal's scopes reach (filtered once per distinct scope set and cached in the parent),
so its ``names()``, ``definitions()``, ``search()`` and MCP listings show only what the
principal may call. Its calls carry the principal in their context when the caller passed
none; a context naming another principal is refused (a view never acts for someone else).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping
from dataclasses import replace
from itertools import compress
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolpacks.core._context import ToolContext
    from toolpacks.core._principal import Principal
    from toolpacks.core._result import ToolResult
    from toolpacks.host.identity._scopes import ScopeTable
    from toolpacks.host.search._index import SearchHit

__all__ = ["ScopedToolset"]

_VIEWS_KEPT = 64


class ScopedToolset:
    """The identity side of ``Toolset``: scopes, principals' views, audit."""

    principal: Principal | None = None
    """The principal this toolset is the view of (``for_principal``); None for a toolset."""
    _scope_table: ScopeTable | None = None
    _scoped_views: dict[frozenset[str] | None, tuple[dict[str, Any], dict[str, Any]]] | None = None
    _view_of: Any = None
    _scope_index: Any = None

    agent: str | None

    def set_scopes(
        self,
        agent_scopes: Any = (),
        tool_scopes: Mapping[str, Any] | None = None,
        *,
        where: str = "toolset",
    ) -> None:
        """Require ``agent_scopes`` for every call and add ``tool_scopes`` globs' scopes.

        Raises:
            ConfigError: A bad scope, or a glob matching no tool (see ``scope_table``).
        """
        from toolpacks.host.identity._scopes import scope_table

        self._scope_table = scope_table(
            _entries(self).values(), agent_scopes=agent_scopes, tool_scopes=tool_scopes, where=where
        )
        self._scoped_views = None

    @property
    def scope_table(self) -> ScopeTable:
        """Which scopes the agent and each exposed tool need (built once, on first use)."""
        if self._scope_table is None:
            from toolpacks.host.identity._scopes import scope_table as build

            self._scope_table = build(_entries(self).values())
        return self._scope_table

    def for_principal(self, principal: Principal | None) -> Any:
        """The view of this toolset for ``principal``: only what it may call, calls as it.

        Cheap: the entries are filtered once per distinct scope set (the last 64 kept);
        tools, definitions and the search index are the parent's. ``None`` gives the view of
        a caller without principal (tools needing no scope, if the agent needs none).
        Calls through the view put ``principal`` in their context when none is passed; a
        context naming another principal is refused.
        """
        parent: Any = self._view_of if self._view_of is not None else self
        table = parent.scope_table
        key = principal.scopes if principal is not None else None
        views = parent._scoped_views
        if views is None:
            views = parent._scoped_views = {}
        kept = views.get(key)
        if kept is None:
            granted = key or frozenset()
            if not table.agent <= granted:
                kept = ({}, {})
            elif not table.tools:
                kept = (parent._entries, parent._by_qualified)
            else:
                kept = _filtered(parent, table, granted)
            if len(views) >= _VIEWS_KEPT:
                views.pop(next(iter(views)))
            views[key] = kept
        view: Any = copy.copy(parent)
        view._entries, view._by_qualified = kept
        view._view_of = parent
        view.principal = principal
        return view

    def hides(self, name: str) -> bool:
        """Whether ``name`` is a tool of the parent toolset this principal's view leaves out.

        A server answers a call of such a tool with the toolset's refusal (naming the missing
        scopes) rather than as an unknown tool.
        """
        parent = self._view_of
        if parent is None or name in _entries(self):
            return False
        return name in parent._entries or name in parent._by_qualified

    def _view_search(self, query: str, limit: int, mode: str) -> list[SearchHit]:
        """Search of a view: the parent's index, keeping hits the principal may call."""
        parent = self._view_of
        mine = _entries(self)
        if len(mine) == len(parent._entries):
            return parent.search(query, limit=limit, mode=mode)  # type: ignore[no-any-return]
        if not mine:
            parent.search(query, limit=1, mode=mode)  # the same errors for a bad query
            return []
        wide = parent.search(query, limit=max(limit, len(parent._entries)), mode=mode)
        return [hit for hit in wide if hit.exposed in mine][:limit]

    async def _checked_call(self, name: str, arguments: Any, ctx: ToolContext) -> ToolResult:
        """The scope checks, then the call; one audit record either way."""
        from toolpacks.core._result import error_result
        from toolpacks.host.identity._audit import audit_call

        t0 = time.perf_counter()
        if self._view_of is not None:
            if ctx.principal is None:
                ctx = replace(ctx, principal=self.principal, caller_identity=None)
            elif ctx.principal != self.principal:
                message = (
                    "The call's context names another principal than this toolset's view "
                    f"(for_principal({self.principal!r})); call through that principal's own "
                    "view, or pass no principal"
                )
                result = error_result("denied", message, tool_name=name, call_id=ctx.call_id)
                audit_call(self.agent, _subject(ctx), name, result, 0.0, reason="policy_denied")
                return result
        parent: Any = self._view_of if self._view_of is not None else self
        table = parent.scope_table
        entry = parent._entries.get(name) or parent._by_qualified.get(name)
        refusal = table.refusal(entry.exposed if entry is not None else None, ctx.principal)
        if refusal is not None:
            reason, message = refusal
            result = error_result("denied", message, tool_name=name, call_id=ctx.call_id)
            audit_call(self.agent, _subject(ctx), name, result, 0.0, reason=reason)
            return result
        result = await self._call(name, arguments, ctx)  # type: ignore[attr-defined]
        audit_call(self.agent, _subject(ctx), name, result, time.perf_counter() - t0)
        return result  # type: ignore[no-any-return]


def _entries(toolset: Any) -> dict[str, Any]:
    entries: dict[str, Any] = toolset._entries
    return entries


def _subject(ctx: ToolContext) -> str | None:
    return ctx.principal.subject if ctx.principal is not None else None


def _filtered(
    parent: Any, table: ScopeTable, granted: frozenset[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The entries (and by qualified name) whose scopes ``granted`` holds, in order.

    The tools of a toolset need few distinct scope sets; each entry's set is numbered once
    per toolset (kept in the parent), so a new principal's view tests each distinct set
    once and picks its entries with one C-level pass (``compress``): about a millisecond
    for 10^4 tools.
    """
    index = parent._scope_index
    if index is None or index[0] is not parent._entries:
        needs = table.tools.get
        numbers: dict[frozenset[str], int] = {}
        ids = [numbers.setdefault(needs(n, frozenset()), len(numbers)) for n in parent._entries]
        items = list(parent._entries.items())
        qualified = [(e.qualified, e) for _, e in items]
        index = parent._scope_index = (parent._entries, items, qualified, ids, list(numbers))
    _, items, qualified, ids, distinct = index
    allowed = {i for i, need in enumerate(distinct) if granted.issuperset(need)}
    mask = list(map(allowed.__contains__, ids))
    return dict(compress(items, mask)), dict(compress(qualified, mask))
