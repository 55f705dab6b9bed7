"""Helpers for the MCP tests: a demo pack, a served agent, and a blocking official MCP client."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import mcp_types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

T = TypeVar("T")

CALL_TIMEOUT = 20.0
"""Seconds any single MCP exchange in these tests may take before the test fails."""

DEMO_PACK = '''
"""A demo pack for the MCP tests."""

from dataclasses import dataclass

from toolpacks import ToolError, hookimpl, tool


@dataclass
class Forecast:
    """A weather forecast."""

    city: str
    days: int
    summary: str


@tool(read_only=True, idempotent=True, title="Add numbers")
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(read_only=True)
def forecast(city: str, days: int = 1) -> Forecast:
    """Forecast the weather of a city.

    Args:
        city: The city name.
        days: How many days ahead.
    """
    return Forecast(city, days, "sunny")


@tool
def explode() -> str:
    """Always fails with an unexpected error."""
    raise RuntimeError("db password is hunter2")


@tool
def refuse() -> str:
    """Always fails on purpose."""
    raise ToolError("quota exceeded, try tomorrow")


@tool(require_approval=True, destructive=True)
def wipe(path: str) -> str:
    """Delete everything under a path."""
    return f"wiped {path}"


@hookimpl
def register_tools(register):
    for t in (add, forecast, explode, refuse, wipe):
        register(t)
'''

SERVE_SCRIPT = """
import sys

sys.path.insert(0, {here!r})

import demo_pack
from toolpacks import Host
from toolpacks.mcp._server import serve_stdio

host = Host({config!r}, discover=False)
host.add_pack(demo_pack, name="demo")
serve_stdio(host.toolset({agent!r}))
"""

CONFIG = """
[agents.assistant]
packs = ["demo"]
"""

SERVE_VIA_CLI = True
"""Start the served agent with ``python -m toolpacks serve`` (needs entry-point discovery)."""


def write_demo(directory: Path) -> Path:
    """Write the demo pack (importable and discoverable from ``directory``) and a config."""
    (directory / "demo_pack.py").write_text(textwrap.dedent(DEMO_PACK))
    dist = directory / "toolpacks_demo-0.1.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toolpacks-demo\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[toolpacks]\ndemo = demo_pack\n")
    config = directory / "toolpacks.toml"
    config.write_text(CONFIG)
    return config


def serve_params(directory: Path, config: Path, agent: str) -> StdioServerParameters:
    """How to start ``toolpacks serve --agent AGENT`` over stdio for the demo config."""
    if SERVE_VIA_CLI:
        args = ["-m", "toolpacks", "serve", "--agent", agent, "--config", str(config)]
        return StdioServerParameters(
            command=sys.executable, args=args, env={"PYTHONPATH": str(directory)}
        )
    script = directory / "serve_demo.py"
    script.write_text(SERVE_SCRIPT.format(here=str(directory), config=str(config), agent=agent))
    return StdioServerParameters(command=sys.executable, args=[str(script)])


class BlockingClient:
    """The official MCP client, connected over stdio, driven from a background event loop."""

    def __init__(self, params: StdioServerParameters, errlog: Path) -> None:
        self._params = params
        self._errlog_path = errlog
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._stop: asyncio.Event | None = None
        self._client: Client | None = None
        self._done: Any = None

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the client's loop and return its result (bounded by a timeout)."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(CALL_TIMEOUT)

    def connect(self) -> None:
        """Start the server and complete the handshake."""
        ready: asyncio.Future[None] = self._loop.create_future()

        async def session() -> None:
            self._stop = asyncio.Event()
            with self._errlog_path.open("w") as errlog:
                try:
                    async with Client(stdio_client(self._params, errlog=errlog)) as client:
                        self._client = client
                        ready.set_result(None)
                        await self._stop.wait()
                except BaseException as exc:
                    if not ready.done():
                        ready.set_exception(exc)
                    raise

        async def start() -> None:
            self._done = asyncio.ensure_future(session())
            await ready

        self.run(start())

    @property
    def client(self) -> Client:
        """The connected client."""
        assert self._client is not None
        return self._client

    def list_tools(self) -> dict[str, mcp_types.Tool]:
        """Every tool the server lists, by name."""
        result = self.run(self.client.list_tools())
        return {t.name: t for t in result.tools}

    def call(self, name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call a tool."""
        return self.run(self.client.call_tool(name, arguments))

    def close(self) -> None:
        """Disconnect (the server exits) and stop the loop."""

        async def stop() -> None:
            if self._stop is not None:
                self._stop.set()
            if self._done is not None:
                await asyncio.wait([self._done], timeout=CALL_TIMEOUT)

        try:
            self.run(stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)
            self._loop.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BlockingClient]:
    """The demo agent served over stdio in a subprocess, with the official client connected."""
    directory = tmp_path_factory.mktemp("served")
    config = write_demo(directory)
    client = BlockingClient(serve_params(directory, config, "assistant"), directory / "stderr.log")
    client.connect()
    try:
        yield client
    finally:
        client.close()


