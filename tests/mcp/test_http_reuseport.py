"""Workers on sockets of their own: ``serve --http --workers N`` with ``SO_REUSEPORT`` (Linux).

Each worker listens on a socket of its own bound to the one address, so the kernel spreads new
connections over the workers that listen, and a worker started in place of a dead one takes
its share at once. The supervisor only holds the port (bound, not listening), so that a
replacement binds the same port, also when port 0 was asked. Where ``SO_REUSEPORT`` is missing
the workers share one listening socket, as before.

The sockets are read from ``/proc`` (which process holds which listening socket); every wait
is bounded by readiness, and nothing is timed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import HTTP_TIMEOUT, HttpServer, worker_pids

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not hasattr(socket, "SO_REUSEPORT"),
    reason="SO_REUSEPORT spreading connections is Linux's",
)

HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


def listening(pid: int, port: int) -> set[str]:
    """The inodes of the TCP sockets listening on ``port`` that ``pid`` holds (from /proc)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for row in Path(table).read_text().splitlines()[1:]:
                cols = row.split()
                if int(cols[1].rsplit(":", 1)[1], 16) == port and cols[3] == "0A":  # LISTEN
                    inodes.add(cols[9])
    held: set[str] = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:[") and target[8:-1] in inodes:
                    held.add(target[8:-1])
    return held


def port_of(server: HttpServer) -> int:
    return int(server.base.rsplit(":", 1)[1])


def fresh_pid(server: HttpServer) -> int:
    """The pid of the worker answering ``pid`` on a new connection (closed after the reply)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    body["params"] = {"name": "pid", "arguments": {}}  # type: ignore[assignment]
    headers = {**HEADERS, "Connection": "close"}
    with httpx.Client(timeout=HTTP_TIMEOUT) as client:
        answer = client.post(server.url("alpha"), json=body, headers=headers)
    return int(answer.json()["result"]["structuredContent"]["result"])


def wait_until(ready: Any, server: HttpServer, what: str) -> Any:
    deadline = time.monotonic() + HTTP_TIMEOUT
    while not (value := ready()):
        assert time.monotonic() < deadline, f"{what}; stderr:\n{server.stderr()}"
        time.sleep(0.02)
    return value


@pytest.fixture
def two_workers(tmp_path: Path) -> Iterator[HttpServer]:
    server = HttpServer(tmp_path, ["--agent", "alpha", "--workers", "2"])
    try:
        yield server
    finally:
        server.kill()


def workers_listening(server: HttpServer, count: int) -> dict[int, set[str]] | None:
    """Each worker's listening sockets, once there are ``count`` workers each listening."""
    pids = worker_pids(server.proc.pid, "spawn_main")
    held = {pid: listening(pid, port_of(server)) for pid in pids}
    return held if len(held) == count and all(held.values()) else None


# -- real servers -----------------------------------------------------------------------------


@linux_only
def test_each_worker_listens_on_a_socket_of_its_own_and_the_supervisor_on_none(
    two_workers: HttpServer,
) -> None:
    """Two workers, two listening sockets on the announced port; the supervisor holds none.

    Two sockets listening on one port in two processes can only be ``SO_REUSEPORT`` ones.
    """
    server = two_workers
    assert port_of(server) != 0  # port 0 was asked: the announced port is the one bound
    held = wait_until(lambda: workers_listening(server, 2), server, "workers not listening")
    sockets = [inodes for inodes in held.values()]
    assert all(len(inodes) == 1 for inodes in sockets), held
    assert sockets[0].isdisjoint(sockets[1]), held
    assert not listening(server.proc.pid, port_of(server))


@linux_only
def test_a_replacement_worker_listens_on_the_same_port_and_takes_new_connections(
    two_workers: HttpServer,
) -> None:
    """A killed worker's replacement listens on the same port and takes new connections.

    Fresh connections opened once it listens are answered by both the survivor and it.
    """
    server = two_workers
    before = wait_until(lambda: workers_listening(server, 2), server, "workers not listening")
    victim = min(before)
    survivor = max(before)
    os.kill(victim, signal.SIGKILL)

    def replaced() -> dict[int, set[str]] | None:
        held = workers_listening(server, 2)
        return held if held is not None and victim not in held else None

    after = wait_until(replaced, server, "no replacement listening on the port")
    (replacement,) = set(after) - {survivor}
    assert after[replacement].isdisjoint(after[survivor])
    answered = {fresh_pid(server) for _ in range(48)}  # each on a new connection
    assert answered == {survivor, replacement}


# -- the sockets ------------------------------------------------------------------------------


@linux_only
def test_the_reserved_port_is_held_without_listening_and_each_worker_binds_it() -> None:
    """Port 0 gives a real port, held by a socket that does not listen; workers bind it.

    The supervisor's socket must never take a connection nobody accepts; each worker's
    socket is TCP and SO_REUSEPORT, on that port.
    """
    from toolpacks.mcp.http._run import PortShare, reserve

    reserved = reserve("127.0.0.1", 0)
    with reserved:
        share = PortShare.of(reserved)
        port = reserved.getsockname()[1]
        assert port != 0
        assert reserved.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) == 0
        first, second = share.listen(), share.listen()
        with first, second:
            for sock in (first, second):
                assert sock.getsockname()[1] == port
                assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) == 1
                assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) == 1
                assert sock.proto == socket.IPPROTO_TCP  # so accepted ones get TCP_NODELAY
            with socket.create_connection(("127.0.0.1", port), timeout=HTTP_TIMEOUT):
                pass
        with socket.socket() as plain, pytest.raises(OSError):
            plain.bind(("127.0.0.1", port))  # without SO_REUSEPORT, nothing else binds it


