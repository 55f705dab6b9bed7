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
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolpacks.mcp.http import _connect as connect
from toolpacks.mcp.http._guard import Guard, Refusal, media_answer
from toolpacks.mcp.http._metrics import CallMetrics, observed
from toolpacks.mcp.http._sessions import sessions_for
from toolpacks.mcp.http._stream import StreamChooser, unless_gone

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.types import Message, Receive, Scope, Send

    from toolpacks.host._host import Host
    from toolpacks.mcp._server import _ToolsetServer
    from toolpacks.mcp.http._direct import DirectRoute
    from toolpacks.mcp.http.auth._gate import Authenticator
    from toolpacks.mcp.http.auth._views import PrincipalViews

__all__ = ["DEFAULT_MAX_BODY_BYTES", "HttpServed", "build_http_app", "http_app"]

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
"""The largest request body accepted by default (4 MiB; tool arguments are capped at 1 MiB)."""

_UNKNOWN: Any = object()
_NOT_STARTED = (
    "this toolpacks MCP app has not been started: its lifespan did not run. When you mount it "
    "in another ASGI app, enter `app.router.lifespan_context(app)` in that app's lifespan."
)


@dataclass(frozen=True, slots=True)
class HttpServed:
    """An app built by ``build_http_app``, with what the server around it needs to see."""

    app: Starlette
    """The ASGI app."""
    metrics: CallMetrics
    """Its counters (also served at ``/metrics``), and the calls running or cancelled."""
    agents: tuple[str, ...]
    """The agents it serves, in order."""


def _json_response(status: int, body: Any, headers: Sequence[tuple[str, str]] = ()) -> Response:
    from starlette.responses import Response

    return Response(
        json.dumps(body, separators=(",", ":")),
        status_code=status,
        headers=dict(headers),
        media_type="application/json",
    )