def run_bounded(coro: Any, timeout: float = 20.0) -> Any:
    """Run a test coroutine within ``timeout`` s; a lone error in a task group is raised alone."""
    try:
        return asyncio.run(asyncio.wait_for(coro, timeout))
    except BaseExceptionGroup as group:
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]
        raise leaf from group


def text_of(result: mcp_types.CallToolResult) -> str:
    """The text blocks of a result, joined."""
    return "\n".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))


def pid_alive(pid: int) -> bool:
    """Whether a process exists (and is not a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists():
        try:
            return stat.read_text().split(") ", 1)[1][0] != "Z"
        except (OSError, IndexError):
            return False
    return True


def child_pids(marker: str) -> list[int]:
    """PIDs of this process's children whose command line contains ``marker`` (Linux)."""
    me = os.getpid()
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.split(") ", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == me and marker in cmdline and pid_alive(int(entry.name)):
            found.append(int(entry.name))
    return found


# -- a served agent spoken to with raw JSON-RPC lines ------------------------------------------

HOSTILE_PACK = '''
"""Tools for the raw JSON-RPC tests: typed parameters, slow, stuck and raising tools."""

import threading
import time
from pathlib import Path
from typing import Any

from toolpacks import hookimpl, tool


class Boom(BaseException):
    """Not an Exception: a BaseException subclass of a tool's own."""


def _mark(marker: str) -> None:
    if marker:
        Path(marker).write_text("started")


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def ratio(x: float) -> float:
    """Return a number."""
    return x


@tool
def count(n: int) -> int:
    """Return an integer."""
    return n


@tool
def total(items: list[int]) -> int:
    """Sum integers."""
    return sum(items)


@tool
def size(text: str) -> int:
    """Length of a text."""
    return len(text)


@tool
def flag(on: bool) -> bool:
    """Return a boolean."""
    return on


@tool
def depth(data: Any) -> int:
    """How deeply a value nests."""
    level = 0
    while isinstance(data, list | dict) and data:
        data = data[0] if isinstance(data, list) else next(iter(data.values()))
        level += 1
    return level


@tool
def big(chars: int) -> str:
    """A text of the given length."""
    return "x" * chars


@tool
def big_object(chars: int) -> dict[str, str]:
    """An object holding a text of the given length."""
    return {"text": "y" * chars}


@tool
def nap(seconds: float, marker: str = "") -> str:
    """Sleep (in a worker thread), then answer."""
    _mark(marker)
    time.sleep(seconds)
    return f"slept {seconds}"


@tool
def hang(marker: str = "") -> str:
    """Never return (a sync tool with no timeout)."""
    _mark(marker)
    threading.Event().wait()
    return "never"


@tool
def exit_now() -> str:
    """Raise SystemExit."""
    raise SystemExit(5)


@tool
def interrupt() -> str:
    """Raise KeyboardInterrupt."""
    raise KeyboardInterrupt


@tool
async def boom() -> str:
    """Raise a BaseException subclass."""
    raise Boom("boom")


@hookimpl
def register_tools(register):
    for t in (add, ratio, count, total, size, flag, depth, big, big_object, nap, hang,
              exit_now, interrupt, boom):
        register(t)
'''

RAW_TIMEOUT = 120.0
"""A ceiling, not an expectation: a wait for a line ends when the line comes or the server
exits (end of output), so a loaded machine makes a test slower, never red; only a server that
is alive and silent for this long fails it."""


def write_hostile(directory: Path) -> Path:
    """Write the hostile pack (discoverable from ``directory``) and a config serving it."""
    (directory / "hostile_pack.py").write_text(textwrap.dedent(HOSTILE_PACK))
    dist = directory / "toolpacks_hostile-0.1.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toolpacks-hostile\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[toolpacks]\nhostile = hostile_pack\n")
    config = directory / "toolpacks.toml"
    config.write_text('[agents.raw]\npacks = ["hostile"]\n')
    return config


