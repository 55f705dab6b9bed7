"""``exclude`` and ``require_approval`` apply to an aliased pack's tools (issue 37).

An alias (``[packs.other] pack = "files"``) is another instance of a pack under its own name;
its tools are ``other.read`` and ``other.delete``. Naming them (or ``other.*``) in an agent's
``exclude`` or ``require_approval`` must act on the alias, beside the original pack and
alone, through ``Host.toolset`` and through a real TOML file.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Host, hookimpl, tool


@tool
def read(path: str) -> str:
    """Read a file."""
    return path


@tool
def delete(path: str) -> str:
    """Delete a file."""
    return path


class Files:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(read)
        register(delete)


def _host(agent: dict[str, Any]) -> Host:
    host = Host({"packs": {"other": {"pack": "files"}}, "agents": {"a": agent}}, discover=False)
    host.add_pack(Files(), "files")
    return host


def test_exclude_by_the_alias_glob_removes_only_the_alias_tools() -> None:
    ts = _host({"packs": ["files", "other"], "on_conflict": "prefix", "exclude": ["other.*"]})
    assert ts.toolset("a").names() == ["delete", "read"]
    assert [ts.toolset("a").entry(n).qualified for n in ("delete", "read")] == [
        "files.delete",
        "files.read",
    ]


@pytest.mark.parametrize("packs", [["files", "other"], ["*"], ["other"]])
def test_exclude_and_require_approval_name_alias_tools(packs: list[str]) -> None:
    agent = {
        "packs": packs,
        "on_conflict": "prefix",
        "exclude": ["other.delete"],
        "require_approval": ["other.read"],
    }
    toolset = _host(agent).toolset("a")
    qualified = {toolset.entry(n).qualified: n for n in toolset.names()}
    assert "other.delete" not in qualified
    exposed = qualified["other.read"]
    refused = asyncio.run(toolset.call(exposed, {"path": "x"}))
    assert refused.is_error
    assert "requires approval" in refused.content
    if "files.read" in qualified:  # the original pack's tool is not behind approval
        assert asyncio.run(toolset.call(qualified["files.read"], {"path": "x"})).value == "x"


def test_the_same_through_a_toml_file(tmp_path: Path) -> None:
    path = tmp_path / "toolpacks.toml"
    path.write_text(
        '[packs.other]\npack = "files"\n\n[agents.a]\npacks = ["files", "other"]\n'
        'on_conflict = "prefix"\nexclude = ["other.delete"]\nrequire_approval = ["other.read"]\n',
        encoding="utf-8",
    )
    host = Host(config=path, discover=False)
    host.add_pack(Files(), "files")
    toolset = host.toolset("a")
    assert toolset.names() == ["delete", "files_read", "other_read"]
    assert asyncio.run(toolset.call("other_read", {"path": "x"})).is_error
    assert asyncio.run(toolset.call("files_read", {"path": "x"})).value == "x"
