"""Mounted MCP servers over time: restarts with backoff, tool-list changes, approvals.

The servers are real subprocesses built with the official SDK (``MCPServer``), except one
hand-written server that speaks only the 2025 protocol revision, to cover the road where a
server announces changes (and asks for input) on its own rather than inside a subscription.
Restart delays run on a fake clock, so no test depends on how fast the machine is.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolpacks import ApprovalRequest, Host, ToolResult, Toolset
from toolpacks.exceptions import ConfigError
from toolpacks.host._lockfile import write_lock

from .conftest import pid_alive

pytestmark = pytest.mark.slow

CALL_TIMEOUT = 30.0
"""Seconds any one call may take before the test fails."""

# The remote server: the official SDK's MCPServer, over stdio (or streamable HTTP, see
# test_client_http.py). Every call it serves is appended to $CALL_LOG.
SERVER = '''
import os
import socket
import sys
from contextlib import suppress
from typing import Annotated

from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from pydantic import BaseModel

if os.environ.get("BROKEN_MARKER") and os.path.exists(os.environ["BROKEN_MARKER"]):
    print("fatal: the server is broken", file=sys.stderr)
    sys.exit(4)

server = MCPServer("remote")


def log(name):
    path = os.environ.get("CALL_LOG")
    if path:
        with open(path, "a") as log_file:
            log_file.write(name + "\\n")


async def announce(ctx):
    await ctx.notify_tools_changed()  # 2026-07-28: to subscriptions/listen streams
    with suppress(Exception):
        await ctx.session.send_tool_list_changed()  # 2025 revisions: unsolicited


def add(a: int, b: int) -> int:
    """Add two integers."""
    log("add")
    return a + b


server.add_tool(add)


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def crash() -> str:
    """Exit at once, in the middle of the call."""
    os._exit(3)


@server.tool()
def wipe(path: str) -> str:
    """Delete everything under a path."""
    log("wipe")
    return f"wiped {path}"


def extra(x: int) -> int:
    """Double a number."""
    return 2 * x


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `extra`, and announce the change."""
    server.add_tool(extra)
    await announce(ctx)
    return "grown"


@server.tool()
async def reword(ctx: Context) -> str:
    """Give `add` another description, and announce the change."""
    server.remove_tool("add")
    server.add_tool(add, description="Add two integers; also posts them somewhere.")
    await announce(ctx)
    return "reworded"


@server.tool()
async def shrink(ctx: Context) -> str:
    """Remove `wipe`, and announce the change."""
    server.remove_tool("wipe")
    await announce(ctx)
    return "shrunk"


class Confirm(BaseModel):
    ok: bool


def confirm(path: str) -> Elicit[Confirm]:
    return Elicit(f"Really delete everything under {path}?", Confirm)


@server.tool()
async def risky(path: str, answer: Annotated[ElicitationResult[Confirm], Resolve(confirm)]) -> str:
    """Delete everything under a path, after asking."""
    return f"{answer.action}: {path}"


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@server.tool()
async def greet(answer: Annotated[ElicitationResult[Name], Resolve(ask_name)]) -> str:
    """Greet whoever answers."""
    return answer.action


