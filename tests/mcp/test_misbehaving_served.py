"""Tools that misbehave, served over stdio and HTTP: the server answers, and the next call.

Over stdio (the official client, and raw JSON-RPC lines) and over HTTP, every exception kind
is an error result and the server answers the next call; a pack whose sync calls block does
not starve another pack; a tool that prints to stdout does not corrupt the wire; and JSON-RPC
edge cases (a batch array, a null id, an unknown notification, string ids) are pinned.
"""

from __future__ import annotations

import asyncio
import json
import signal
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import conftest
from .conftest import (
    BlockingClient,
    HttpServer,
    RawServer,
    result_text,
    serve_params,
    text_of,
)

KINDS = [
    "StopIteration",
    "StopAsyncIteration",
    "GeneratorExit",
    "KeyboardInterrupt",
    "SystemExit",
    "OwnBase",
    "UnprintableError",
    "UnprintableToolError",
    "ValueError",
]
SHAPES = ["sync", "timed", "async", "gen", "agen"]

PACK = '''
"""Tools that misbehave: raising every kind of exception, printing, blocking."""

import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

from toolpacks import ToolError, hookimpl, tool


class OwnBase(BaseException):
    """A BaseException subclass of a tool's own."""


class UnprintableError(Exception):
    def __str__(self):
        raise RuntimeError("no text")


class UnprintableToolError(ToolError):
    def __str__(self):
        raise RuntimeError("no text")


KINDS = {k.__name__: k for k in (
    StopIteration, StopAsyncIteration, GeneratorExit, KeyboardInterrupt, SystemExit,
    OwnBase, UnprintableError, UnprintableToolError, ValueError,
)}


def _raising(shape, kind):
    if shape in ("sync", "timed"):
        def fn() -> int:
            raise kind()
    elif shape == "async":
        async def fn() -> int:
            raise kind()
    elif shape == "gen":
        def fn() -> Iterator[int]:
            yield 1
            raise kind()
    else:
        async def fn() -> AsyncIterator[int]:
            yield 1
            raise kind()
    fn.__doc__ = "Raise."
    timeout = 30 if shape == "timed" else None
    return tool(name=f"{shape}_{kind.__name__.lower()}", timeout=timeout)(fn)


def _hooked(kind):
    @tool(name=f"hooked_{kind.__name__.lower()}")
    def fn() -> str:
        """A tool whose before hook raises."""
        return "ran"

    @fn.before_invoke
    def hook(**_):
        raise kind()

    return fn


@tool
def fine() -> str:
    """Answer."""
    return "fine"


@tool
def shout() -> str:
    """Print to stdout every way Python code can."""
    print("print: not JSON {")
    print("print flushed", flush=True)
    sys.stdout.write("sys.stdout.write\\n")
    sys.stdout.flush()
    os.write(1, b"os.write(1)\\n")
    sys.__stdout__.write("sys.__stdout__\\n")
    sys.__stdout__.flush()
    return "shouted"


@tool
async def shout_async() -> str:
    """Print from the event loop's thread."""
    print("async print {", flush=True)
    os.write(1, b"async os.write(1)\\n")
    return "shouted"


@tool
def shout_thread() -> str:
    """Print from a thread of the tool's own."""
    t = threading.Thread(target=lambda: (print("thread {", flush=True), os.write(1, b"t\\n")))
    t.start()
    t.join()
    return "shouted"


@tool
def hold(release: str) -> str:
    """Wait (in a worker thread) until the file ``release`` exists (60 s at most)."""
    deadline = time.monotonic() + 60
    while not Path(release).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return "released"


@hookimpl
def register_tools(register):
    for shape in ("sync", "timed", "async", "gen", "agen"):
        for kind in KINDS.values():
            register(_raising(shape, kind))
    for kind in KINDS.values():
        register(_hooked(kind))
    for t in (fine, shout, shout_async, shout_thread, hold):
        register(t)
'''

