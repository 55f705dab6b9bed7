"""MCP sessions over HTTP (``[settings] http_sessions = true``): a back-channel per client.

By default ``serve --http`` is stateless: each request stands alone, so a tool cannot ask
the client anything mid-call (elicitation, sampling) and a resource subscription cannot
deliver ``notifications/resources/updated``. With ``http_sessions`` every request of an
agent's endpoint goes to the SDK's session manager in stateful mode instead: ``initialize``
opens a session (the ``Mcp-Session-Id`` header), calls answer on an SSE stream that also
carries the server's requests, the client's answers come back as POSTs of that session, and
``GET`` opens its stream of notifications. The guard (token, Host, Origin) and authentication
still run first; the direct route does not (a session's requests are not stateless).

Sessions live in the worker that opened them, so the setting needs one worker
(``serve_http`` refuses more).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from toolpacks.host._host import Host

__all__ = ["SESSIONS_NEED_ONE_WORKER", "sessions_for"]

SESSIONS_NEED_ONE_WORKER = (
    "[settings] http_sessions keeps each client's MCP session in the worker that opened it, "
    "so it needs one worker: serve with --workers 1, or set http_sessions = false"
)


def sessions_for(
    host: Host, server: Server[Any], max_body_bytes: int
) -> StreamableHTTPSessionManager | None:
    """The stateful session manager of ``server`` when the host's settings ask for one."""
    if not host.config.config.settings.http_sessions:
        return None
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    return StreamableHTTPSessionManager(
        server, stateless=False, json_response=False, max_request_body_size=max_body_bytes
    )
