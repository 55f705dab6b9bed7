"""Each principal's view of an agent: what ``tools/list`` shows it and what it may call.

The HTTP app answers every request with the toolset of the request's principal
(``Toolset.for_principal``), on the direct route and on the SDK road alike: a tool the
principal lacks scopes for is not listed, and the principal travels into each call's
``ToolContext``. A call of a tool the agent has goes to the agent's own answers with the
principal in its context, so a tool the principal may not call is refused by the toolset's
scope check with an error result naming the missing scope (not reported unknown); a name
the agent does not have is answered by the view, whose message lists only what the
principal may call. Views are kept per principal (the most recent 256), so a client
making many requests pays for its view once.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from toolpacks.mcp._direct import SERVED_PRINCIPAL

if TYPE_CHECKING:
    import mcp_types

    from toolpacks.core._principal import Principal
    from toolpacks.mcp._server import _ToolsetServer
    from toolpacks.mcp.http._direct import DirectRoute
    from toolpacks.mcp.http._metrics import CallMetrics

__all__ = ["PRINCIPAL_KEY", "PrincipalViews", "request_principal"]

PRINCIPAL_KEY = "toolpacks.principal"
"""The key of the ASGI scope holding the request's principal (set by the app's checks)."""
VIEWS_KEPT = 256


def request_principal(ctx: Any) -> Principal | None:
    """The principal of the HTTP request an SDK handler is answering (None: none)."""
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None)
    if not isinstance(scope, dict):
        return None
    principal: Principal | None = scope.get(PRINCIPAL_KEY)
    return principal


class PrincipalViews:
    """The answers of one agent's endpoint for each principal."""

    def __init__(
        self, agent: str, base: _ToolsetServer, metrics: CallMetrics, server_name: str
    ) -> None:
        self.agent = agent
        self.base = base
        self.metrics = metrics
        self.server_name = server_name
        self.direct: DirectRoute | None = None
        """The direct route of requests without a principal."""
        self._views: OrderedDict[Principal, tuple[_ToolsetServer, DirectRoute | None]] = (
            OrderedDict()
        )

    def _view(self, principal: Principal) -> tuple[_ToolsetServer, DirectRoute | None]:
        from toolpacks.mcp._server import _ToolsetServer
        from toolpacks.mcp.http._direct import DirectRoute

        view = self._views.get(principal)
        if view is not None:
            self._views.move_to_end(principal)
            return view
        narrow = getattr(self.base.toolset, "for_principal", None)
        if narrow is None:  # the toolset has no scopes to apply: one view for everyone
            view = (self.base, self.direct)
        else:
            handlers = _ToolsetServer(narrow(principal), self.base.expose_errors)
            direct = DirectRoute(self.agent, handlers, self.metrics, self.server_name)
            view = (handlers, direct)
        self._views[principal] = view
        if len(self._views) > VIEWS_KEPT:
            self._views.popitem(last=False)
        return view

    def handlers_for(self, principal: Principal | None) -> _ToolsetServer:
        """The answers for ``principal`` (the agent's own without one)."""
        return self.base if principal is None else self._view(principal)[0]

    def direct_for(self, principal: Principal | None, value: Any = None) -> DirectRoute | None:
        """The direct route for ``principal``'s request ``value`` (parsed JSON-RPC)."""
        if principal is None or _calls_known(value, self.base.names):
            return self.direct
        return self._view(principal)[1]

    async def list_tools(
        self, ctx: Any, params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        """The SDK's ``tools/list`` handler, for the request's principal."""
        return await self.handlers_for(request_principal(ctx)).list_tools(ctx, params)

    async def call_tool(
        self, ctx: Any, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        """The SDK's ``tools/call`` handler, for the request's principal (in its context)."""
        principal = request_principal(ctx)
        reset = SERVED_PRINCIPAL.set(principal)
        known = params.name in self.base.names
        try:
            return await self.handlers_for(None if known else principal).call_tool(ctx, params)
        finally:
            SERVED_PRINCIPAL.reset(reset)


def _calls_known(value: Any, names: frozenset[str]) -> bool:
    """Whether ``value`` is a ``tools/call`` of a tool the agent has."""
    if type(value) is not dict or value.get("method") != "tools/call":
        return False
    params = value.get("params")
    return type(params) is dict and params.get("name") in names
