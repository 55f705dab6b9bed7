"""One agent's MCP endpoint over HTTP: the checks, the body, and where a request goes.

Each request to ``/agents/NAME/mcp`` passes, in order: ``Host`` and ``Origin`` (421, 403),
who is calling (``auth``: a principal, or 401 / 403), the method (405), the body size (413);
then a plain stateless ``tools/list`` or ``tools/call`` is answered from the parsed body
(``_direct``), a body that is not JSON-RPC or repeats a key is answered as the stdio server
would, and the rest goes to the SDK's session manager (or its streaming twin for calls that
listen for progress and logs, ``_stream``). ``_app`` assembles the endpoints into the app.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolpacks.mcp.http import _connect as connect
from toolpacks.mcp.http._guard import Guard, Refusal, media_answer
from toolpacks.mcp.http._metrics import CallMetrics
from toolpacks.mcp.http._stream import StreamChooser, unless_gone

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.responses import Response
    from starlette.types import Message, Receive, Scope, Send

    from toolpacks.mcp._server import _ToolsetServer
    from toolpacks.mcp.http._direct import DirectRoute
    from toolpacks.mcp.http.auth._gate import Authenticator
    from toolpacks.mcp.http.auth._views import PrincipalViews

__all__ = ["Endpoint", "json_response", "rpc_error"]

_UNKNOWN: Any = object()
_NOT_STARTED = (
    "this toolpacks MCP app has not been started: its lifespan did not run. When you mount it "
    "in another ASGI app, enter `app.router.lifespan_context(app)` in that app's lifespan."
)


def json_response(status: int, body: Any, headers: Sequence[tuple[str, str]] = ()) -> Response:
    from starlette.responses import Response

    return Response(
        json.dumps(body, separators=(",", ":")),
        status_code=status,
        headers=dict(headers),
        media_type="application/json",
    )


def rpc_error(status: int, message: str, headers: Sequence[tuple[str, str]] = ()) -> Response:
    """A JSON-RPC error (id null) with an HTTP status; MCP clients show its message."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    return json_response(status, body, headers)


class Endpoint:
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
            await rpc_error(503, _NOT_STARTED)(scope, receive, send)
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
        await rpc_error(refusal.status, refusal.message, refusal.headers)(scope, receive, send)

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
        await (refused or json_response(status, message))(scope, receive, send)
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
