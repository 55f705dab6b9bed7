"""Serve a toolset over MCP (public module).

``build_server`` gives the official SDK's low-level ``Server`` for a ``Toolset``;
``serve`` runs it over this process's stdio inside a running event loop and ``serve_stdio``
is its blocking form; ``serve_agent`` builds an agent's toolset from configuration and serves
it (what ``toolpacks serve --agent NAME`` runs). The MCP SDK is the optional extra
``toolpacks[mcp]``; it is imported when a server is built, not when this module is.

Tools *of* remote MCP servers (``[mcp_servers.NAME]`` in the configuration) are a pack
source, not part of this module.
"""

from toolpacks.mcp._server import build_server, serve, serve_agent, serve_stdio

__all__ = ["build_server", "serve", "serve_agent", "serve_stdio"]