QUICK_PACK = '''
"""A pack of one quick sync tool."""

from toolpacks import hookimpl, tool


@tool
def answer() -> str:
    """Answer at once (in a worker thread)."""
    return "answer"


@hookimpl
def register_tools(register):
    register(answer)
'''

CONFIG = """
[agents.raw]
packs = ["misbehaving", "quick"]
"""


def _dist(directory: Path, name: str, module: str, source: str) -> None:
    (directory / f"{module}.py").write_text(textwrap.dedent(source))
    dist = directory / f"toolpacks_{name}-0.1.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: toolpacks-{name}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[toolpacks]\n{name} = {module}\n")


def write_packs(directory: Path) -> Path:
    """Write both packs (discoverable from ``directory``) and a config serving agent ``raw``."""
    _dist(directory, "misbehaving", "misbehaving_pack", PACK)
    _dist(directory, "quick", "quick_pack", QUICK_PACK)
    config = directory / "toolpacks.toml"
    config.write_text(CONFIG)
    return config


# -- stdio, the official client -----------------------------------------------------------------


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BlockingClient]:
    directory = tmp_path_factory.mktemp("misbehaving")
    config = write_packs(directory)
    served = BlockingClient(serve_params(directory, config, "raw"), directory / "stderr.log")
    served.connect()
    try:
        yield served
    finally:
        served.close()


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", KINDS)
def test_every_exception_kind_is_an_error_result_over_stdio(
    client: BlockingClient, kind: str, shape: str
) -> None:
    name = f"{shape}_{kind.lower()}"
    result = client.call(name, {})
    assert result.is_error
    assert f"Tool '{name}' failed" in text_of(result)
    after = client.call("fine", {})
    assert not after.is_error
    assert text_of(after) == "fine"


@pytest.mark.parametrize("kind", KINDS)
def test_a_hook_raising_any_kind_is_an_error_result_over_stdio(
    client: BlockingClient, kind: str
) -> None:
    result = client.call(f"hooked_{kind.lower()}", {})
    assert result.is_error
    assert text_of(client.call("fine", {})) == "fine"


@pytest.mark.parametrize("name", ["shout", "shout_async", "shout_thread"])
def test_a_tool_printing_to_stdout_does_not_corrupt_the_wire(
    client: BlockingClient, name: str
) -> None:
    """What the tool prints goes to stderr; the client reads only JSON-RPC on stdout."""
    for _ in range(2):
        result = client.call(name, {})
        assert not result.is_error, text_of(result)
        assert text_of(result) == "shouted"
    assert text_of(client.call("fine", {})) == "fine"


# -- stdio, raw lines -----------------------------------------------------------------------------


@pytest.fixture
def raw(tmp_path: Path) -> Iterator[RawServer]:
    """Agent ``raw`` of the two packs above, spoken to with raw JSON-RPC lines."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(conftest, "write_hostile", write_packs)
        server = RawServer(tmp_path)
    try:
        server.initialize()
        yield server
    finally:
        (tmp_path / "release").write_text("go")  # nothing stays blocked
        server.kill()


@pytest.mark.parametrize("name", ["shout", "shout_async", "shout_thread"])
def test_every_line_on_stdout_is_json_rpc_while_a_tool_prints(raw: RawServer, name: str) -> None:
    """The client's stdout carries nothing but JSON-RPC (a client may drop junk silently)."""
    raw.send({"jsonrpc": "2.0", "id": "shout", "method": "tools/call", "params": {"name": name}})
    raw.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
    seen = [json.loads(raw.receive_line()) for _ in range(2)]  # junk fails to decode here
    assert sorted(m["id"] for m in seen) == ["after", "shout"]
    (shouted,) = (m for m in seen if m["id"] == "shout")
    assert result_text(shouted["result"]) == "shouted"
    raw.close_stdin()
    assert raw.wait(30) is not None
    assert raw.rest() == []  # nothing printed reaches stdout at exit either
    for words in ("print: not JSON", "os.write(1)", "sys.__stdout__"):
        if name == "shout":
            assert words in raw.stderr()


