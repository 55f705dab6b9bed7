"""``show TOOL`` and ``list --tools`` tell a tool's scopes and credentials (issues 31, 34).

The CLI run in-process, with a pack whose tool declares ``@tool(scopes=..., credentials=...)``
and a configuration that defines the credential; a plain tool beside it shows neither.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolpacks.cli._main import main

HUB = """
    from toolpacks import ToolContext, hookimpl, tool

    @tool(scopes=["repo.write", "repo.read"], credentials=["slack", "github"])
    def push(ctx: ToolContext, branch: str) -> str:
        '''Push a branch.

        Args:
            branch: Which.
        '''
        return branch

    @tool
    def ping(word: str) -> str:
        '''Answer a ping.

        Args:
            word: What to answer.
        '''
        return word

    @hookimpl
    def register_tools(register):
        register(push)
        register(ping)
"""

CONFIG = """\
[credentials.github]
kind = "secret"

[credentials.slack]
kind = "secret"
"""


@pytest.fixture
def config(site: Any, tmp_path: Path) -> str:
    """The hub pack installed, and a configuration defining its credentials."""
    site.pack("hub", HUB)
    path = tmp_path / "toolpacks.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """Run the CLI; the exit status and stdout (stderr shown when it fails)."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert status == 0, err
    return status, out


def test_show_tool_json_has_sorted_scopes_and_credentials(
    config: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``show TOOL --json``: sorted lists; empty lists for a tool that declares none."""
    _, out = run(capsys, "--config", config, "show", "hub.push", "--json")
    data = json.loads(out)
    assert data["scopes"] == ["repo.read", "repo.write"]
    assert data["credentials"] == ["github", "slack"]
    _, out = run(capsys, "--config", config, "show", "hub.ping", "--json")
    data = json.loads(out)
    assert data["scopes"] == []
    assert data["credentials"] == []


def test_show_tool_text_has_a_line_each_only_when_declared(
    config: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The human output says the scopes and credentials of a tool that has them, else nothing."""
    _, out = run(capsys, "--config", config, "show", "hub.push")
    assert "scopes: repo.read, repo.write\n" in out
    assert "credentials: github, slack\n" in out
    _, out = run(capsys, "--config", config, "show", "hub.ping")
    assert "scopes:" not in out
    assert "credentials:" not in out


def test_list_tools_json_has_scopes_and_credentials(
    config: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``list --tools --json``: each tool row with its sorted scopes and credentials."""
    _, out = run(capsys, "--config", config, "list", "--tools", "--json")
    rows = {row["name"]: row for row in json.loads(out)["tools"]}
    assert rows["hub.push"]["scopes"] == ["repo.read", "repo.write"]
    assert rows["hub.push"]["credentials"] == ["github", "slack"]
    assert rows["hub.ping"]["scopes"] == []
    assert rows["hub.ping"]["credentials"] == []
