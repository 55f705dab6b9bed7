"""Untrusted directories: what a cloned repository can make the host run or read.

Real processes throughout: a "malicious" module or script writes a marker file when it runs,
so "did not run" is observed, not assumed. The working directory of every test is an empty
temporary directory standing in for a cloned repository (the ``isolated`` fixture).
"""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Host, ToolResult, Toolset
from toolpacks.cli._main import main

pytestmark = [pytest.mark.usefixtures("isolated"), pytest.mark.timeout(60)]

# A tiny MCP server (no SDK: it starts in milliseconds) with one tool answering its version.
SERVER = """
import json
import sys
{prelude}

def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()


TOOLS = [{{"name": "version", "description": "The version.",
          "inputSchema": {{"type": "object", "properties": {{}}}}}}]
for line in sys.stdin:
    request = json.loads(line)
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        continue
    params = request.get("params") or {{}}
    if method == "initialize":
        result = {{"protocolVersion": params["protocolVersion"], "capabilities": {{"tools": {{}}}},
                  "serverInfo": {{"name": "tiny", "version": "1"}}}}
    elif method == "tools/list":
        result = {{"tools": TOOLS}}
    elif method == "tools/call":
        result = {{"content": [{{"type": "text", "text": {version!r}}}]}}
    else:
        result = {{}}
    send({{"jsonrpc": "2.0", "id": rid, "result": result}})
"""

MALICIOUS = """
from pathlib import Path
Path({marker!r}).write_text("ran")
raise SystemExit(1)
"""


def _server(version: str, prelude: str = "") -> str:
    return SERVER.format(version=version, prelude=prelude)


