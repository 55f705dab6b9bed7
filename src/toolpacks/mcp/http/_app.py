"""Serving toolsets over MCP streamable HTTP: ``http_app``.

One Starlette app serves any number of agents, each at ``/agents/NAME/mcp`` (and at ``/mcp``
when there is one), with ``GET /healthz`` and ``GET /metrics`` beside them. The MCP endpoints
use the official SDK's ``StreamableHTTPSessionManager`` in stateless mode with JSON replies:
no session lives on the server, so any worker or replica can answer any request. The SDK
routes each request by its ``MCP-Protocol-Version`` header: the 2025 revisions (an
``initialize`` handshake first) and 2026-07-28 (self-contained requests) are both served.

Before the SDK sees a request, this module checks, in order: ``Host`` and ``Origin``
(421, 403) and the bearer token (401), all on headers alone; the method (405, only ``POST``:
a stateless server has no stream to ``GET`` and no session to ``DELETE``); the body size
(413, from ``Content-Length`` when given, else while reading). The body is then parsed once:
a plain stateless ``tools/list`` or ``tools/call`` is answered from it directly
(``_direct.DirectRoute``: no SDK transport, runner or task group per request), in the SDK's
wire shapes for each revision. Anything else is decoded the way the stdio transport decodes
a line (``_wire.decode``): text that is not JSON-RPC is answered with the JSON-RPC error,
and a ``tools/call`` whose arguments repeat a key gets the same error result as over stdio,
since a parsed object can no longer show the repeat; the rest goes to the SDK. Every
``tools/call``, direct or through the SDK, runs through the same ``ToolAnswers`` as over
stdio: the argument gate, permissions, approvals, result caps and the handling of any
``BaseException`` a tool raises all apply.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolpacks.mcp.http import _connect as connect
from toolpacks.mcp.http._endpoint import Endpoint, json_response, rpc_error
from toolpacks.mcp.http._guard import Guard
from toolpacks.mcp.http._metrics import CallMetrics, observed
from toolpacks.mcp.http._sessions import sessions_for
from toolpacks.mcp.http._stream import StreamChooser

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.types import Receive, Scope, Send

    from toolpacks.host._host import Host

__all__ = ["DEFAULT_MAX_BODY_BYTES", "HttpServed", "build_http_app", "http_app"]

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
"""The largest request body accepted by default (4 MiB; tool arguments are capped at 1 MiB)."""

@dataclass(frozen=True, slots=True)
class HttpServed:
    """An app built by ``build_http_app``, with what the server around it needs to see."""

    app: Starlette
    """The ASGI app."""
    metrics: CallMetrics
    """Its counters (also served at ``/metrics``), and the calls running or cancelled."""
    agents: tuple[str, ...]
    """The agents it serves, in order."""


class EndpointRoute:
    """``/agents/{agent}/mcp``: the named agent's endpoint, or 404.

    Also ``/mcp`` when several agents are served: a 404 naming each agent's path.
    """

    def __init__(self, agents: dict[str, Endpoint]) -> None:
        self.agents = agents

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request to the agent named in the path."""
        name = scope.get("path_params", {}).get("agent", "")
        agent = self.agents.get(name)
        if agent is None:
            served = ", ".join(self.agents)
            message = f"Not Found: no agent {name!r} is served here (served: {served})"
            if not name:
                paths = ", ".join(f"/agents/{a}/mcp" for a in self.agents)
                message = f"Not Found: several agents are served here, each at its path: {paths}"
            await rpc_error(404, message)(scope, receive, send)
            return
        await agent(scope, receive, send)


def _agent_endpoint(
    name: str,
    host: Host,
    expose_errors: bool,
    guard: Guard,
    metrics: CallMetrics,
    max_body_bytes: int,
) -> Endpoint:
    """Build the agent's toolset and its SDK server (errors here happen before serving)."""
    from mcp.server import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from toolpacks._version import __version__
    from toolpacks.mcp._offered_sdk import accept_log_level, offered_handlers
    from toolpacks.mcp._server import _policy_toolset, _ToolsetServer
    from toolpacks.mcp.http._direct import DirectRoute
    from toolpacks.mcp.http.auth._views import PrincipalViews

    toolset = host.toolset(name)
    handlers = _ToolsetServer(_policy_toolset(toolset, expose_errors, None), expose_errors)
    schemas = {d["name"]: d["inputSchema"] for d in handlers.definitions}
    views = PrincipalViews(name, handlers, metrics, f"toolpacks:{name}")
    server = Server(
        f"toolpacks:{name}",
        version=__version__,
        on_list_tools=views.list_tools,
        on_call_tool=observed(name, handlers.names, views.call_tool, metrics),
        get_tool_input_schema=schemas.get,
        **offered_handlers(handlers.toolset.catalog, expose_errors),
    )
    accept_log_level(server)
    manager = StreamableHTTPSessionManager(
        server, stateless=True, json_response=True, max_request_body_size=max_body_bytes
    )
    endpoint = Endpoint(name, handlers, manager, guard, metrics, max_body_bytes)
    endpoint.direct = views.direct = DirectRoute(name, handlers, metrics, f"toolpacks:{name}")
    endpoint.views = views
    endpoint.chooser = StreamChooser(handlers.toolset)
    endpoint.streaming = StreamableHTTPSessionManager(
        server, stateless=True, json_response=False, max_request_body_size=max_body_bytes
    )
    endpoint.sessions = sessions_for(host, server, max_body_bytes)
    return endpoint


