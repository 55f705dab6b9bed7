"""Operating the HTTP server: read timeouts, the connection cap, bounded logs, health, metrics.

Most tests run the server in this process (``serve_here`` on a thread, with short limits) and
speak to it over real sockets; the open-file test runs ``toolpacks serve`` in a subprocess with
a low open-file limit. Every wait is bounded by readiness with a generous ceiling; nothing
asserts on timing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
import selectors
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import HTTP_TIMEOUT, write_http_demo

CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "add", "arguments": {"a": 20, "b": 22}},
}
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}


@dataclass
class Running:
    """A server running ``serve_here`` on a thread of this process."""

    base: str
    served: Any
    loop: asyncio.AbstractEventLoop
    server: Any
    thread: threading.Thread

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(lambda: self.server.stop(reason="test over"))
        self.thread.join(HTTP_TIMEOUT)
        assert not self.thread.is_alive(), "the server did not stop"


@pytest.fixture
def host(pack_of: Callable[..., Any]) -> Iterator[Any]:
    """A host with one in-process pack ``calc`` (``add``) and the agent ``solo``."""
    from toolpacks import Host, tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    with Host({"agents": {"solo": {"packs": ["calc"]}}}, discover=False) as built:
        built.add_pack(pack_of(add), name="calc")
        yield built


@pytest.fixture
def serve(host: Any) -> Iterator[Callable[..., Running]]:
    """Start ``serve_here`` with the given limits on a thread; stopped at teardown."""
    from toolpacks.mcp.http._app import build_http_app
    from toolpacks.mcp.http._limits import HttpLimits
    from toolpacks.mcp.http._run import bound_url, listen, serve_here

    running: list[Running] = []

    def start(**limits: Any) -> Running:
        served = build_http_app(host, ["solo"])
        sock = listen("127.0.0.1", 0)
        base = bound_url(sock)
        ready = threading.Event()
        box: dict[str, Any] = {}

        def started() -> None:
            box["loop"] = asyncio.get_running_loop()
            ready.set()

        def main() -> None:
            with sock:
                serve_here(
                    served,
                    sock,
                    1.0,
                    on_started=started,
                    on_server=lambda s: box.setdefault("server", s),
                    limits=HttpLimits(**limits),
                )

        thread = threading.Thread(target=main, daemon=True)
        thread.start()
        assert ready.wait(HTTP_TIMEOUT), "the server did not start"
        run = Running(base, served, box["loop"], box["server"], thread)
        running.append(run)
        return run

    yield start
    for run in running:
        run.stop()


def _connect(base: str) -> socket.socket:
    host, port = base.removeprefix("http://").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=HTTP_TIMEOUT)
    return sock


def _closed_by_server(sock: socket.socket, trickle: bytes = b"") -> bytes:
    """What the server sent before closing ``sock``; sends ``trickle`` a byte at a time."""
    received = b""
    deadline = time.monotonic() + HTTP_TIMEOUT
    sock.settimeout(0.05 if trickle else HTTP_TIMEOUT)
    sent = 0
    while time.monotonic() < deadline:
        if trickle:
            try:
                sock.send(trickle[sent % len(trickle) : sent % len(trickle) + 1])
                sent += 1
            except OSError:
                return received
        try:
            chunk = sock.recv(4096)
        except TimeoutError:
            continue
        except OSError:
            return received
        if not chunk:
            return received
        received += chunk
    pytest.fail(f"the server kept the connection open ({sent} bytes trickled)")


# -- read timeouts ----------------------------------------------------------------------------


HALF_HEADER = b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"


@pytest.mark.parametrize("sent", [b"", HALF_HEADER], ids=["nothing", "half-a-header"])
def test_a_connection_without_complete_headers_is_closed_after_the_header_timeout(
    serve: Callable[..., Running], sent: bytes
) -> None:
    """An idle connection, or one that stops mid-header, is closed; the server goes on."""
    run = serve(header_timeout=0.3)
    with _connect(run.base) as sock:
        sock.sendall(sent)
        _closed_by_server(sock)
    answer = httpx.post(f"{run.base}/mcp", json=CALL, headers=HEADERS, timeout=HTTP_TIMEOUT)
    assert answer.json()["result"]["structuredContent"] == {"result": 42}


def test_headers_trickled_a_byte_at_a_time_are_cut_off(serve: Callable[..., Running]) -> None:
    """Slow-loris: bytes keep coming, but the headers never end; the deadline still holds."""
    run = serve(header_timeout=0.3)
    with _connect(run.base) as sock:
        _closed_by_server(sock, trickle=b"X-Padding: aaaaaaaaaaaaaaaa\r\n")


def test_a_body_sent_too_slowly_is_abandoned(serve: Callable[..., Running]) -> None:
    """Headers in, body never finished: the connection is closed after the body timeout."""
    run = serve(body_timeout=0.3)
    head = (
        b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{"
    )
    with _connect(run.base) as sock:
        sock.sendall(head)
        _closed_by_server(sock, trickle=b" ")


# -- the connection cap -----------------------------------------------------------------------


def _answered(socks: list[socket.socket], at_least: int) -> dict[socket.socket, bytes]:
    """Wait until ``at_least`` of ``socks`` have been answered and closed; those answers."""
    answers: dict[socket.socket, bytes] = {}
    buffers: dict[socket.socket, bytes] = {}
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + HTTP_TIMEOUT
        while len(answers) < at_least:
            left = deadline - time.monotonic()
            assert left > 0, f"only {len(answers)} of {len(socks)} connections were answered"
            for key, _ in selector.select(min(left, 1.0)):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    chunk = sock.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if chunk:
                    buffers[sock] = buffers.get(sock, b"") + chunk
                    continue
                selector.unregister(sock)
                if buffers.get(sock):  # closed without an answer: not counted
                    answers[sock] = buffers[sock]
    return answers


def test_connections_beyond_the_cap_get_503_while_a_connected_client_is_answered(
    serve: Callable[..., Running],
) -> None:
    """Over the cap a connection is answered 503 and closed; one already open keeps working."""
    run = serve(max_connections=4)
    with httpx.Client(base_url=run.base, headers=HEADERS, timeout=HTTP_TIMEOUT) as client:
        assert client.post("/mcp", json=CALL).status_code == 200  # its connection stays open
        idle = [_connect(run.base) for _ in range(10)]
        try:
            answers = _answered(idle, at_least=7)  # 4 allowed: the client's and 3 idle ones
            assert all(a.startswith(b"HTTP/1.1 503 ") for a in answers.values()), answers
            assert b"connection: close" in next(iter(answers.values())).lower()
            again = client.post("/mcp", json=CALL)
            assert again.json()["result"]["structuredContent"] == {"result": 42}
        finally:
            for sock in idle:
                sock.close()
    metrics = run.served.metrics.render()
    assert 'toolpacks_mcp_refused_requests_total{reason="busy"} 7' in metrics


# -- bounded logs -----------------------------------------------------------------------------


def test_a_flood_of_bad_requests_logs_a_bounded_number_of_records(
    serve: Callable[..., Running], caplog: pytest.LogCaptureFixture
) -> None:
    """The same failure 200 times is a few records and a count, not 200 records."""
    run = serve()
    caplog.set_level(logging.DEBUG)
    socks = [_connect(run.base) for _ in range(200)]
    try:
        for sock in socks:
            sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        answers = _answered(socks, at_least=len(socks))
    finally:
        for sock in socks:
            sock.close()
    assert all(b" 400 " in a.split(b"\r\n", 1)[0] for a in answers.values())
    invalid = [r for r in caplog.records if "Invalid HTTP request" in r.getMessage()]
    assert 1 <= len(invalid) <= 10, len(invalid)


def test_rate_limit_passes_a_burst_then_counts_what_it_suppressed() -> None:
    """At most ``burst`` records of one message per period; the next one says how many were not."""
    from toolpacks.mcp.http._limits import RateLimit

    now = [100.0]
    limit = RateLimit(burst=3, period=1.0, clock=lambda: now[0])
    record = lambda msg: logging.LogRecord("x", logging.WARNING, "f", 1, msg, None, None)  # noqa: E731
    passed = [limit.filter(record("same %s")) for _ in range(10)]
    assert passed == [True] * 3 + [False] * 7
    assert limit.filter(record("other"))  # another message has its own budget
    now[0] += 1.5
    late = record("same %s")
    assert limit.filter(late)
    assert "7 similar records suppressed" in late.getMessage()


# -- open files -------------------------------------------------------------------------------


def _low_file_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


@pytest.mark.skipif(sys.platform == "win32", reason="open-file limits are POSIX")
def test_idle_connections_past_the_open_file_limit_neither_lock_out_nor_flood_the_log(
    tmp_path: Path,
) -> None:
    """300 idle connections against 256 open files: 503s, a working client, a short log.

    Before the cap, ``accept()`` failed with EMFILE on every loop turn and asyncio logged each
    failure (hundreds of thousands of lines in seconds).
    """
    config = write_http_demo(tmp_path)
    errlog = tmp_path / "stderr.log"
    environ = {**os.environ, "PYTHONPATH": str(tmp_path)}
    command = [sys.executable, "-m", "toolpacks", "serve", "--config", str(config)]
    with errlog.open("wb") as err:
        proc = subprocess.Popen(
            [*command, "--agent", "alpha", "--http", "127.0.0.1:0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=environ,
            cwd=tmp_path,
            preexec_fn=_low_file_limit,
        )
    idle: list[socket.socket] = []
    try:
        deadline = time.monotonic() + HTTP_TIMEOUT
        while "serving http://" not in errlog.read_text():
            assert proc.poll() is None, errlog.read_text()
            assert time.monotonic() < deadline, errlog.read_text()
            time.sleep(0.05)
        base = errlog.read_text().split("serving ", 1)[1].split("/agents/", 1)[0]
        with httpx.Client(base_url=base, headers=HEADERS, timeout=HTTP_TIMEOUT) as client:
            assert client.post("/mcp", json=CALL).status_code == 200
            idle = [_connect(base) for _ in range(300)]
            # The cap is at most 256 minus the reserve; every connection past it gets 503.
            answers = _answered(idle, at_least=300 - (256 - 64))
            assert all(a.startswith(b"HTTP/1.1 503 ") for a in answers.values())
            again = client.post("/mcp", json=CALL)
            assert again.json()["result"]["structuredContent"] == {"result": 42}
        lines = errlog.read_text().splitlines()
        assert len(lines) < 50, "\n".join(lines[:80])
    finally:
        for sock in idle:
            sock.close()
        proc.kill()
        proc.wait(HTTP_TIMEOUT)
        with contextlib.suppress(OSError):
            errlog.unlink()


# -- health -----------------------------------------------------------------------------------


def test_healthz_is_503_with_a_reason_once_the_session_manager_cannot_serve(host: Any) -> None:
    """A cancelled SDK task group (what a tool's GeneratorExit once did) fails the health check.

    Every MCP request on such a worker fails until it is restarted, so ``/healthz`` must stop
    saying 200: load balancers and the orchestrator then take the worker out.
    """
    from toolpacks.mcp.http._app import build_http_app

    app = build_http_app(host, ["solo"]).app
    endpoint = next(r for r in app.routes if getattr(r, "path", "") == "/mcp").app  # type: ignore[attr-defined]

    async def main() -> tuple[httpx.Response, str, httpx.Response]:
        stop = asyncio.Event()
        running = asyncio.Event()

        async def lifespan() -> None:
            async with app.router.lifespan_context(app):
                running.set()
                await stop.wait()

        task = asyncio.ensure_future(lifespan())
        await running.wait()
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
            healthy = await c.get("/healthz")
            endpoint.manager._task_group.cancel_scope.cancel()
            at_once = endpoint.problem()  # before the cancellation reaches the lifespan task
            await asyncio.wait_for(task, HTTP_TIMEOUT)  # the lifespan ends, cancelled
            broken = await c.get("/healthz")
        return healthy, at_once, broken

    healthy, at_once, broken = asyncio.run(asyncio.wait_for(main(), HTTP_TIMEOUT))
    assert healthy.status_code == 200
    assert broken.status_code == 503
    assert broken.json() == {
        "status": "unavailable",
        "agents": ["solo"],
        "reasons": ["agent solo: the MCP session manager is not running"],
    }
    assert at_once == "agent solo: the MCP session manager's task group was cancelled"