def test_without_reuseport_the_workers_share_one_listening_socket(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where ``SO_REUSEPORT`` does not spread connections, the workers share one socket.

    The supervisor listens once and every worker is given that socket, as before.
    """
    from toolpacks.mcp.http import _run

    monkeypatch.setattr(_run, "REUSE_PORT", False)
    sock, where = _run.worker_listener("127.0.0.1", 0)
    with sock:
        assert where is sock
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) == 1


@linux_only
def test_on_linux_the_workers_are_given_the_address_not_a_socket() -> None:
    from toolpacks.mcp.http._run import PortShare, worker_listener

    sock, where = worker_listener("127.0.0.1", 0)
    with sock:
        assert isinstance(where, PortShare)
        assert where.address[1] == sock.getsockname()[1] != 0


# -- keep-alive connections move over in time ---------------------------------------------------


@pytest.fixture
def served_here(pack_of: Any) -> Iterator[Any]:
    """``serve_here`` on a thread with ``HttpLimits(max_requests=3)``; its base URL."""
    import asyncio
    import threading

    from toolpacks import Host, tool
    from toolpacks.mcp.http._app import build_http_app
    from toolpacks.mcp.http._limits import HttpLimits
    from toolpacks.mcp.http._run import listen, serve_here

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    with Host({"agents": {"solo": {"packs": ["calc"]}}}, discover=False) as host:
        host.add_pack(pack_of(add), name="calc")
        served = build_http_app(host, ["solo"])
        sock = listen("127.0.0.1", 0)
        box: dict[str, Any] = {}
        ready = threading.Event()

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
                    limits=HttpLimits(max_requests=3),
                )

        thread = threading.Thread(target=main, daemon=True)
        thread.start()
        assert ready.wait(HTTP_TIMEOUT), "the server did not start"
        try:
            yield sock.getsockname()[1]
        finally:
            box["loop"].call_soon_threadsafe(lambda: box["server"].stop(reason="test over"))
            thread.join(HTTP_TIMEOUT)


def test_a_keep_alive_connection_is_closed_after_max_requests(served_here: int) -> None:
    """The third answer on a connection says ``Connection: close`` and the server closes it.

    So clients that stay connected reconnect now and then, and their new connections reach a
    worker that started after they first connected.
    """
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":'
    body += b'{"name":"add","arguments":{"a":1,"b":2}}}'
    request = (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    with socket.create_connection(("127.0.0.1", served_here), timeout=HTTP_TIMEOUT) as sock:
        stream = sock.makefile("rb")
        closes = []
        for _ in range(3):
            sock.sendall(request)
            head = [stream.readline().decode().strip().lower()]
            while head[-1]:
                head.append(stream.readline().decode().strip().lower())
            assert head[0].startswith("http/1.1 200"), head
            length = next(int(h.split(":")[1]) for h in head if h.startswith("content-length"))
            assert b'"result"' in stream.read(length)
            closes.append("connection: close" in head)
        assert closes == [False, False, True]
        assert stream.read() == b""  # closed by the server
