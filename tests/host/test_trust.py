"""Trust covers the configuration bytes that were parsed and the code they point to.

Each test trusts an implicit configuration with ``toolpacks trust`` (the real command, run
in-process), then changes something; the changed code must not run until trusted again.
Handlers and the MCP server script write a marker file when they run, so "did not run" is
observed, not assumed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from toolpacks import Host, UntrustedConfigError
from toolpacks.cli._main import main
from toolpacks.testing import call

HANDLER = """
from pathlib import Path
Path({marker!r}).write_text("ran {version}")

def handle(arguments, context):
    return "{version}:" + arguments["text"]
"""

TOOL_MD = """---
name: echo
description: Echo the text back.
parameters:
  text: {type: string, description: The text.}
---
"""

SERVER = """
from pathlib import Path
Path({marker!r}).write_text("server ran {version}")
raise SystemExit(1)
"""


def _write_tool(version: str, marker: Path) -> None:
    directory = Path("tools/echo")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "TOOL.md").write_text(TOOL_MD, encoding="utf-8")
    (directory / "handler.py").write_text(
        HANDLER.format(marker=str(marker), version=version), encoding="utf-8"
    )


def _trust(capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["trust"]) == 0
    out, _ = capsys.readouterr()
    return out


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "marker.txt"


def test_trusted_file_tools_load_and_a_changed_handler_needs_trust_again(
    capsys: pytest.CaptureFixture[str], marker: Path
) -> None:
    """Editing handler.py after trusting withdraws the trust; the new code never runs."""
    Path("toolpacks.toml").write_text('[files]\ndirs = ["tools"]\n', encoding="utf-8")
    _write_tool("v1", marker)
    with pytest.raises(UntrustedConfigError):
        Host(discover=False).toolset()
    assert not marker.exists()

    out = _trust(capsys)
    assert "tools/echo/handler.py" in out
    assert "tools/echo/TOOL.md" in out
    result = call(Host(discover=False).toolset(), "echo", {"text": "hi"})
    assert result.content == "v1:hi"
    marker.unlink()

    _write_tool("v2", marker)  # the handler changes after trust
    with pytest.raises(UntrustedConfigError, match="changed since it was trusted"):
        Host(discover=False).toolset()
    assert not marker.exists()

    _trust(capsys)
    assert call(Host(discover=False).toolset(), "echo", {"text": "hi"}).content == "v2:hi"


def test_a_new_file_under_a_trusted_dir_needs_trust_again(
    capsys: pytest.CaptureFixture[str], marker: Path
) -> None:
    """Adding code (a second tool) is a change too."""
    Path("toolpacks.toml").write_text('[files]\ndirs = ["tools"]\n', encoding="utf-8")
    _write_tool("v1", marker)
    _trust(capsys)
    Path("tools/helper.py").write_text("import os\n", encoding="utf-8")
    with pytest.raises(UntrustedConfigError):
        Host(discover=False).toolset()


def test_a_changed_mcp_server_script_needs_trust_again(
    capsys: pytest.CaptureFixture[str], marker: Path
) -> None:
    """A server script inside the configuration's directory is covered by trust."""
    Path("toolpacks.toml").write_text(
        f'[mcp_servers.remote]\ncommand = "{sys.executable}"\nargs = ["server.py"]\n',
        encoding="utf-8",
    )
    Path("server.py").write_text(SERVER.format(marker=str(marker), version="v1"), "utf-8")
    out = _trust(capsys)
    assert "server.py" in out
    assert Host(discover=False).trusted

    Path("server.py").write_text(SERVER.format(marker=str(marker), version="v2"), "utf-8")
    host = Host(discover=False)
    assert not host.trusted
    with pytest.raises(UntrustedConfigError, match=r"mcp_servers\.remote"):
        host.toolset()
    assert not marker.exists()  # the changed server was never started


def test_a_changed_configuration_needs_trust_again(capsys: pytest.CaptureFixture[str]) -> None:
    """Editing the trusted file itself withdraws the trust."""
    path = Path("toolpacks.toml")
    path.write_text("[settings]\nexpose_errors = false\n", encoding="utf-8")
    _trust(capsys)
    assert Host(discover=False).trusted
    path.write_text("[settings]\nexpose_errors = true\n", encoding="utf-8")
    with pytest.raises(UntrustedConfigError):
        Host(discover=False).toolset()


def test_trust_is_checked_against_the_bytes_that_were_parsed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A file swapped after it was read cannot borrow the trust of what is there now."""
    path = Path("toolpacks.toml")
    trusted_text = "[settings]\nexpose_errors = false\n"
    path.write_text(trusted_text, encoding="utf-8")
    _trust(capsys)
    path.write_text("[settings]\nexpose_errors = true\n", encoding="utf-8")
    host = Host(discover=False)  # parses the swapped-in content
    path.write_text(trusted_text, encoding="utf-8")  # ...and the trusted one is back
    assert host.config.config.settings.expose_errors is True
    assert not host.trusted
    with pytest.raises(UntrustedConfigError):
        host.toolset()


def test_trust_lists_what_it_covers(capsys: pytest.CaptureFixture[str], marker: Path) -> None:
    """The command says which files it trusted, and that a change needs trust again."""
    Path("toolpacks.toml").write_text('[files]\ndirs = ["tools"]\n', encoding="utf-8")
    _write_tool("v1", marker)
    out = _trust(capsys)
    assert str(Path("toolpacks.toml").resolve()) in out
    assert "files" in out
    assert "needs `toolpacks trust` again" in out
