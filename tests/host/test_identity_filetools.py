"""A file tool's TOOL.md declares ``scopes:`` as ``@tool(scopes=...)`` does."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from toolpacks import Principal, ToolContext, Toolset
from toolpacks.filetools._loader import load_tools_dir

HANDLER = "def handle(arguments, context):\n    return context.principal.subject\n"


def _tool(root: Path, name: str, front: str) -> None:
    directory = root / name
    directory.mkdir(parents=True)
    (directory / "TOOL.md").write_text(f"---\n{front}\n---\nBody.\n", encoding="utf-8")
    (directory / "handler.py").write_text(HANDLER, encoding="utf-8")


def test_front_matter_scopes_hide_and_refuse(tmp_path: Path) -> None:
    _tool(tmp_path, "deploy", "description: Deploy.\nscopes: [ops, repo.write]")
    tools, problems = load_tools_dir(tmp_path)
    assert problems == []
    (deploy,) = tools
    assert deploy.scopes == {"ops", "repo.write"}
    ts = Toolset(tools, agent="a")
    assert ts.for_principal(Principal("u", scopes={"ops"})).names() == []
    refused = asyncio.run(ts.call("deploy", {}, ToolContext(principal=Principal("u"))))
    assert refused.error is not None
    assert "missing scope ops, repo.write" in refused.error.message
    root = Principal("root", scopes={"ops", "repo.write"})
    assert asyncio.run(ts.for_principal(root).call("deploy", {})).value == "root"


@pytest.mark.parametrize(
    ("value", "message"), [("[1]", "scopes must be a list of strings"), ('[""]', "scopes=")]
)
def test_bad_front_matter_scopes_are_reported(tmp_path: Path, value: str, message: str) -> None:
    _tool(tmp_path, "deploy", f"description: Deploy.\nscopes: {value}")
    tools, problems = load_tools_dir(tmp_path)
    assert tools == []
    assert any(message in p for p in problems), problems
