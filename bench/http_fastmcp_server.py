"""FastMCP's HTTP server with the tools of the HTTP benchmark, as its users would run it.

``FastMCP(...).run_http_async(transport="http", ...)`` in stateless mode with JSON replies
(the same mode as ``toolpacks serve --http``: no session, any process answers any request),
its other settings left at their defaults. The listening socket is bound here (port 0, a free
one) and handed to FastMCP; its port is printed on stdout as ``port N``.

Usage: ``python bench/http_fastmcp_server.py`` (stops on SIGTERM or Ctrl-C).
"""

from __future__ import annotations

import functools
import socket
import sys

import anyio
from fastmcp import FastMCP

mcp: FastMCP = FastMCP("bench")


@mcp.tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool
def add_sync(a: int, b: int) -> int:
    """Add two integers (a sync function)."""
    return a + b


def main() -> None:
    """Bind a free loopback port, say which, and serve until stopped."""
    # IPPROTO_TCP named, as asyncio's own create_server does: accepted sockets get TCP_NODELAY.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    port = sock.getsockname()[1]
    print(f"port {port}", flush=True)
    serve = functools.partial(
        mcp.run_http_async,
        transport="http",
        host="127.0.0.1",
        port=port,
        sockets=[sock],
        stateless_http=True,
        json_response=True,
        show_banner=False,
        log_level="warning",
    )
    try:
        anyio.run(serve)
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
