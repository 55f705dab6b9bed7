"""What a stdio MCP server sends is bounded: its messages (results) and its stderr.

A message over ``max_message_bytes`` (16 MiB unless configured) fails the call it answers
with an error naming the cap, and the server goes on serving; messages under it are received
in time linear in their size. stderr is read in bounded pieces, a line without a newline
included, and only the first ``_MAX_LINE`` bytes of a line are kept or logged.
"""

from __future__ import annotations

import collections
import os
import sys
import textwrap
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from toolpacks import Host
from toolpacks.packs.mcp import _transport
from toolpacks.packs.mcp._transport import StderrPipe

from .test_client_lifecycle import call, value, write_config

MIB = 1024 * 1024

SERVER = '''
import os
import sys

from mcp.server.mcpserver import MCPServer

noise = int(os.environ.get("STDERR_NOISE", "0"))
if noise:
    chunk = b"x" * (1024 * 1024)
    for _ in range(noise // len(chunk)):
        sys.stderr.buffer.write(chunk)
    sys.stderr.buffer.write(b"\\nstderr noise written\\n")
    sys.stderr.flush()

server = MCPServer("big")


@server.tool()
def big(size: int) -> str:
    """A text of `size` characters."""
    return "x" * size


@server.tool()
def echo(text: str) -> str:
    """The text, back."""
    return text


server.run()
'''


@pytest.fixture
def make_host(tmp_path: Path) -> Iterator[Callable[..., Host]]:
    """Hosts mounting the server as the pack ``big``; all closed at teardown."""
    script = tmp_path / "big_server.py"
    script.write_text(textwrap.dedent(SERVER))
    hosts: list[Host] = []

    def make(**server: Any) -> Host:
        table = {"command": sys.executable, "args": [str(script)], "timeout": 60, **server}
        host = Host(write_config(tmp_path, {"big": table}), discover=False)
        hosts.append(host)
        return host

    yield make
    for host in hosts:
        host.close()


# -- messages -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_an_oversized_result_fails_that_call_naming_the_cap_and_the_server_goes_on(
    make_host: Callable[..., Host],
) -> None:
    """A 4 MB result over a 1 MiB cap: an error naming the cap; the next call works."""
    host = make_host(max_message_bytes=MIB)
    toolset = host.toolset()
    result = call(toolset, "big", {"size": 4_000_000})
    assert result.is_error is True
    assert "1 MiB" in result.content
    assert "max_message_bytes" in result.content
    assert value(call(toolset, "echo", {"text": "still here"})) == "still here"
    assert value(call(toolset, "big", {"size": 1000})) == "x" * 1000


@pytest.mark.slow
def test_the_default_cap_is_16_mib(make_host: Callable[..., Host]) -> None:
    """Without ``max_message_bytes``: 12 MB results arrive whole, 20 MB ones are refused."""
    toolset = make_host().toolset()
    assert len(value(call(toolset, "big", {"size": 6_000_000}))) == 6_000_000
    result = call(toolset, "big", {"size": 20_000_000})
    assert result.is_error is True
    assert "16 MiB" in result.content
    assert value(call(toolset, "echo", {"text": "ok"})) == "ok"


def test_the_cap_must_be_positive(tmp_path: Path) -> None:
    """``max_message_bytes = 0`` is a configuration error, not a server refusing everything."""
    from toolpacks.exceptions import ConfigError

    table = {"command": sys.executable, "max_message_bytes": 0}
    with pytest.raises(ConfigError, match="max_message_bytes"):
        Host(write_config(tmp_path, {"big": table}), discover=False)


def frames(chunks: list[bytes], cap: int) -> list[str]:
    """What ``BoundedLines`` hands the SDK's reader for the server's ``chunks``."""
    from toolpacks.packs.mcp._relay import BoundedLines

    async def run() -> list[str]:
        send, receive = anyio.create_memory_object_stream[bytes](len(chunks) + 1)
        for chunk in chunks:
            send.send_nowait(chunk)
        send.close()
        out: list[str] = []
        async for text in BoundedLines(receive, cap, "test"):  # type: ignore[arg-type]
            out.append(text)
        return out

    return anyio.run(run)


