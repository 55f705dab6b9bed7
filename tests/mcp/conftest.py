"""Helpers for the MCP tests: a demo pack, a served agent, and a blocking official MCP client."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

pytest.importorskip("mcp")

import mcp_types
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

SERVE_SCRIPT = '''
import sys

sys.path.insert(0, {here!r})

import demo_pack
from toolpacks import Host
from toolpacks.mcp._server import serve_stdio

host = Host({config!r}, discover=False)
host.add_pack(demo_pack, name="demo")
serve_stdio(host.toolset({agent!r}))
'''

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
