"""Results of a server mounted over streamable HTTP are capped like stdio ones.

A plain JSON answer was read whole whatever its size, while an SSE event was cut at the
SDK's own 1 MiB, below toolpacks' documented 16 MiB ``max_message_bytes``: both now follow
``max_message_bytes``. The server is the official SDK's ``MCPServer`` under uvicorn, in a
subprocess, answering either as JSON or as SSE.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Host

from .test_client_lifecycle import call, wait_until, write_config

pytestmark = pytest.mark.slow

SERVER = '''
import os
import socket
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("big")


@server.tool()
def big(n: int) -> str:
    """n bytes of text."""
    return "x" * n


@server.tool()
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def main(port_file, json_response):
    import uvicorn

    app = server.streamable_http_app(json_response=json_response, stateless_http=json_response)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    with open(port_file + ".tmp", "w") as out:
        out.write(str(sock.getsockname()[1]))
    os.replace(port_file + ".tmp", port_file)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on")).run(sockets=[sock])


main(sys.argv[1], sys.argv[2] == "json")
'''


class BigServer:
    """The SDK server in a subprocess, answering as ``mode`` ("json" or "sse")."""

    def __init__(self, directory: Path, mode: str) -> None:
        script = directory / "big_server.py"
        script.write_text(textwrap.dedent(SERVER))
        port_file = directory / f"port-{mode}"
        self.log = (directory / f"{mode}.log").open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, str(script), str(port_file), mode],
            stdout=self.log,
            stderr=self.log,
            env={**os.environ},
        )
        wait_until(lambda: port_file.exists() or self.proc.poll() is not None, "the server binds")
        assert self.proc.poll() is None, (directory / f"{mode}.log").read_text()
        self.url = f"http://127.0.0.1:{int(port_file.read_text())}/mcp"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self.log.close()


@pytest.fixture(params=["json", "sse"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BigServer]:
    running = BigServer(tmp_path, request.param)
    yield running
    running.stop()


@pytest.fixture
def make_host(tmp_path: Path) -> Iterator[Callable[..., Host]]:
    hosts: list[Host] = []

    def make(url: str, **table: Any) -> Host:
        config = write_config(
            tmp_path, {"big": {"url": url, "timeout": 60, **table}}, '[agents.a]\npacks = ["big"]\n'
        )
        host = Host(config, discover=False, environ={})
        hosts.append(host)
        return host

    yield make
    for host in hosts:
        host.close()


def test_an_http_answer_over_the_cap_fails_that_call_and_the_next_answers(
    server: BigServer, make_host: Callable[..., Host]
) -> None:
    """Over ``max_message_bytes``: that call's error names the cap; the server goes on."""
    toolset = make_host(server.url, max_message_bytes=256 * 1024).toolset("a")
    started = time.monotonic()
    result = call(toolset, "big", {"n": 1024 * 1024})
    assert result.is_error is True
    assert "max_message_bytes" in result.content, result.content
    assert time.monotonic() - started < 60
    ok = call(toolset, "add", {"a": 2, "b": 3})
    assert ok.is_error is False, ok.content


def test_an_http_answer_under_the_default_cap_arrives_whole(
    server: BigServer, make_host: Callable[..., Host]
) -> None:
    """2 MiB is under the default 16 MiB: it arrives, over JSON and over SSE alike."""
    toolset = make_host(server.url).toolset("a")
    result = call(toolset, "big", {"n": 2 * 1024 * 1024})
    assert result.is_error is False, result.content[:500]
    assert len(str(result.value)) >= 2 * 1024 * 1024