def test_the_sdk_reader_is_handed_whole_lines_only() -> None:
    """Every piece ends at a line end, so the SDK's ``buffer + chunk`` never grows (linear)."""
    line = b'{"jsonrpc": "2.0", "id": 1, "result": {"text": "' + b"y" * 300_000 + b'"}}\n'
    chunks = [line[i : i + 65536] for i in range(0, len(line), 65536)] + [b'{"a": 1}\n{"b"']
    out = frames(chunks, MIB)
    assert all(piece.endswith("\n") for piece in out)
    assert "".join(out) == line.decode() + '{"a": 1}\n'  # the unfinished line is dropped at EOF


def test_an_oversized_response_becomes_an_error_for_its_request_id() -> None:
    """The request the oversized message answers gets an error naming the cap."""
    line = b'{"jsonrpc":"2.0","id":"r-7","result":{"x":"' + b"z" * 5000 + b'"}}\n'
    out = frames([line[:3000], line[3000:], b'{"jsonrpc":"2.0","id":8,"result":{}}\n'], 1024)
    import json

    error, after = (json.loads(piece) for piece in out)
    assert error["id"] == "r-7"
    assert "1 KiB" in error["error"]["message"]
    assert after == {"jsonrpc": "2.0", "id": 8, "result": {}}


def test_an_oversized_message_without_a_request_to_fail_is_dropped_or_ends_the_session() -> None:
    """Oversized, but no call waits on it: a notification is dropped, an untold answer ends.

    An answer whose id is not near its start cannot be tied to a call, so the stream ends
    (and the server is started again at the next call).
    """
    notification = b'{"jsonrpc":"2.0","method":"notifications/message","params":"' + b"n" * 5000
    after = b'{"jsonrpc":"2.0","id":2,"result":{}}\n'
    assert frames([notification + b'"}\n', after], 1024) == [after.decode()]
    untold = b'{"result":{"x":"' + b"u" * 100_000 + b'"},"id":3,"jsonrpc":"2.0"}\n'
    assert frames([untold, after], 1024) == []


def test_stdout_lines_that_are_not_messages_are_dropped() -> None:
    """A server printing text on stdout: dropped here, never logged by the SDK with its text."""
    out = frames([b"debug: token=abc\n", b'{"jsonrpc":"2.0","id":1,"result":{}}\n'], MIB)
    assert out == ['{"jsonrpc":"2.0","id":1,"result":{}}\n']


# -- stderr -------------------------------------------------------------------------------------


def test_stderr_without_a_newline_is_read_in_bounded_pieces() -> None:
    """50 MB of stderr with no newline: the pipe never holds more than a bound of it."""
    tail: collections.deque[str] = collections.deque(maxlen=20)
    done = threading.Event()
    tracemalloc.start()
    try:
        pipe = StderrPipe("noisy", tail, done.set)
        chunk = b"x" * MIB
        fd = pipe.writer.fileno()
        for _ in range(50):
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
        os.write(fd, b"\nlast line\n")
        pipe.writer.close()
        assert done.wait(30), "the pipe's reader never saw the end of stderr"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * MIB  # the whole 50 MB line was never held
    assert pipe.peak_buffered <= 4 * _transport._READ_BYTES + _transport._MAX_LINE
    assert list(tail)[-1] == "last line"
    assert len(tail[-2]) <= _transport._MAX_LINE + 20
    assert tail[-2].startswith("xxxx")


@pytest.mark.slow
def test_a_server_writing_50_mb_of_stderr_without_a_newline_still_works(
    make_host: Callable[..., Host],
) -> None:
    """The server's stderr is drained in bounded pieces; it starts and answers as usual."""
    host = make_host(env={"STDERR_NOISE": str(50 * MIB)})
    toolset = host.toolset()
    assert value(call(toolset, "echo", {"text": "hi"})) == "hi"
    connection = host.load("big").tools["big.echo"].fn.connection
    pipe = connection.stderr
    assert pipe is not None
    assert pipe.peak_buffered <= 4 * _transport._READ_BYTES + _transport._MAX_LINE
    assert "stderr noise written" in connection.stderr_tail