def _rpc_error(status: int, message: str, headers: Sequence[tuple[str, str]] = ()) -> Response:
    """A JSON-RPC error (id null) with an HTTP status; MCP clients show its message."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    return _json_response(status, body, headers)


class _Agent:
    """The MCP endpoint of one agent: checks, body, duplicate keys, then the SDK."""

    def __init__(
        self,
        name: str,
        handlers: _ToolsetServer,
        manager: StreamableHTTPSessionManager,
        guard: Guard,
        metrics: CallMetrics,
        max_body_bytes: int,
    ) -> None:
        self.name = name
        self.handlers = handlers
        self.manager = manager
        self.guard = guard
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes
        self.started = False
        self.direct: DirectRoute | None = None
        """Answers plain stateless ``tools/list`` and ``tools/call`` without the SDK's
        per-request machinery (None: every request goes to the SDK)."""
        self.streaming: StreamableHTTPSessionManager | None = None
        """Answers calls that listen for progress or logs, on an SSE reply (``_stream``)."""
        self.chooser: StreamChooser | None = None
        """Decides which calls go to ``streaming``."""
        self.auth: Authenticator | None = None
        """Who is calling (``auth/_gate``): a principal, or a 401 / 403 before any routing."""
        self.views: PrincipalViews | None = None
        """Each principal's answers (``auth/_views``)."""
        self.sessions: StreamableHTTPSessionManager | None = None  # http_sessions: all requests

    def problem(self) -> str:
        """Why this endpoint cannot serve now, or ``""`` when it can (for ``/healthz``).

        The SDK's session manager runs every request in one task group: once that group is
        cancelled (a ``BaseException`` escaping a request does it) or gone, every request to
        this endpoint fails until the process is restarted.
        """
        if not self.started:
            return f"agent {self.name}: the MCP session manager is not running"
        # A private attribute of the SDK: when a release renames it, only this check is lost.
        group = getattr(self.manager, "_task_group", _UNKNOWN)
        if group is None:
            return f"agent {self.name}: the MCP session manager has stopped"
        if group is not _UNKNOWN and group.cancel_scope.cancel_called:
            return f"agent {self.name}: the MCP session manager's task group was cancelled"
        return ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one HTTP request to this agent's MCP endpoint."""
        headers = dict(scope["headers"])
        refusal = self.guard.check(headers)
        if refusal is not None:
            await self._refuse(refusal, scope, receive, send)
            return
        principal = None
        if self.auth is not None:
            principal, refusal = await self.auth.identify(self.name, scope)
            if refusal is not None:
                await self._refuse(refusal, scope, receive, send)
                return
            scope["toolpacks.principal"] = principal  # auth/_views.PRINCIPAL_KEY
            connect.enter(scope)  # the base of connect URLs (oauth2 credentials)
        if self.sessions is not None:  # stateful: GET, DELETE and every POST go to the SDK
            await self.sessions.handle_request(scope, receive, send)
            return
        if scope["method"] != "POST":
            refusal = Refusal(
                405,
                "method",
                "Method Not Allowed: this stateless MCP endpoint answers POST only",
                (("Allow", "POST"),),
            )
            await self._refuse(refusal, scope, receive, send)
            return
        body = await self._body(scope, receive, send, headers)
        if body is None:
            return
        streams = self.chooser is not None and self.chooser.wants_stream(body, scope["headers"])
        direct = not streams and self.direct is not None and self.started
        if direct and await self._direct(body, scope, send, principal, receive):
            return
        answered = await self._answer_directly(body, scope, receive, send)
        if answered:
            return
        if not self.started:
            await _rpc_error(503, _NOT_STARTED)(scope, receive, send)
            return
        manager = self.streaming if streams and self.streaming is not None else self.manager
        await manager.handle_request(scope, _replay(body, receive), send)

    async def _direct(
        self, body: bytes, scope: Scope, send: Send, principal: Any = None, receive: Any = None
    ) -> bool:
        """Answer a plain stateless ``tools/list`` or ``tools/call`` from the parsed body.

        Parsed once, here; whatever ``DirectRoute.route`` does not take (and anything with a
        repeated key or that is not JSON) goes on to the checks below and the SDK.
        """
        from toolpacks.mcp._direct import SERVED_PRINCIPAL
        from toolpacks.mcp._wire import parse_body

        value = parse_body(body)
        route = self.direct if self.views is None else self.views.direct_for(principal, value)
        if value is None or route is None:
            return False
        version = route.route(scope["headers"], value)
        if version is None:
            return False
        reset = SERVED_PRINCIPAL.set(principal)
        try:
            answer = route.answer(value, version, send)
            if receive is not None and version != "legacy" and value["method"] == "tools/call":
                await unless_gone(answer, receive)  # 2026-07-28: closing the stream cancels
            else:
                await answer
        finally:
            SERVED_PRINCIPAL.reset(reset)
        return True

    async def _refuse(self, refusal: Refusal, scope: Scope, receive: Receive, send: Send) -> None:
        self.metrics.refuse(refusal.reason)
        await _rpc_error(refusal.status, refusal.message, refusal.headers)(scope, receive, send)

    async def _body(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[bytes, bytes]
    ) -> bytes | None:
        """The whole body, or None once the request is answered (too large) or abandoned."""
        limit = self.max_body_bytes
        too_large = Refusal(
            413,
            "too_large",
            f"Request body too large: the limit is {limit} bytes",
        )
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._refuse(too_large, scope, receive, send)
            return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None  # the client went away
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await self._refuse(too_large, scope, receive, send)
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _answer_directly(
        self, body: bytes, scope: Scope, receive: Receive, send: Send
    ) -> bool:
        """Answer a body that is not JSON-RPC, or repeats a key, as the stdio server would."""
        from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS

        from toolpacks.mcp._wire import Answer, decode, error_message
        called: list[str] = []

        def answer_duplicate(name: str, key: str) -> dict[str, Any]:
            called.append(name)
            return self.handlers.duplicate_key(name, key)

        decoded = decode(body, answer_duplicate) if body.strip() else None
        if decoded is None:
            message = error_message(-32700, "Parse error: the request body is empty")
        elif isinstance(decoded, Answer):
            message = decoded.message
        else:
            return False
        if called:
            tool = called[0] if called[0] in self.handlers.names else ""
            outcome = "error" if tool else "unknown_tool"
            self.metrics.record(self.name, tool, outcome, 0.0)
        status = 200
        if "error" in message:
            status = ERROR_CODE_HTTP_STATUS.get(message["error"]["code"], 200)
        refused = media_answer(scope["headers"])  # the SDK checks these before the body
        await (refused or _json_response(status, message))(scope, receive, send)
        return True


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` (already read) first, then what the client sends."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class _AgentRoute:
    """``/agents/{agent}/mcp``: the named agent's endpoint, or 404.

    Also ``/mcp`` when several agents are served: a 404 naming each agent's path.
    """

    def __init__(self, agents: dict[str, _Agent]) -> None:
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
            await _rpc_error(404, message)(scope, receive, send)
            return
        await agent(scope, receive, send)


def _agent_endpoint(
    name: str,
    host: Host,
    expose_errors: bool,
    guard: Guard,
    metrics: CallMetrics,
    max_body_bytes: int,
) -> _Agent:
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
    endpoint = _Agent(name, handlers, manager, guard, metrics, max_body_bytes)
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
    from toolpacks.mcp.http.auth._wiring import authenticator, metadata_routes

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
            return _json_response(503, body)
        return _json_response(200, {"status": "ok", "agents": list(names)})

    async def metrics_endpoint(request: Request) -> Response:
        from starlette.responses import PlainTextResponse

        refusal = guard.check(dict(request.scope["headers"]))
        if refusal is None:
            refusal = (await auth.identify(None, request.scope))[1]
        if refusal is not None:
            metrics.refuse(refusal.reason)
            return _rpc_error(refusal.status, refusal.message, refusal.headers)
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
        Route("/agents/{agent}/mcp", _AgentRoute(endpoints)),
        *metadata_routes(auth, names),
        *connect.connect_routes(host, [e.handlers.toolset for e in endpoints.values()]),
    ]
    if len(endpoints) == 1:
        routes.append(Route("/mcp", next(iter(endpoints.values()))))
    else:  # which agent would it be? The 404 says where each one is
        routes.append(Route("/mcp", _AgentRoute(endpoints)))
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