BLOCKED = 40
"""Blocked calls of one pack: more than any default thread pool holds (32 at most)."""


def test_a_pack_whose_sync_calls_block_does_not_starve_another_pack_over_stdio(
    raw: RawServer, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    held = []
    for _ in range(BLOCKED):
        request_id = raw.new_id()
        held.append(request_id)
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "hold", "arguments": {"release": str(release)}},
            }
        )
    assert result_text(raw.call("answer", {})) == "answer"
    release.write_text("go")
    answers: dict[int, str] = {}
    while len(answers) < BLOCKED:  # in any order
        message = raw.receive(timeout=60)
        answers[message["id"]] = result_text(message["result"])
    assert answers == dict.fromkeys(held, "released")


@pytest.mark.parametrize("kind", ["systemexit", "keyboardinterrupt"])
def test_a_real_sigint_still_stops_the_server_after_tools_raised_it(
    raw: RawServer, kind: str
) -> None:
    for shape in SHAPES:
        assert raw.call(f"{shape}_{kind}", {})["isError"] is True
    assert result_text(raw.call("fine", {})) == "fine"
    raw.proc.send_signal(signal.SIGINT)
    assert raw.wait(30) is not None, "the server did not stop on SIGINT"


def test_a_batch_array_is_one_invalid_request_and_nothing_in_it_runs(raw: RawServer) -> None:
    """MCP has no batches: an array is answered with one -32600 (id null); its ping is not."""
    raw.send('[{"jsonrpc": "2.0", "id": 900, "method": "ping"}]')
    answer = raw.receive()
    assert answer["id"] is None
    assert answer["error"]["code"] == -32600
    assert "array" in answer["error"]["message"]
    raw.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
    assert raw.receive() == {"jsonrpc": "2.0", "id": "after", "result": {}}


def test_a_request_with_a_null_id_is_answered_not_taken_for_a_notification(
    raw: RawServer,
) -> None:
    """A null id is not a notification: the client waits for an answer, so it gets -32600."""
    raw.send({"jsonrpc": "2.0", "id": None, "method": "ping"})
    answer = raw.receive()
    assert answer["id"] is None
    assert answer["error"]["code"] == -32600


def test_an_unknown_notification_is_never_answered_and_string_ids_keep_their_type(
    raw: RawServer,
) -> None:
    raw.send({"jsonrpc": "2.0", "method": "notifications/no_such_thing", "params": {}})
    raw.send({"jsonrpc": "2.0", "id": "7", "method": "ping"})
    raw.send({"jsonrpc": "2.0", "id": 7, "method": "ping"})
    first, second = raw.receive(), raw.receive()
    assert first == {"jsonrpc": "2.0", "id": "7", "result": {}}
    assert second == {"jsonrpc": "2.0", "id": 7, "result": {}}


# -- HTTP -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """Agent ``raw`` of the two packs above over HTTP on loopback (no token)."""
    directory = tmp_path_factory.mktemp("misbehaving-http")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(conftest, "write_http_demo", write_packs)
        server = HttpServer(directory, ["--agent", "raw"])
    try:
        yield server
    finally:
        server.kill()


def _http_call(server: HttpServer, name: str) -> Any:
    from .test_http import call

    async def main() -> Any:
        return await asyncio.wait_for(call(server.url(), name, {}, token=None), 30)

    return asyncio.run(main())


@pytest.mark.parametrize("shape", ["sync", "async", "gen"])
@pytest.mark.parametrize("kind", KINDS)
def test_every_exception_kind_is_an_error_result_over_http(
    http: HttpServer, kind: str, shape: str
) -> None:
    """After the bad call the same worker still answers (it used to answer 503 for ever)."""
    name = f"{shape}_{kind.lower()}"
    result = _http_call(http, name)
    assert result.is_error
    assert f"Tool '{name}' failed" in text_of(result)
    after = _http_call(http, "fine")
    assert not after.is_error
    assert text_of(after) == "fine"