class RawServer:
    """``toolpacks serve --agent raw`` in a subprocess, driven with raw JSON-RPC lines."""

    def __init__(self, directory: Path, env: dict[str, str] | None = None) -> None:
        config = write_hostile(directory)
        self.directory = directory
        self.errlog = directory / "stderr.log"
        environ = {**os.environ, "PYTHONPATH": str(directory), **(env or {})}
        args = ["-m", "toolpacks", "serve", "--agent", "raw", "--config", str(config)]
        with self.errlog.open("wb") as errlog:
            self.proc = subprocess.Popen(
                [sys.executable, *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errlog,
                env=environ,
                cwd=directory,
            )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._next_id = 0
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")  # end of output

    def rest(self, timeout: float = RAW_TIMEOUT) -> list[dict[str, Any]]:
        """Every message still to come, once the server has closed its stdout."""
        messages: list[dict[str, Any]] = []
        while line := self.receive_line(timeout):
            messages.append(json.loads(line))
        return messages

    def send(self, line: bytes | str | dict[str, Any]) -> None:
        """Write one line (a dict is encoded as JSON) to the server's stdin."""
        if isinstance(line, dict):
            line = json.dumps(line)
        data = line.encode() if isinstance(line, str) else line
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def receive_line(self, timeout: float = RAW_TIMEOUT) -> bytes:
        """The next line the server writes (the test fails after ``timeout`` seconds)."""
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no response within {timeout} s; stderr: {self.stderr()[-2000:]}")

    def receive(self, timeout: float = RAW_TIMEOUT) -> dict[str, Any]:
        """The next message the server writes, decoded."""
        message: dict[str, Any] = json.loads(self.receive_line(timeout))
        return message

    def response(self, request_id: Any, timeout: float = RAW_TIMEOUT) -> dict[str, Any]:
        """The response with ``request_id`` (messages before it are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.receive(max(0.01, deadline - time.monotonic()))
            if message.get("id") == request_id and "method" not in message:
                return message

    def new_id(self) -> int:
        """A request id not used before."""
        self._next_id += 1
        return self._next_id

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and return its response."""
        request_id = self.new_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.response(request_id)

    def initialize(self) -> None:
        """The MCP handshake."""
        answer = self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        )
        assert "result" in answer, answer
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call_text(self, name: str, arguments: str) -> dict[str, Any]:
        """Call a tool with ``arguments`` given as JSON text (sent as is); its response."""
        request_id = self.new_id()
        self.send(
            f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
            f'"params":{{"name":{json.dumps(name)},"arguments":{arguments}}}}}'
        )
        return self.response(request_id)

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call a tool; its ``CallToolResult`` (the test fails on a protocol error)."""
        answer = self.request("tools/call", {"name": name, "arguments": arguments})
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    def close_stdin(self) -> None:
        """End the server's input."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait(self, timeout: float) -> int | None:
        """The exit code, or None when the process is still running after ``timeout`` s."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        return self.errlog.read_text(errors="replace")

    def kill(self) -> None:
        """Stop the process (teardown)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()


@pytest.fixture
def raw_server(tmp_path: Path) -> Iterator[Callable[..., RawServer]]:
    """Start raw servers (each initialized) in ``tmp_path``; all are killed at teardown."""
    started: list[RawServer] = []

    def start(env: dict[str, str] | None = None) -> RawServer:
        directory = tmp_path / f"server{len(started)}"
        directory.mkdir()
        server = RawServer(directory, env)
        started.append(server)
        server.initialize()
        return server

    yield start
    for server in started:
        server.kill()


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    """One initialized raw server shared by a module's tests."""
    server = RawServer(tmp_path_factory.mktemp("raw"))
    try:
        server.initialize()
        yield server
    finally:
        server.kill()


def result_text(result: dict[str, Any]) -> str:
    """The text blocks of a raw ``CallToolResult``, joined."""
    return "\n".join(b["text"] for b in result.get("content", []) if b.get("type") == "text")


# -- a served agent over streamable HTTP --------------------------------------------------------

