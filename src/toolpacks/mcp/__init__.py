"""Serve a toolset over MCP (public module).

``build_server`` gives the official SDK's low-level ``Server`` for a ``Toolset``;
``serve`` runs it over this process's stdio inside a running event loop and ``serve_stdio``
is its blocking form; ``serve_agent`` builds an agent's toolset from configuration and serves
it (what ``toolpacks serve --agent NAME`` runs).

Over stdio, a line that is not JSON-RPC gets the JSON-RPC error (-32700 or -32600) and serving
goes on; ``tools/call`` arguments that repeat a key get a tool error result. At end of input,
or on SIGTERM or SIGINT, no new request is read and the calls in flight get a grace period
(2 s after end of input, 10 s after a signal; ``TOOLPACKS_SERVE_GRACE`` seconds when set).
``serve`` and ``serve_stdio`` then return, leaving a stuck sync tool's thread running;
``toolpacks serve`` exits non-zero at once in that case. Over stdio the MCP SDK is
not used (nor imported); ``build_server`` and the HTTP app need it (the optional extra
``toolpacks[mcp]``), imported when one is built, not when this module is.

Over streamable HTTP, ``http_app`` gives an ASGI app serving one or more agents (each at
``/agents/NAME/mcp``, and at ``/mcp`` when there is one; ``/healthz`` and ``/metrics`` beside
them), stateless, so any worker or replica answers any request; ``serve_http`` runs it under
uvicorn on one or more worker processes (what ``toolpacks serve --http`` runs). Requests are
checked for the bearer token, ``Host`` and ``Origin`` and body size before they are parsed,
and every ``tools/call`` goes through the same handler as over stdio.

Tools *of* remote MCP servers (``[mcp_servers.NAME]`` in the configuration) are a pack
source, not part of this module.
"""

from typing import TYPE_CHECKING, Any

from toolpacks.mcp._server import build_server, serve, serve_agent, serve_stdio

if TYPE_CHECKING:
    from toolpacks.mcp.http._app import http_app
    from toolpacks.mcp.http._workers import serve_http

__all__ = ["build_server", "http_app", "serve", "serve_agent", "serve_http", "serve_stdio"]


def __getattr__(name: str) -> Any:
    """``http_app`` and ``serve_http``, imported when first used (a stdio server needs neither)."""
    if name == "http_app":
        from toolpacks.mcp.http._app import http_app

        return http_app
    if name == "serve_http":
        from toolpacks.mcp.http._workers import serve_http

        return serve_http
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