def _call(toolset: Toolset, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
    return asyncio.run(asyncio.wait_for(toolset.call(name, arguments or {}), 30))


def _toml(servers: dict[str, dict[str, Any]]) -> str:
    lines: list[str] = []
    for name, table in servers.items():
        lines.append(f"[mcp_servers.{name}]")
        for key, value in table.items():
            if isinstance(value, list):
                lines.append(f"{key} = [{', '.join(_quoted(v) for v in value)}]")
            elif isinstance(value, dict):
                inner = ", ".join(f"{k} = {_quoted(v)}" for k, v in value.items())
                lines.append(f"{key} = {{ {inner} }}")
            else:
                lines.append(f"{key} = {_quoted(value)}")
    return "\n".join(lines) + "\n"


def _quoted(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "marker.txt"


@pytest.fixture
def conf_dir(tmp_path: Path) -> Path:
    """A directory of the user's own, holding the explicit configuration."""
    path = tmp_path / "conf"
    path.mkdir()
    return path


# -- a server does not run code from the working directory -----------------------------------


def test_python_m_server_ignores_a_module_of_the_same_name_in_the_working_directory(
    conf_dir: Path, marker: Path
) -> None:
    """The documented ``python -m mcp_server_time`` mount, trusted ``--config``, cloned cwd."""
    Path("mcp_server_time.py").write_text(MALICIOUS.format(marker=str(marker)), "utf-8")
    config = conf_dir / "toolpacks.toml"
    config.write_text(
        _toml(
            {
                "time": {
                    "command": sys.executable,
                    "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
                    "timeout": 30,
                }
            }
        ),
        "utf-8",
    )
    host = Host(config=config, discover=False)
    try:
        result = _call(host.toolset(packs=["time"]), "get_current_time", {"timezone": "UTC"})
        assert not marker.exists(), "the module from the working directory ran"
        assert result.is_error is False, result.content
        assert result.value["timezone"] == "UTC"
    finally:
        host.close()


def test_a_mapping_configuration_does_not_run_modules_from_the_working_directory(
    marker: Path,
) -> None:
    """Without a file, the working directory is not on the server's ``sys.path`` either."""
    Path("mcp_server_time.py").write_text(MALICIOUS.format(marker=str(marker)), "utf-8")
    table = {
        "command": sys.executable,
        "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        "timeout": 30,
    }
    host = Host({"mcp_servers": {"time": table}}, discover=False)
    try:
        result = _call(host.toolset(packs=["time"]), "get_current_time", {"timezone": "UTC"})
        assert not marker.exists(), "the module from the working directory ran"
        assert result.is_error is False, result.content
    finally:
        host.close()


def test_a_relative_server_script_is_the_one_beside_the_configuration(
    conf_dir: Path, marker: Path
) -> None:
    """``args = ["server.py"]`` means the configuration's server.py, not the cwd's."""
    Path("server.py").write_text(MALICIOUS.format(marker=str(marker)), "utf-8")
    (conf_dir / "server.py").write_text(_server("mine"), "utf-8")
    config = conf_dir / "toolpacks.toml"
    config.write_text(
        _toml({"tiny": {"command": sys.executable, "args": ["server.py"], "timeout": 30}}),
        "utf-8",
    )
    host = Host(config=config, discover=False)
    try:
        result = _call(host.toolset(packs=["tiny"]), "version")
        assert not marker.exists(), "the working directory's server.py ran"
        assert result.content == "mine"
    finally:
        host.close()


def test_a_server_script_still_imports_modules_beside_it(conf_dir: Path) -> None:
    """Keeping the cwd off ``sys.path`` does not keep a script's own directory off it."""
    servers = conf_dir / "servers"
    servers.mkdir()
    (servers / "helper.py").write_text('VERSION = "from helper"\n', "utf-8")
    (servers / "server.py").write_text(
        _server("unused", prelude="import helper").replace("'unused'", "helper.VERSION"),
        "utf-8",
    )
    config = conf_dir / "toolpacks.toml"
    config.write_text(
        _toml({"tiny": {"command": sys.executable, "args": ["servers/server.py"], "timeout": 30}}),
        "utf-8",
    )
    host = Host(config=config, discover=False)
    try:
        assert _call(host.toolset(packs=["tiny"]), "version").content == "from helper"
    finally:
        host.close()


# -- what was checked is what runs ---------------------------------------------------------------


TOOL_MD = """---
name: echo
description: Echo the text back.
parameters:
  text: {type: string, description: The text.}
---
"""

HANDLER = """
from pathlib import Path
Path({marker!r}).write_text("ran {version}")

def handle(arguments, context):
    return "{version}:" + arguments["text"]
"""


def _trust() -> None:
    assert main(["trust"]) == 0


def test_a_handler_swapped_after_the_trust_check_does_not_run(
    marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Trust is checked when the host starts; a handler replaced before it loads is refused."""
    Path("toolpacks.toml").write_text('[files]\ndirs = ["tools"]\n', encoding="utf-8")
    tool_dir = Path("tools/echo")
    tool_dir.mkdir(parents=True)
    (tool_dir / "TOOL.md").write_text(TOOL_MD, "utf-8")
    (tool_dir / "handler.py").write_text(HANDLER.format(marker=str(marker), version="v1"), "utf-8")
    _trust()
    host = Host(discover=False)
    assert host.trusted  # the check, as at the start of a long-running process
    (tool_dir / "handler.py").write_text(HANDLER.format(marker=str(marker), version="v2"), "utf-8")
    loaded = host.load("local")
    assert not marker.exists(), "the swapped handler ran"
    assert "local.echo" not in loaded.tools
    problems = " ".join(loaded.problems)
    assert "handler.py" in problems
    assert "changed since" in problems
    assert "toolpacks trust" in problems


def test_a_tool_added_after_the_trust_check_does_not_load(
    marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A new tool directory under a reviewed tools directory was not reviewed: refused."""
    Path("toolpacks.toml").write_text('[files]\ndirs = ["tools"]\n', encoding="utf-8")
    (Path("tools") / "echo").mkdir(parents=True)
    (Path("tools/echo") / "TOOL.md").write_text(TOOL_MD, "utf-8")
    (Path("tools/echo") / "handler.py").write_text(
        HANDLER.format(marker=str(marker), version="v1"), "utf-8"
    )
    _trust()
    host = Host(discover=False)
    assert host.trusted
    added = Path("tools/other")
    added.mkdir()
    (added / "TOOL.md").write_text(TOOL_MD.replace("name: echo", "name: other"), "utf-8")
    added_marker = marker.with_name("added.txt")
    (added / "handler.py").write_text(
        HANDLER.format(marker=str(added_marker), version="v2"), "utf-8"
    )
    loaded = host.load("local")
    assert "local.echo" in loaded.tools
    assert "local.other" not in loaded.tools
    assert not added_marker.exists(), "the added handler ran"
    assert any("other" in p and "toolpacks trust" in p for p in loaded.problems)


def test_a_server_script_swapped_after_the_trust_check_is_not_started(
    marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The server's code is verified again just before it is started."""
    Path("toolpacks.toml").write_text(
        _toml({"tiny": {"command": sys.executable, "args": ["server.py"], "timeout": 30}}),
        "utf-8",
    )
    Path("server.py").write_text(_server("v1"), "utf-8")
    _trust()
    host = Host(discover=False)
    try:
        assert host.trusted
        Path("server.py").write_text(MALICIOUS.format(marker=str(marker)), "utf-8")
        info = host.load("tiny").info
        assert not marker.exists(), "the swapped server script ran"
        assert info.status == "failed"
        assert info.error is not None
        assert "server.py" in info.error
        assert "changed since" in info.error
    finally:
        host.close()


def test_a_trusted_server_script_still_starts(capsys: pytest.CaptureFixture[str]) -> None:
    """The check before starting passes for the code that was reviewed."""
    Path("toolpacks.toml").write_text(
        _toml({"tiny": {"command": sys.executable, "args": ["server.py"], "timeout": 30}}),
        "utf-8",
    )
    Path("server.py").write_text(_server("v1"), "utf-8")
    _trust()
    host = Host(discover=False)
    try:
        assert _call(host.toolset(packs=["tiny"]), "version").content == "v1"
    finally:
        host.close()


# -- the trust check itself cannot be exhausted or blocked ---------------------------------------


def _tools_dir_with_a_tool(marker: Path) -> Path:
    Path("toolpacks.toml").write_text('[files]\ndirs = ["tools"]\n', encoding="utf-8")
    tool_dir = Path("tools/echo")
    tool_dir.mkdir(parents=True)
    (tool_dir / "TOOL.md").write_text(TOOL_MD, "utf-8")
    (tool_dir / "handler.py").write_text(HANDLER.format(marker=str(marker), version="v1"), "utf-8")
    return Path("tools")


@pytest.mark.timeout(20)
@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_link_to_dev_zero_in_a_tools_directory_is_not_read(
    marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Trusting and checking finish, and the tool beside the link still loads."""
    tools = _tools_dir_with_a_tool(marker)
    os.symlink("/dev/zero", tools / "echo" / "zero")
    _trust()
    host = Host(discover=False)
    assert host.trusted
    assert "local.echo" in host.load("local").tools


@pytest.mark.timeout(20)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_a_tools_directory_does_not_block_the_trust_check(
    marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A named pipe nobody writes to would block a read for ever; it is skipped."""
    tools = _tools_dir_with_a_tool(marker)
    os.mkfifo(tools / "echo" / "pipe")
    os.symlink("pipe", tools / "echo" / "link-to-pipe")
    _trust()
    host = Host(discover=False)
    assert host.trusted
    assert "local.echo" in host.load("local").tools


@pytest.mark.timeout(20)
@pytest.mark.skipif(not Path("/dev").is_dir(), reason="needs /dev")
def test_a_tools_directory_naming_dev_does_not_block_the_trust_check(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``dirs = ["/dev"]``: devices are not regular files, so none is opened."""
    Path("toolpacks.toml").write_text('[files]\ndirs = ["/dev"]\n', encoding="utf-8")
    _trust()
    assert Host(discover=False).trusted


def test_the_walk_of_a_tools_directory_is_bounded(
    monkeypatch: pytest.MonkeyPatch, marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Past the limit of files walked, nothing more is covered, and nothing uncovered loads."""
    from toolpacks.host import _trust_scope

    monkeypatch.setattr(_trust_scope, "MAX_FILES", 3)
    tools = _tools_dir_with_a_tool(marker)
    for i in range(10):
        (tools / f"data{i}.txt").write_text("x", "utf-8")
    _trust()
    host = Host(discover=False)
    assert host.trusted
    assert len(_trust_scope.covered_files(host.config)) <= 3
    loaded = host.load("local")
    assert "local.echo" not in loaded.tools  # its handler was past the limit: not reviewed
    assert not marker.exists()


def test_a_file_over_the_size_limit_is_covered_but_never_run(
    monkeypatch: pytest.MonkeyPatch, marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only the first bytes are read; such a file counts by its size and is never loaded."""
    from toolpacks.filetools import _reviewed

    tools = _tools_dir_with_a_tool(marker)
    handler = tools / "echo" / "handler.py"
    monkeypatch.setattr(_reviewed, "MAX_FILE_BYTES", handler.stat().st_size - 1)
    _trust()
    host = Host(discover=False)
    assert host.trusted
    loaded = host.load("local")
    assert "local.echo" not in loaded.tools
    assert not marker.exists()
    assert any("handler.py" in p for p in loaded.problems)


def test_python_c_servers_do_not_see_the_working_directory(marker: Path) -> None:
    """``python -c`` puts ``''`` (the cwd) first on ``sys.path``; the server's child does not."""
    Path("json_helper_probe.py").write_text(MALICIOUS.format(marker=str(marker)), "utf-8")
    code = textwrap.dedent(
        """
        try:
            import json_helper_probe
        except ImportError:
            pass
        import sys
        sys.exit(0)
        """
    )
    table = {"command": sys.executable, "args": ["-c", code], "timeout": 30}
    host = Host({"mcp_servers": {"c": table}}, discover=False)
    try:
        host.load("c")
        assert not marker.exists(), "a module from the working directory was imported"
    finally:
        host.close()


def test_a_module_added_beside_a_server_script_after_the_trust_check_is_refused(
    marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A module the script imports, added after the check, would run unreviewed: refused."""
    Path("toolpacks.toml").write_text(
        _toml({"tiny": {"command": sys.executable, "args": ["server.py"], "timeout": 30}}),
        "utf-8",
    )
    prelude = "try:\n    import extra\nexcept ImportError:\n    pass"
    Path("server.py").write_text(_server("v1", prelude=prelude), "utf-8")
    _trust()
    host = Host(discover=False)
    try:
        assert host.trusted
        Path("extra.py").write_text(MALICIOUS.format(marker=str(marker)), "utf-8")
        info = host.load("tiny").info
        assert not marker.exists(), "the added module ran"
        assert info.status == "failed"
        assert info.error is not None
        assert "extra.py" in info.error
        assert "was added after" in info.error
    finally:
        host.close()