def _check_agents(agents: Sequence[str]) -> tuple[str, ...]:
    if isinstance(agents, str):
        raise TypeError(f"agents is a list of agent names, not one string: use [{agents!r}]")
    names = tuple(agents)
    if not names:
        raise ValueError("name at least one agent to serve (the [agents.NAME] tables)")
    for name in names:
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"{name!r} is not an agent name")
        if names.count(name) > 1:
            raise ValueError(f"agent {name!r} is named more than once")
    return names


def build_http_app(
    host: Host,
    agents: Sequence[str],
    token: str | None = None,
    *,
    allowed_origins: Sequence[str] | None = None,
    allowed_hosts: Sequence[str] | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    expose_errors: bool = False,
) -> HttpServed:
    """``http_app``, with its counters and agent names (for ``serve_http``)."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    names = _check_agents(agents)
    if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int):
        raise TypeError("max_body_bytes is a number of bytes (an int)")
    if max_body_bytes <= 0:
        raise ValueError(f"max_body_bytes must be positive, not {max_body_bytes}")
    from toolpacks.mcp._state_seal import share_key
    from toolpacks.mcp.http.auth._wiring import authenticator, metadata_routes

    share_key()  # requestState: any worker opens a state another sealed (connect.key)
    auth = authenticator(host, names, token)
    guard = Guard(None, allowed_hosts, allowed_origins)  # tokens: ``auth``
    expose = expose_errors or host.config.config.settings.expose_errors
    metrics = CallMetrics()
    endpoints = {
        name: _agent_endpoint(name, host, expose, guard, metrics, max_body_bytes) for name in names
    }
    for endpoint in endpoints.values():
        endpoint.auth = auth

    async def healthz(request: Request) -> Response:
        problems = [p for p in (e.problem() for e in endpoints.values()) if p]
        if problems:
            body = {"status": "unavailable", "agents": list(names), "reasons": problems}
            return json_response(503, body)
        return json_response(200, {"status": "ok", "agents": list(names)})

    async def metrics_endpoint(request: Request) -> Response:
        from starlette.responses import PlainTextResponse

        refusal = guard.check(dict(request.scope["headers"]))
        if refusal is None:
            refusal = (await auth.identify(None, request.scope))[1]
        if refusal is not None:
            metrics.refuse(refusal.reason)
            return rpc_error(refusal.status, refusal.message, refusal.headers)
        return PlainTextResponse(metrics.render(), media_type="text/plain; version=0.0.4")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for endpoint in endpoints.values():
                await stack.enter_async_context(endpoint.manager.run())
                for extra in (endpoint.streaming, endpoint.sessions):
                    if extra is not None:
                        await stack.enter_async_context(extra.run())
                endpoint.started = True
            try:
                yield
            finally:
                for endpoint in endpoints.values():
                    endpoint.started = False

    routes = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/metrics", metrics_endpoint, methods=["GET"]),
        Route("/agents/{agent}/mcp", EndpointRoute(endpoints)),
        *metadata_routes(auth, names),
        *connect.connect_routes(host, [e.handlers.toolset for e in endpoints.values()]),
    ]
    if len(endpoints) == 1:
        routes.append(Route("/mcp", next(iter(endpoints.values()))))
    else:  # which agent would it be? The 404 says where each one is
        routes.append(Route("/mcp", EndpointRoute(endpoints)))
    app = Starlette(routes=routes, lifespan=lifespan)
    return HttpServed(app, metrics, names)


def http_app(
    host: Host,
    agents: Sequence[str],
    token: str | None = None,
    *,
    allowed_origins: Sequence[str] | None = None,
    allowed_hosts: Sequence[str] | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    expose_errors: bool = False,
) -> Starlette:
    """An ASGI app serving the agents' toolsets over MCP streamable HTTP (stateless).

    Each agent is at ``/agents/NAME/mcp``, and at ``/mcp`` when it is the only one;
    ``GET /healthz`` answers ``{"status": "ok", "agents": [...]}`` without a token, and
    ``GET /metrics`` gives Prometheus counters of this process. Run it under any ASGI server
    (``uvicorn.run(app)``), or mount it in a Starlette or FastAPI app and enter its lifespan
    (``app.router.lifespan_context(app)``) in yours. The toolsets are built here, so an
    unknown agent or a pack that failed fails now, not at the first request.

    Args:
        host: The host whose configuration defines the agents (``[agents.NAME]``). The app
            does not close it.
        agents: The agents to serve, at least one.
        token: When set, every MCP and metrics request needs ``Authorization: Bearer
            <token>`` (401 otherwise; compared in constant time). Without one, anyone who
            can reach the server can call every tool: serve on a loopback address only.
        allowed_origins: ``Origin`` headers accepted (requests without one always are);
            default: pages served from this machine (``http://localhost:*`` and the like).
            Patterns: an exact origin, ``scheme://host:*`` for any port, ``"*"`` for any.
        allowed_hosts: ``Host`` headers accepted; default: loopback names with any port
            (``localhost:*``, ``127.0.0.1:*``, ``[::1]:*``). Behind a load balancer, list
            the names clients use (``"tools.example.com"``), or ``["*"]`` when a token
            protects the server.
        max_body_bytes: The largest request body accepted (413 beyond it, before parsing).
        expose_errors: Send a failing tool's exception text to clients (trusted development
            only); also on when the configuration's ``[settings] expose_errors`` is true.

    Raises:
        ConfigError: An agent is not defined by the configuration.
        PackError: A pack an agent names failed to load.
        ValueError: No agent, an agent named twice, an unusable token, or a body limit that
            is not positive.
    """
    return build_http_app(
        host,
        agents,
        token,
        allowed_origins=allowed_origins,
        allowed_hosts=allowed_hosts,
        max_body_bytes=max_body_bytes,
        expose_errors=expose_errors,
    ).app
