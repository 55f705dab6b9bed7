"""MCP servers as packs: the real mcp-server-time, and small servers written for the tests."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Host, ToolResult, Toolset, hookimpl, tool
from toolpacks.exceptions import ToolConflictError

from .conftest import child_pids, pid_alive

TIME_SERVER = {
    "command": sys.executable,
    "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
    "tags": ["clock"],
    "timeout": 20,
}

SERVE_LOOP = """
def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()


for line in sys.stdin:
    request = json.loads(line)
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        continue
    params = request.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "probe", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result = call(params["name"], params.get("arguments") or {})
    elif method == "ping":
        result = {}
    else:
        error = {"code": -32601, "message": "Method not found"}
        send({"jsonrpc": "2.0", "id": rid, "error": error})
        continue
    send({"jsonrpc": "2.0", "id": rid, "result": result})
"""
"""The JSON-RPC loop of the hand-written test servers: a script defines ``TOOLS`` and
``call(name, arguments)`` (and imports ``json`` and ``sys``), then appends this."""

# A tiny MCP server written by hand (no SDK, so it starts in milliseconds and checks the client
# against an independent implementation): it reports its environment and pid, and can die.
PROBE_SERVER = (
    """
import json
import os
import sys

EMPTY = {"type": "object", "properties": {}}
TOOLS = [
    {"name": "environment", "description": "The environment.", "inputSchema": EMPTY,
     "outputSchema": {"type": "object"}},
    {"name": "pid", "description": "The process id.", "inputSchema": EMPTY},
    {"name": "die", "description": "Exit at once.", "inputSchema": EMPTY},
    {"name": "files.read", "description": "A dotted name.", "inputSchema": {
        "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
]


def call(name, arguments):
    if name == "environment":
        env = dict(os.environ)
        return {"content": [{"type": "text", "text": json.dumps(env)}], "structuredContent": env}
    if name == "pid":
        return {"content": [{"type": "text", "text": str(os.getpid())}]}
    if name == "die":
        os._exit(3)
    return {"content": [{"type": "text", "text": "contents of " + arguments["path"]}]}


"""
    + SERVE_LOOP
)


def call(toolset: Toolset, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
    """Call a tool from a fresh event loop, with a timeout."""
    return asyncio.run(asyncio.wait_for(toolset.call(name, arguments or {}), 20))


@pytest.fixture(scope="module")
def time_host() -> Iterator[Host]:
    """A host with the real mcp-server-time mounted as the pack ``time``."""
    host = Host(
        {
            "mcp_servers": {"time": TIME_SERVER},
            "agents": {
                "clock": {"packs": ["time"], "include_tags": ["clock"]},
                "narrow": {"packs": ["time"], "exclude": ["time.convert_time"]},
                "renamed": {"packs": ["time"], "rename": {"time.get_current_time": "now"}},
            },
        },
        discover=False,
    )
    yield host
    host.close()


@pytest.fixture
def probe_script(tmp_path: Path) -> Path:
    """The probe server's script."""
    path = tmp_path / "probe_server.py"
    path.write_text(textwrap.dedent(PROBE_SERVER))
    return path


def probe_host(script: Path, **server: Any) -> Host:
    """A host mounting the probe server as the pack ``probe``."""
    table = {"command": sys.executable, "args": [str(script)], "timeout": 20, **server}
    return Host({"mcp_servers": {"probe": table}}, discover=False)


# -- the real mcp-server-time -----------------------------------------------------------------


def test_time_server_tools_are_listed_under_its_pack(time_host: Host) -> None:
    """The server's tools become the pack ``time``, loaded lazily when a toolset needs them."""
    assert time_host.pack("time").status == "available"
    toolset = time_host.toolset("clock")
    info = time_host.pack("time")
    assert info.status == "loaded"
    assert info.source == "mcp"
    assert set(info.tools) == {"time.get_current_time", "time.convert_time"}
    assert toolset.names() == ["convert_time", "get_current_time"]
    assert toolset.qualified_name("get_current_time") == "time.get_current_time"


def test_time_server_tools_carry_schema_hints_and_tags(time_host: Host) -> None:
    """Input schema, output schema, annotations and configured tags come across."""
    t = time_host.toolset("clock").get("get_current_time")
    assert t.description == "Get current time in a specific timezone"
    assert t.input_schema["required"] == ["timezone"]
    assert t.output_schema is not None
    assert "datetime" in t.output_schema["properties"]
    assert t.hints.read_only is True
    assert t.hints.destructive is False
    assert t.tags == frozenset({"clock"})
    assert t.pack == "time"


def test_time_server_call_returns_structured_value(time_host: Host) -> None:
    """A call goes through tools/call; structuredContent becomes the value."""
    result = call(time_host.toolset("clock"), "get_current_time", {"timezone": "UTC"})
    assert result.is_error is False, result.content
    assert result.value["timezone"] == "UTC"
    assert result.value["datetime"].endswith("+00:00")
    assert json.loads(result.content)["timezone"] == "UTC"


def test_time_server_error_result_carries_its_message(time_host: Host) -> None:
    """An isError result from the server is an error result with the server's text."""
    result = call(time_host.toolset("clock"), "get_current_time", {"timezone": "Mars/Olympus"})
    assert result.is_error is True
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert "Invalid timezone" in result.content


def test_bad_arguments_are_caught_before_the_server(time_host: Host) -> None:
    """Arguments are validated against the server's schema, with per-argument messages."""
    result = call(time_host.toolset("clock"), "get_current_time", {"zone": "UTC"})
    assert result.is_error is True
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert {d.argument for d in result.error.details} == {"timezone", "zone"}
    assert "allowed arguments are: timezone" in result.content


def test_time_server_tools_filter_rename_and_namespace(time_host: Host) -> None:
    """Exclusion, renames and conflict policies apply to remote tools like any other."""
    assert time_host.toolset("narrow").names() == ["get_current_time"]
    renamed = time_host.toolset("renamed")
    assert renamed.names() == ["convert_time", "now"]
    assert call(renamed, "now", {"timezone": "UTC"}).is_error is False

    @tool
    def get_current_time(timezone: str) -> str:
        """A local tool with the same name."""
        return "local"

    class LocalPack:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(get_current_time)

    time_host.add_pack(LocalPack(), name="local")
    with pytest.raises(ToolConflictError, match="local"):
        time_host.toolset(packs=["time", "local"])
    prefixed = time_host.toolset(packs=["time", "local"], on_conflict="prefix")
    assert {"time_get_current_time", "local_get_current_time"} <= set(prefixed.names())


def test_host_close_stops_the_time_server(tmp_path: Path) -> None:
    """After host.close(), no mcp_server_time child process is left."""
    if not Path("/proc").is_dir():
        pytest.skip("needs /proc to find child processes")
    before = set(child_pids("mcp_server_time"))  # the module's own time server
    host = Host({"mcp_servers": {"time": TIME_SERVER}}, discover=False)
    host.toolset()
    started = set(child_pids("mcp_server_time")) - before
    assert len(started) == 1
    host.close()
    deadline = time.monotonic() + 5
    while started & set(child_pids("mcp_server_time")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not started & set(child_pids("mcp_server_time"))


# -- a probe server of our own ----------------------------------------------------------------


def test_server_gets_only_named_environment_variables(
    probe_script: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child sees the minimal default set plus the configured names, not host API keys."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret")
    monkeypatch.setenv("PROBE_SHARED", "shared-value")
    host = probe_host(probe_script, env=["PROBE_SHARED", "PROBE_UNSET"])
    try:
        toolset = host.toolset()
        env = call(toolset, "environment").value
        assert env["PROBE_SHARED"] == "shared-value"
        assert "OPENAI_API_KEY" not in env
        assert "sk-host-secret" not in json.dumps(env)
        allowed = {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "PROBE_SHARED"}
        # Python itself may add a few variables of its own (LC_CTYPE coercion).
        assert set(env) - allowed <= {"LC_CTYPE", "PYTHONCOERCECLOCALE"}
        assert any("PROBE_UNSET" in p for p in host.load("probe").problems)
    finally:
        host.close()


def test_server_env_values_from_config(probe_script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mapping of values sets exactly those variables (plus the default set)."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-host")
    host = probe_host(probe_script, env={"PROBE_MODE": "test"})
    try:
        env = call(host.toolset(), "environment").value
        assert env["PROBE_MODE"] == "test"
        assert "GITHUB_TOKEN" not in env
    finally:
        host.close()


def test_remote_names_are_sanitized_and_called_by_original_name(probe_script: Path) -> None:
    """A remote tool named ``files.read`` is ``probe.files_read`` and still calls ``files.read``."""
    host = probe_host(probe_script)
    try:
        toolset = host.toolset()
        assert "files_read" in toolset.names()
        assert toolset.qualified_name("files_read") == "probe.files_read"
        assert call(toolset, "files_read", {"path": "a.txt"}).value == "contents of a.txt"
    finally:
        host.close()


def test_close_leaves_no_server_process(probe_script: Path) -> None:
    """host.close() ends the server process."""
    host = probe_host(probe_script)
    pid = int(call(host.toolset(), "pid").value)
    assert isinstance(pid, int)
    assert pid_alive(pid)
    host.close()
    deadline = time.monotonic() + 5
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(pid)


def test_server_that_dies_gives_error_results_and_says_why(
    probe_script: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the server exits, calls are error results saying so; the pack's error says why."""
    from toolpacks.packs.mcp import _connection

    monkeypatch.setattr(_connection, "_now", lambda: 0.0)  # the restart delay never passes
    host = probe_host(probe_script)
    try:
        toolset = host.toolset()
        died = call(toolset, "die")
        assert died.is_error is True
        assert died.error is not None
        assert died.error.kind == "tool_error"
        after = call(toolset, "pid")
        assert after.is_error is True
        assert after.error is not None
        assert after.error.kind == "tool_error"
        assert "no longer available" in after.content
        info = host.pack("probe")
        assert info.status == "loaded"  # its tools stay listed; the next call restarts it
        assert info.error is not None
        assert "probe" in info.error
        assert "stopped after it was loaded" in info.error
    finally:
        host.close()


def test_server_killed_between_calls_is_detected(
    probe_script: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server killed while idle shows in the pack's error without any call being made."""
    from toolpacks.packs.mcp import _connection

    monkeypatch.setattr(_connection, "_now", lambda: 0.0)  # the restart delay never passes
    host = probe_host(probe_script)
    try:
        toolset = host.toolset()
        pid = int(call(toolset, "pid").value)
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while host.pack("probe").error is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "the server process exited" in (host.pack("probe").error or "")
        assert "no longer available" in call(toolset, "pid").content
    finally:
        host.close()


# -- start failures ---------------------------------------------------------------------------


def test_command_not_found_is_a_failed_pack() -> None:
    """A command that does not exist gives a failed pack saying so; other packs still load."""

    @tool
    def ping() -> str:
        """Pong."""
        return "pong"

    class Local:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(ping)

    host = Host(
        {"mcp_servers": {"ghost": {"command": "toolpacks-no-such-command-xyz"}}}, discover=False
    )
    host.add_pack(Local(), name="local")
    with host:
        toolset = host.toolset()
        assert toolset.names() == ["ping"]
        info = host.pack("ghost")
        assert info.status == "failed"
        assert info.error is not None
        assert "was not found" in info.error
        assert "toolpacks-no-such-command-xyz" in info.error


def test_crash_at_start_is_a_failed_pack_with_its_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that exits during the handshake is a failed pack quoting its stderr."""
    monkeypatch.setenv("CRASH_API_KEY", "sk-should-not-appear")
    script = (
        "import os, sys; print('fatal: bad setting', os.environ.get('CRASH_API_KEY'), "
        "file=sys.stderr); sys.exit(2)"
    )
    server = {"command": sys.executable, "args": ["-c", script], "env": ["CRASH_API_KEY"]}
    with Host({"mcp_servers": {"crashy": server}}, discover=False) as host:
        loaded = host.load("crashy")
        assert loaded.info.status == "failed"
        error = loaded.info.error or ""
        assert "exited during startup" in error
        assert "fatal: bad setting" in error
        assert "sk-should-not-appear" not in error


def test_silent_server_times_out_as_a_failed_pack() -> None:
    """A server that never answers fails after its timeout, and is stopped."""
    script = "import sys; sys.stdin.read()"
    server = {"command": sys.executable, "args": ["-c", script], "timeout": 1}
    started = time.monotonic()
    with Host({"mcp_servers": {"mute": server}}, discover=False) as host:
        info = host.load("mute").info
    assert info.status == "failed"
    assert info.error is not None
    assert "within 1 s" in info.error
    assert time.monotonic() - started < 10
    assert child_pids("sys.stdin.read()") == [] if Path("/proc").is_dir() else True


def test_missing_working_directory_is_a_failed_pack(tmp_path: Path) -> None:
    """A ``cwd`` that does not exist is reported before anything is started."""
    server = {"command": sys.executable, "cwd": "nowhere"}
    with Host({"mcp_servers": {"lost": server}}, discover=False) as host:
        info = host.load("lost").info
    assert info.status == "failed"
    assert info.error is not None
    assert "nowhere" in info.error


# -- conversions (no server needed) -----------------------------------------------------------


def test_tools_listing_follows_every_page() -> None:
    """Tool listing follows nextCursor through every page, and stops on a repeated cursor."""
    from mcp_types import ListToolsResult
    from mcp_types import Tool as McpTool

    from toolpacks.packs.mcp._connection import McpConnection, ServerSpec

    def page(names: list[str], cursor: str | None) -> ListToolsResult:
        tools = [McpTool(name=n, input_schema={"type": "object"}) for n in names]
        return ListToolsResult(tools=tools, next_cursor=cursor)

    class Paged:
        def __init__(self, pages: dict[str | None, ListToolsResult]) -> None:
            self.pages = pages

        async def list_tools(self, cursor: str | None = None) -> ListToolsResult:
            return self.pages[cursor]

    connection = McpConnection(ServerSpec(name="paged", command="unused"))
    three = Paged({None: page(["a"], "p2"), "p2": page(["b"], "p3"), "p3": page(["c"], None)})
    looping = Paged({None: page(["a"], "p2"), "p2": page(["b"], "p2")})
    listed = asyncio.run(connection._list_tools(three))  # type: ignore[arg-type]
    assert [t.name for t in listed] == ["a", "b", "c"]
    listed = asyncio.run(connection._list_tools(looping))  # type: ignore[arg-type]
    assert [t.name for t in listed] == ["a", "b"]


def test_result_conversion_prefers_structured_content_and_describes_media() -> None:
    """Structured content is the value; else the text, with images and resources described."""
    from mcp_types import (
        BlobResourceContents,
        CallToolResult,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
    )

    from toolpacks import ToolError
    from toolpacks.packs.mcp._client import result_value

    structured = CallToolResult(content=[TextContent(text="{}")], structured_content={"a": 1})
    assert result_value(structured) == {"a": 1}
    mixed = CallToolResult(
        content=[
            TextContent(text="Here is the chart."),
            ImageContent(data="aGVsbG8=", mime_type="image/png"),
            ResourceLink(uri="file:///tmp/report.pdf", name="report"),
            EmbeddedResource(
                resource=BlobResourceContents(
                    uri="file:///tmp/x.bin", blob="AAAA", mime_type="application/x"
                )
            ),
        ]
    )
    assert result_value(mixed).splitlines() == [
        "Here is the chart.",
        "[image: image/png, 5 bytes]",
        "[resource link: file:///tmp/report.pdf (report)]",
        "[resource: file:///tmp/x.bin, application/x, 3 bytes]",
    ]
    failed = CallToolResult(content=[TextContent(text="disk full")], is_error=True)
    with pytest.raises(ToolError, match="disk full"):
        result_value(failed)