HTTP_PACK = '''
"""Tools for the HTTP tests: plain, structured, raising, and ones that wait for the test."""

import os
import time
from pathlib import Path

from toolpacks import hookimpl, tool


def _wait(started: str, release: str) -> None:
    Path(started).write_text("started")
    deadline = time.monotonic() + 30
    while not Path(release).exists() and time.monotonic() < deadline:
        time.sleep(0.01)


@tool(read_only=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def pid() -> int:
    """The serving process id."""
    return os.getpid()


@tool
def hold(started: str, release: str) -> int:
    """Mark ``started``, wait (in a worker thread) until ``release`` exists; the process id."""
    _wait(started, release)
    return os.getpid()


@tool
async def block_loop(started: str, release: str) -> int:
    """Like ``hold``, but blocking the event loop (a badly behaved tool); the process id."""
    _wait(started, release)
    return os.getpid()


@tool
def exit_now() -> str:
    """Raise SystemExit."""
    raise SystemExit(5)


@tool
def big(chars: int) -> dict[str, str]:
    """An object holding a text of the given length."""
    return {"text": "y" * chars}


@hookimpl
def register_tools(register):
    for t in (add, pid, hold, block_loop, exit_now, big):
        register(t)
'''

HTTP_CONFIG = """
[agents.alpha]
packs = ["web"]

[agents.beta]
packs = ["web"]
exclude = ["web.exit_now", "web.big", "web.hold", "web.block_loop"]
"""

HTTP_TIMEOUT = 30.0
"""Seconds a test waits for the HTTP server to start, answer or exit before it fails."""


def write_http_demo(directory: Path) -> Path:
    """Write the HTTP test pack (discoverable from ``directory``) and its two-agent config."""
    (directory / "web_pack.py").write_text(textwrap.dedent(HTTP_PACK))
    dist = directory / "toolpacks_web-0.1.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toolpacks-web\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[toolpacks]\nweb = web_pack\n")
    config = directory / "toolpacks.toml"
    config.write_text(HTTP_CONFIG)
    return config


class HttpServer:
    """``toolpacks serve --http 127.0.0.1:0 ...`` in a subprocess; its URL read from stderr."""

    def __init__(
        self,
        directory: Path,
        args: list[str],
        env: dict[str, str] | None = None,
        config: Path | None = None,
    ) -> None:
        config = config or write_http_demo(directory)
        environ = {**os.environ, "PYTHONPATH": str(directory), **(env or {})}
        command = [sys.executable, "-m", "toolpacks", "serve", "--config", str(config)]
        self.proc = subprocess.Popen(
            [*command, "--http", "127.0.0.1:0", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=environ,
            cwd=directory,
        )
        self.directory = directory
        self.lines: list[str] = []
        self._base: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.base = self._wait_announced()
        """``http://127.0.0.1:PORT``."""

    def _pump(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            line = raw.decode(errors="replace")
            self.lines.append(line)
            if "serving http://" in line:
                self._base.put(line.split("serving ", 1)[1].split("/agents/", 1)[0])
        self._base.put("")

    def _wait_announced(self) -> str:
        try:
            base = self._base.get(timeout=HTTP_TIMEOUT)
        except queue.Empty:
            base = ""
        if not base:
            self.kill()
            pytest.fail(f"the HTTP server did not start; stderr:\n{self.stderr()}")
        return base

    def url(self, agent: str | None = None) -> str:
        """The MCP endpoint of ``agent`` (``/mcp`` without one)."""
        return f"{self.base}/agents/{agent}/mcp" if agent else f"{self.base}/mcp"

    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        return "".join(self.lines)

    def wait(self, timeout: float = HTTP_TIMEOUT) -> int | None:
        """The exit code, or None when the process is still running after ``timeout`` s."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """Stop the process and its workers (teardown)."""
        for child in worker_pids(self.proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, 9)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)


def worker_pids(parent: int, marker: str = "") -> list[int]:
    """PIDs of the live children of ``parent`` whose command line contains ``marker`` (Linux)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().split(") ", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and marker in cmdline and pid_alive(int(entry.name)):
            found.append(int(entry.name))
    return found


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[Callable[..., HttpServer]]:
    """Start HTTP servers (``start(*args, env=...)``) in ``tmp_path``; killed at teardown."""
    started: list[HttpServer] = []

    def start(*args: str, env: dict[str, str] | None = None) -> HttpServer:
        directory = tmp_path / f"http{len(started)}"
        directory.mkdir()
        server = HttpServer(directory, list(args), env)
        started.append(server)
        return server

    yield start
    for server in started:
        server.kill()