def serve_http(port_file, token):
    import uvicorn

    app = server.streamable_http_app()
    expected = f"Bearer {token}".encode()

    async def guarded(scope, receive, send):
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"www-authenticate", b"Bearer")]})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await app(scope, receive, send)

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", int(os.environ.get("SERVER_PORT", "0"))))
    sock.listen(64)
    with open(port_file + ".tmp", "w") as out:
        out.write(str(sock.getsockname()[1]))
    os.replace(port_file + ".tmp", port_file)
    config = uvicorn.Config(guarded, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    if len(sys.argv) > 1:
        serve_http(sys.argv[1], os.environ["SERVER_TOKEN"])
    else:
        server.run()
'''

# A server written by hand that speaks only the 2025-11-25 revision (no server/discover): it
# announces tool-list changes unsolicited and asks for input with elicitation/create.
LEGACY_SERVER = """
import json
import sys

EMPTY = {"type": "object", "properties": {}}
tools = [{"name": "grow", "description": "Add the tool extra.", "inputSchema": EMPTY},
         {"name": "risky", "description": "Ask, then act.", "inputSchema": EMPTY}]


def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()


def receive(wanted_id):
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("id") == wanted_id and "method" not in message:
            return message
    sys.exit(0)


for line in sys.stdin:
    request = json.loads(line)
    method, rid = request.get("method"), request.get("id")
    params = request.get("params") or {}
    if rid is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {"listChanged": True}},
                  "serverInfo": {"name": "legacy", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": tools}
    elif method == "tools/call" and params["name"] == "grow":
        tools.append({"name": "extra", "description": "New.", "inputSchema": EMPTY})
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        result = {"content": [{"type": "text", "text": "grown"}]}
    elif method == "tools/call" and params["name"] == "risky":
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
        send({"jsonrpc": "2.0", "id": "ask-1", "method": "elicitation/create",
              "params": {"mode": "form", "message": "Proceed?", "requestedSchema": schema}})
        answer = receive("ask-1")["result"]
        result = {"content": [{"type": "text", "text": json.dumps(answer, sort_keys=True)}]}
    else:
        error = {"code": -32601, "message": "Method not found"}
        send({"jsonrpc": "2.0", "id": rid, "error": error})
        continue
    send({"jsonrpc": "2.0", "id": rid, "result": result})
"""


def call(toolset: Toolset, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
    """Call a tool from a fresh event loop; the test fails if it takes too long."""
    return asyncio.run(asyncio.wait_for(toolset.call(name, arguments or {}), CALL_TIMEOUT))


def value(result: ToolResult) -> Any:
    """What the SDK server's tool returned (it wraps every value as ``{"result": ...}``)."""
    assert result.is_error is False, result.content
    return result.value["result"]


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    """Wait for ``condition`` (polling); fail the test naming ``what`` if it never holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting until {what}")
        time.sleep(0.02)


class Clock:
    """The clock restart delays are measured on, moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """Replace the connection's clock with one the test moves."""
    from toolpacks.packs.mcp import _connection

    fake = Clock()
    monkeypatch.setattr(_connection, "_now", fake)
    return fake


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """The SDK server's script, in the configuration's directory."""
    script = tmp_path / "remote_server.py"
    script.write_text(textwrap.dedent(SERVER))
    return script


def toml(value: Any) -> str:
    """``value`` as a TOML value (strings, numbers, booleans, lists, inline tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    return json.dumps(value)


def write_config(directory: Path, servers: dict[str, dict[str, Any]], extra: str = "") -> Path:
    """A toolpacks.toml in ``directory`` mounting ``servers``."""
    lines = []
    for name, table in servers.items():
        lines.append(f"[mcp_servers.{name}]")
        lines.extend(f"{key} = {toml(value)}" for key, value in table.items())
    path = directory / "toolpacks.toml"
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


@pytest.fixture
def make_host(tmp_path: Path, remote: Path) -> Iterator[Callable[..., Host]]:
    """Hosts mounting the SDK server as the pack ``remote``; all closed at teardown."""
    hosts: list[Host] = []

    def make(approval: Any = None, extra: str = "", **server: Any) -> Host:
        table = {
            "command": sys.executable,
            "args": [str(remote)],
            "timeout": 20,
            "env": {"CALL_LOG": str(tmp_path / "calls.log"), **server.pop("env", {})},
            **server,
        }
        config = write_config(tmp_path, {"remote": table}, extra)
        host = Host(config, discover=False, approval=approval)
        hosts.append(host)
        return host

    yield make
    for host in hosts:
        host.close()


def served_calls(tmp_path: Path) -> list[str]:
    """The calls the server executed, in order."""
    log = tmp_path / "calls.log"
    return log.read_text().split() if log.exists() else []


# -- restarts ---------------------------------------------------------------------------------


def test_crashed_server_is_restarted_at_the_next_call_after_the_delay(
    make_host: Callable[..., Host], clock: Clock
) -> None:
    """A server that exits mid-call: error results until the delay passes, then a new process."""
    host = make_host()
    toolset = host.toolset()
    first = call(toolset, "pid")
    assert first.is_error is False, first.content
    crashed = call(toolset, "crash")
    assert crashed.is_error is True
    # Whichever notices first names the cause: the call's closed connection, or the exit.
    assert "no longer available (" in crashed.content
    assert "after 0.5 s" in crashed.content
    info = host.pack("remote")
    assert info.status == "loaded"
    assert info.error is not None
    assert "stopped after it was loaded" in info.error

    backing_off = call(toolset, "pid")
    assert backing_off.is_error is True
    assert backing_off.error is not None
    assert backing_off.error.kind == "tool_error"
    assert "starts it again at the next call made after 0.5 s" in backing_off.content
    wait_until(lambda: not pid_alive(value(first)), "the crashed process is gone")

    clock.advance(0.5)
    second = call(toolset, "pid")
    assert second.is_error is False, second.content
    assert value(second) != value(first)
    assert host.pack("remote").error is None
    assert value(call(toolset, "add", {"a": 2, "b": 3})) == 5


def test_backoff_doubles_while_restarts_fail_and_resets_after_a_call(
    make_host: Callable[..., Host], clock: Clock, tmp_path: Path
) -> None:
    """0.5 s, then 1 s after a failed restart (quoting why); a served call resets it to 0.5 s."""
    marker = tmp_path / "broken"
    host = make_host(env={"BROKEN_MARKER": str(marker)})
    toolset = host.toolset()
    assert call(toolset, "crash").is_error is True
    marker.write_text("yes")
    clock.advance(0.5)
    failed = call(toolset, "pid")
    assert failed.is_error is True
    assert "starting it again failed" in failed.content
    assert "exited during startup" in failed.content
    assert "fatal: the server is broken" in failed.content
    assert "after 1.0 s" in failed.content
    assert "starting it again failed" in (host.pack("remote").error or "")
    clock.advance(0.5)
    assert "after 0.5 s" in call(toolset, "pid").content  # still waiting: 1 s in all
    marker.unlink()
    clock.advance(0.5)
    assert call(toolset, "pid").is_error is False
    assert call(toolset, "crash").is_error is True
    assert "after 0.5 s" in call(toolset, "pid").content  # reset by the served call


def test_server_killed_while_idle_is_noticed_and_restarted(
    make_host: Callable[..., Host], clock: Clock
) -> None:
    """A server killed between calls shows in the pack's error, and the next call restarts it."""
    import signal

    host = make_host()
    toolset = host.toolset()
    pid = value(call(toolset, "pid"))
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: host.pack("remote").error is not None, "the pack reports the death")
    assert "stopped after it was loaded" in (host.pack("remote").error or "")
    clock.advance(0.5)
    again = call(toolset, "pid")
    assert again.is_error is False, again.content
    assert value(again) != pid


def test_changed_script_is_not_restarted(
    make_host: Callable[..., Host], clock: Clock, remote: Path
) -> None:
    """A restart never runs a server script that changed since the host started it."""
    host = make_host()
    toolset = host.toolset()
    assert call(toolset, "crash").is_error is True
    remote.write_text(remote.read_text() + "\n# edited\n")
    clock.advance(0.5)
    refused = call(toolset, "pid")
    assert refused.is_error is True
    assert "its script changed since it was started" in refused.content
    assert "Host.reload()" in refused.content


def test_closed_host_calls_say_so_and_do_not_restart(make_host: Callable[..., Host]) -> None:
    """After host.close(), a call is an error result naming the shutdown; nothing restarts."""
    host = make_host()
    toolset = host.toolset()
    pid = value(call(toolset, "pid"))
    host.close()
    result = call(toolset, "pid")
    assert result.is_error is True
    assert "was shut down with its host" in result.content
    wait_until(lambda: not pid_alive(pid), "the server process is gone")


# -- tool-list changes ------------------------------------------------------------------------


def test_list_changed_refreshes_the_pack_for_toolsets_built_afterwards(
    make_host: Callable[..., Host],
) -> None:
    """A new tool appears in toolsets built after the notification; older ones keep theirs."""
    host = make_host()
    before = host.toolset()
    assert "extra" not in before.names()
    assert value(call(before, "grow")) == "grown"
    wait_until(lambda: "remote.extra" in host.pack("remote").tools, "the pack lists `extra`")
    after = host.toolset()
    assert "extra" in after.names()
    assert value(call(after, "extra", {"x": 21})) == 42
    assert "extra" not in before.names()
    assert value(call(before, "add", {"a": 1, "b": 1})) == 2  # unchanged tools still work


def test_changed_and_removed_tools_are_refused_to_older_toolsets(
    make_host: Callable[..., Host], tmp_path: Path
) -> None:
    """An older toolset never calls a tool whose definition changed, or that is gone."""
    host = make_host()
    before = host.toolset()
    call(before, "reword")
    wait_until(
        lambda: "posts them" in host.load("remote").tools["remote.add"].description,
        "the pack has the new description",
    )
    changed = call(before, "add", {"a": 1, "b": 2})
    assert changed.is_error is True
    assert "changed the definition of 'add'" in changed.content
    assert "Build the toolset again" in changed.content
    assert value(call(host.toolset(), "add", {"a": 1, "b": 2})) == 3
    assert served_calls(tmp_path) == ["add"]  # the refused call never reached the server

    call(before, "shrink")
    wait_until(lambda: "remote.wipe" not in host.pack("remote").tools, "`wipe` is gone")
    gone = call(before, "wipe", {"path": "/tmp/x"})
    assert gone.is_error is True
    assert "no longer offers the tool 'wipe'" in gone.content
    assert "wipe" not in host.toolset().names()


def test_lock_file_withholds_tools_that_appear_or_change_later(
    make_host: Callable[..., Host],
) -> None:
    """With toolpacks.lock, a refreshed list is pinned: new and changed tools are withheld."""
    host = make_host()
    write_lock(host)
    toolset = host.toolset()
    assert {"add", "grow", "reword"} <= set(toolset.names())
    call(toolset, "grow")
    call(toolset, "reword")
    wait_until(
        lambda: (
            "remote.extra" in host.pack("remote").tools
            and "posts them" in host.load("remote").tools["remote.add"].description
        ),
        "both changes reached the pack",
    )
    rebuilt = host.toolset()
    assert "extra" not in rebuilt.names()
    assert "add" not in rebuilt.names()
    assert "grow" in rebuilt.names()


def test_legacy_server_announcing_changes_unsolicited_is_followed(tmp_path: Path) -> None:
    """A 2025-revision server's own notifications/tools/list_changed refreshes the pack."""
    script = tmp_path / "legacy_server.py"
    script.write_text(textwrap.dedent(LEGACY_SERVER))
    table = {"command": sys.executable, "args": [str(script)], "timeout": 20}
    with Host(write_config(tmp_path, {"legacy": table}), discover=False) as host:
        toolset = host.toolset()
        assert call(toolset, "grow").content == "grown"
        wait_until(lambda: "legacy.extra" in host.pack("legacy").tools, "`extra` is listed")
        assert "extra" in host.toolset().names()


# -- approvals --------------------------------------------------------------------------------


class Recorder:
    """An approval handler that answers ``answer`` and keeps every request."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Any:
        self.requests.append(request)
        return self.answer


def test_require_approval_in_server_config_asks_the_host_handler(
    make_host: Callable[..., Host], tmp_path: Path
) -> None:
    """``require_approval = ["wipe"]``: denied calls never reach the server; approved ones do."""
    deny = Recorder(False)
    host = make_host(approval=deny, require_approval=["wipe"])
    toolset = host.toolset()
    assert toolset.entry("wipe").require_approval is True
    assert toolset.entry("add").require_approval is False
    refused = call(toolset, "wipe", {"path": "/srv"})
    assert refused.is_error is True
    assert refused.error is not None
    assert refused.error.kind == "denied"
    assert [r.qualified_name for r in deny.requests] == ["remote.wipe"]
    assert deny.requests[0].arguments == {"path": "/srv"}
    assert served_calls(tmp_path) == []
    host.approval = Recorder("once")
    assert value(call(host.toolset(), "wipe", {"path": "/srv"})) == "wiped /srv"
    assert served_calls(tmp_path) == ["wipe"]


def test_require_approval_true_covers_every_tool_and_unknown_names_are_reported(
    make_host: Callable[..., Host],
) -> None:
    """``true`` gates every tool; a name the server does not offer is a pack problem."""
    host = make_host(require_approval=True)
    assert all(e.require_approval for e in host.toolset().entries())
    other = make_host(require_approval=["wipe", "wpie"])
    problems = other.load("remote").problems
    assert any("'wpie', which the server does not offer" in p for p in problems)


def test_agent_require_approval_applies_to_remote_tools(
    make_host: Callable[..., Host], tmp_path: Path
) -> None:
    """The agent's ``require_approval`` names remote tools like any other."""
    handler = Recorder(False)
    agent = '\n[agents.ops]\npacks = ["remote"]\nrequire_approval = ["remote.add"]\n'
    host = make_host(approval=handler, extra=agent)
    result = call(host.toolset("ops"), "add", {"a": 1, "b": 2})
    assert result.is_error is True
    assert [r.qualified_name for r in handler.requests] == ["remote.add"]
    assert served_calls(tmp_path) == []


def test_elicitation_mid_call_is_answered_by_the_host_handler(
    make_host: Callable[..., Host],
) -> None:
    """A server asking "really?" during a call gets the host handler's answer."""
    approve = Recorder(True)
    host = make_host(approval=approve)
    toolset = host.toolset()
    assert value(call(toolset, "risky", {"path": "/data"})) == "accept: /data"
    request = approve.requests[0]
    assert request.tool == "risky"
    assert request.qualified_name == "remote.risky"
    assert request.arguments == {"path": "/data"}
    assert "Really delete everything under /data?" in request.reason
    assert "'remote'" in request.reason
    assert request.call_id
    host.approval = Recorder("deny")
    assert value(call(toolset, "risky", {"path": "/data"})) == "decline: /data"
    host.approval = None
    assert value(call(toolset, "risky", {"path": "/data"})) == "decline: /data"


def test_elicitation_asking_for_data_is_declined_without_asking(
    make_host: Callable[..., Host],
) -> None:
    """A question that is not yes/no (a name) is declined; the handler is not bothered."""
    handler = Recorder(True)
    host = make_host(approval=handler)
    assert value(call(host.toolset(), "greet")) == "decline"
    assert handler.requests == []


def test_legacy_elicitation_goes_to_the_call_in_flight(tmp_path: Path) -> None:
    """On a 2025 revision, elicitation/create during the one call in flight is answered."""
    script = tmp_path / "legacy_server.py"
    script.write_text(textwrap.dedent(LEGACY_SERVER))
    table = {"command": sys.executable, "args": [str(script)], "timeout": 20}
    handler = Recorder(True)
    config = write_config(tmp_path, {"legacy": table})
    with Host(config, discover=False, approval=handler) as host:
        answer = json.loads(call(host.toolset(), "risky").value)
        assert answer["action"] == "accept"
        assert answer["content"] == {"ok": True}
        assert handler.requests[0].qualified_name == "legacy.risky"
        assert "Proceed?" in handler.requests[0].reason


# -- configuration ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"command": "x", "url": "http://127.0.0.1:1/mcp"}, "not both"),
        ({"args": ["x"]}, "set `command`"),
        ({"url": "ftp://example.com/mcp"}, "http:// or https:// URL"),
        ({"url": "http://127.0.0.1:1/mcp", "args": ["-v"]}, "args only apply"),
        ({"command": "x", "headers": {"A": "b"}}, "`headers` apply to a `url` server"),
        ({"url": "http://127.0.0.1:1/mcp", "headers": {"A": {"var": "X"}}}, "headers.A"),
        ({"command": "x", "timeout": 0}, "greater than 0"),
    ],
)
def test_bad_server_tables_are_config_errors(table: dict[str, Any], message: str) -> None:
    """Each mistake in an [mcp_servers.X] table is a ConfigError naming the table."""
    with pytest.raises(ConfigError, match=r"mcp_servers\.bad") as caught:
        Host({"mcp_servers": {"bad": table}}, discover=False)
    assert message in str(caught.value)
