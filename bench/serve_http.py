"""One HTTP worker: ``toolpacks serve --http`` against the MCP SDK's own ``MCPServer`` (issue 24).

Both servers serve the same async tool ``add`` over streamable HTTP, stateless, JSON replies,
one process each (``toolpacks serve --http 127.0.0.1:0 --workers 1``; ``MCPServer(...)``'s
``streamable_http_app(stateless_http=True, json_response=True)`` under uvicorn). The server
runs on CPU 1 and the load on CPU 0 (``sched_setaffinity``), so neither steals the other's
core. The load is this process: K keep-alive connections on raw asyncio sockets (a load
generator that costs far less than either server), each sending ``tools/call`` POSTs back
to back (reconnecting when a reply says ``Connection: close``) and checking every reply
(status 200, ``"structuredContent":{"result":42}``).

Each case is a server and a protocol revision: ``2025-11-25`` (the handshake era; a
stateless server answers calls without one) and ``2026-07-28`` (self-contained requests: the
``_meta`` envelope and the ``Mcp-Method``/``Mcp-Name`` headers). Every round runs every case
once in a shuffled order: a warm-up, then a measured window. The figure is calls/s; the
ratio toolpacks / MCPServer is taken per round, per revision, then summarised (median, IQR,
min, max). Errors count every reply that was not the right answer.

Usage: ``.venv/bin/python bench/serve_http.py [--rounds N] [--duration S] [--users K]``;
writes ``bench/results/serve_http.json``. Linux only (CPU affinity).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_info, summary, table, write_json
from _http_servers import Server, start_toolpacks, tree

SDK_SERVER = '''
import socket, sys
import uvicorn
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("bench")


@mcp.tool()
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


app = mcp.streamable_http_app(stateless_http=True, json_response=True)
sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", 0))
sock.listen(2048)
print(f"port {sock.getsockname()[1]}", flush=True)
config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
uvicorn.Server(config).run(sockets=[sock])
'''

VERSIONS = ("2025-11-25", "2026-07-28")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
EXPECTED = b'"structuredContent":{"result":42}'


def request_bytes(host: str, path: str, version: str) -> bytes:
    """One ``tools/call add(20, 22)`` POST, keep-alive, at ``version``."""
    params: dict[str, Any] = {"name": "add", "arguments": {"a": 20, "b": 22}}
    headers = {"MCP-Protocol-Version": version}
    if version == "2026-07-28":
        params["_meta"] = META
        headers.update({"Mcp-Method": "tools/call", "Mcp-Name": "add"})
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: {host}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {len(body)}",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n" + body).encode()


async def _one_connection(
    port: int, request: bytes, stop_at: float, counts: dict[str, int], measure_from: float
) -> None:
    """Send calls back to back on one keep-alive connection, reconnecting when told to close.

    (toolpacks closes a connection after ``max_requests`` answers, as nginx does, so clients
    spread over workers; the reconnection is part of what is measured.)
    """
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while (now := time.perf_counter()) < stop_at:
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length, close = 0, False
            for line in head.lower().split(b"\r\n"):
                if line.startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
                elif line.startswith(b"connection:") and b"close" in line:
                    close = True
            body = await reader.readexactly(length)
            ok = head.startswith(b"HTTP/1.1 200") and EXPECTED in body.replace(b" ", b"")
            if now >= measure_from:
                counts["ok" if ok else "errors"] += 1
            elif not ok:
                counts["warmup_errors"] += 1
            if close:
                writer.close()
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
    finally:
        writer.close()


def load(port: int, path: str, version: str, users: int, warmup: float, duration: float) -> Any:
    """Calls/s over the measured window, and the errors (warm-up included)."""
    os.sched_setaffinity(0, {0})
    request = request_bytes(f"127.0.0.1:{port}", path, version)
    counts = {"ok": 0, "errors": 0, "warmup_errors": 0}

    async def main() -> None:
        start = time.perf_counter()
        measure_from, stop_at = start + warmup, start + warmup + duration
        await asyncio.gather(
            *(_one_connection(port, request, stop_at, counts, measure_from) for _ in range(users))
        )

    asyncio.run(main())
    return counts["ok"] / duration, counts["errors"] + counts["warmup_errors"]


def start_sdk(scratch: Path) -> Server:
    script = scratch / "sdk_server.py"
    script.write_text(SDK_SERVER)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    return Server("mcpserver", [sys.executable, str(script)], env, scratch)


def pin_server(server: Server) -> None:
    for pid in tree(server.pid):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):  # a thread that has just ended
                os.sched_setaffinity(int(task), {1})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=float, default=4.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--users", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        servers = {"toolpacks": start_toolpacks(scratch, 1), "mcpserver": start_sdk(scratch)}
        paths = {"toolpacks": "/mcp", "mcpserver": "/mcp"}
        try:
            for server in servers.values():
                pin_server(server)
            cases = [(s, v) for s in servers for v in VERSIONS]
            rates: dict[tuple[str, str], list[float]] = {c: [] for c in cases}
            errors: dict[tuple[str, str], int] = dict.fromkeys(cases, 0)
            ratios: dict[str, list[float]] = {v: [] for v in VERSIONS}
            for _ in range(args.rounds):
                random.shuffle(cases)
                got: dict[tuple[str, str], float] = {}
                for name, version in cases:
                    port = int(servers[name].base.rsplit(":", 1)[1])
                    rate, errs = load(
                        port, paths[name], version, args.users, args.warmup, args.duration
                    )
                    got[(name, version)] = rate
                    rates[(name, version)].append(rate)
                    errors[(name, version)] += errs
                for version in VERSIONS:
                    ratios[version].append(
                        got[("toolpacks", version)] / got[("mcpserver", version)]
                    )
        finally:
            for server in servers.values():
                server.stop()
    rows = []
    result: dict[str, Any] = {"machine": machine_info(("toolpacks", "mcp")), "cases": {}}
    for version in VERSIONS:
        for name in servers:
            fig = summary(rates[(name, version)])
            result["cases"][f"{name} {version}"] = {**fig, "errors": errors[(name, version)]}
            rows.append(
                [
                    version,
                    name,
                    f"{fig['median']:.0f}",
                    f"{fig['min']:.0f}-{fig['max']:.0f}",
                    str(errors[(name, version)]),
                ]
            )
        ratio = summary(ratios[version])
        result["cases"][f"ratio {version}"] = ratio
        rows.append(
            [
                version,
                "ratio toolpacks/MCPServer",
                f"{ratio['median']:.2f}x",
                f"{ratio['min']:.2f}-{ratio['max']:.2f}",
                "",
            ]
        )
    result["settings"] = vars(args)
    print(table(["revision", "server", "calls/s (median)", "spread", "errors"], rows))
    print(f"wrote {write_json('serve_http.json', result)}")


if __name__ == "__main__":
    main()
