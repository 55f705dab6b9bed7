"""A streamable-HTTP MCP server (the official SDK) that answers with the header it was sent.

Run as a script: ``python mcp_echo.py PORT_FILE REQUEST_LOG``. Its tool ``whoami`` returns the
``Authorization`` header of the request that carried the call; a request whose header holds
``refused`` is answered HTTP 401, and so is one without it when ``ECHO_REQUIRE_AUTH`` is
set. Every HTTP request is logged to ``REQUEST_LOG`` as ``HTTP-METHOD JSONRPC-METHOD DIGEST``,
where ``DIGEST`` is ``digest(header)`` (never the
header itself) or ``none``: tests tell who made each request without the value being written.
``EchoServer`` starts it from a test.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer


def digest(header: str) -> str:
    """What the request log holds of an ``Authorization`` header."""
    return hashlib.sha256(header.encode()).hexdigest()[:16]


def main(port_file: str, log: str) -> None:
    """Serve on a free loopback port (written to ``port_file``) until killed."""
    import uvicorn

    server = MCPServer("echo")

    @server.tool()
    def whoami(ctx: Context) -> str:
        """The Authorization header this request carried."""
        request = ctx.request_context.request
        return request.headers.get("authorization", "<none>") if request else "<no request>"

    @server.tool()
    def ping() -> str:
        """Answer pong."""
        return "pong"

    app = server.streamable_http_app()

    async def logged(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        auth = dict(scope["headers"]).get(b"authorization", b"").decode()
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            method = json.loads(body).get("method", "-")
        except (ValueError, AttributeError):
            method = "-"
        line = f"{scope['method']} {method} {digest(auth) if auth else 'none'}\n"
        with open(log, "a") as out:  # noqa: ASYNC230 - one short line, a test server
            out.write(line)
        if "refused" in auth or (not auth and os.environ.get("ECHO_REQUIRE_AUTH")):
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await app(scope, replay, send)

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    with open(port_file + ".tmp", "w") as out:
        out.write(str(sock.getsockname()[1]))
    os.replace(port_file + ".tmp", port_file)
    config = uvicorn.Config(logged, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


class EchoServer:
    """``mcp_echo.py`` in a subprocess; ``requests()`` reads its request log."""

    def __init__(self, directory: Path, *, require_auth: bool = False) -> None:
        port_file, self.log = directory / "port", directory / "requests.log"
        self.errors = (directory / "echo.err").open("ab")
        env = {**os.environ, "ECHO_REQUIRE_AUTH": "1" if require_auth else ""}
        self.proc = subprocess.Popen(
            [sys.executable, __file__, str(port_file), str(self.log)],
            stdout=self.errors,
            stderr=self.errors,
            env=env,
        )
        deadline = time.monotonic() + 30
        while not port_file.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"the echo server did not start: {(directory / 'echo.err').read_text()}"
                )
            time.sleep(0.02)
        self.url = f"http://127.0.0.1:{port_file.read_text()}/mcp"

    def requests(self) -> list[tuple[str, str]]:
        """``(JSON-RPC method, header digest or "none")`` per POST so far."""
        if not self.log.exists():
            return []
        rows = [line.split() for line in self.log.read_text().splitlines()]
        return [(row[1], row[2]) for row in rows if row[0] == "POST"]

    def calls_by(self, header: str) -> int:
        """How many tools/call requests carried ``header``."""
        return self.requests().count(("tools/call", digest(header)))

    def stop(self) -> None:
        """Kill the server."""
        self.proc.kill()
        self.proc.wait(10)
        self.errors.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
