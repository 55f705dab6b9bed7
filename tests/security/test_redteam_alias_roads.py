"""``exclude`` and ``require_approval`` naming an alias act on it on more roads (issue 37).

``tests/host/test_alias_selection.py`` pins an alias of a pack added in code. The red team's
report ("an ``exclude``/``require_approval`` naming an aliased pack is silently ignored")
kept no reproduction, so the roads it did not cover are pinned here: an alias of an
installed (entry-point) pack, an alias run isolated in a child process, and the same agent
served over MCP stdio, where the excluded tool is neither listed nor callable and the one
requiring approval is refused.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError, StdioServerParameters
from tests.mcp.conftest import BlockingClient, text_of

FILES = """
from toolpacks import hookimpl, tool


@tool
def read(path: str) -> str:
    '''Read a file.'''
    return "read " + path


@tool
def delete(path: str) -> str:
    '''Delete a file.'''
    return "deleted " + path


@hookimpl
def register_tools(register):
    register(read)
    register(delete)
"""

AGENT = {"exclude": ["other.delete"], "require_approval": ["other.read"]}


def config(packs: list[str], alias: dict[str, Any] | None = None) -> dict[str, Any]:
    other = {"pack": "files", **(alias or {})}
    agent = {"packs": packs, "on_conflict": "prefix", **AGENT}
    return {"packs": {"other": other}, "agents": {"a": agent}}


def call(toolset: Any, name: str) -> Any:
    return asyncio.run(toolset.call(name, {"path": "x"}))


@pytest.mark.parametrize("alias", [{}, {"isolate": True}], ids=["in-process", "isolated"])
@pytest.mark.parametrize("packs", [["files", "other"], ["other"], ["*"]])
def test_an_alias_of_an_installed_pack_honours_exclude_and_approval(
    site: Any, isolated: None, alias: dict[str, Any], packs: list[str]
) -> None:
    """``other.delete`` is gone, ``other.read`` needs approval, ``files.*`` is untouched."""
    site.pack("files", FILES)
    with site.host(config(packs, alias)) as host:
        toolset = host.toolset("a")
        by_qualified = {toolset.entry(n).qualified: n for n in toolset.names()}
        assert "other.delete" not in by_qualified
        refused = call(toolset, by_qualified["other.read"])
        assert refused.is_error
        assert "requires approval" in refused.content
        if "files.delete" in by_qualified:
            assert call(toolset, by_qualified["files.delete"]).value == "deleted x"
            assert call(toolset, by_qualified["files.read"]).value == "read x"


def test_over_mcp_stdio_the_alias_tool_is_gone_and_the_other_needs_approval(
    tmp_path: Path, isolated: None
) -> None:
    """Served: ``other_delete`` is not listed and unknown; ``other_read`` is refused."""
    (tmp_path / "files_pack.py").write_text(FILES, encoding="utf-8")
    dist = tmp_path / "toolpacks_files-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toolpacks-files\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[toolpacks]\nfiles = files_pack\n")
    path = tmp_path / "toolpacks.toml"
    path.write_text(
        '[packs.other]\npack = "files"\n\n[agents.a]\npacks = ["files", "other"]\n'
        'on_conflict = "prefix"\nexclude = ["other.delete"]\nrequire_approval = ["other.read"]\n',
        encoding="utf-8",
    )
    args = ["-m", "toolpacks", "serve", "--agent", "a", "--config", str(path)]
    params = StdioServerParameters(
        command=sys.executable, args=args, env={"PYTHONPATH": str(tmp_path)}, cwd=str(tmp_path)
    )
    client = BlockingClient(params, tmp_path / "stderr.log")
    client.connect()
    try:
        assert set(client.list_tools()) == {"files_read", "delete", "other_read"}
        with pytest.raises(MCPError, match="Unknown tool: other_delete"):
            client.call("other_delete", {"path": "x"})
        refused = client.call("other_read", {"path": "x"})
        assert refused.is_error
        assert "approval" in text_of(refused)
        assert text_of(client.call("delete", {"path": "x"})) == "deleted x"
    finally:
        client.close()


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("exclude", ["files.delete"]),
        ("require_approval", ["files.delete"]),
        ("tools", ["files.*"]),
        ("rename", {"files.delete": "rm"}),
    ],
)
def test_an_entry_under_the_base_pack_of_an_alias_held_alone_is_refused(
    site: Any, key: str, value: Any
) -> None:
    """``packs = ["other"]`` (an alias of ``files``): ``files.delete`` would apply to nothing.

    It was accepted and silently dropped (an exclusion not made, an approval not asked);
    it is now a ConfigError saying which name to write.
    """
    from toolpacks import ConfigError

    site.pack("files", FILES)
    agent = {"packs": ["other"], key: value}
    config = {"packs": {"other": {"pack": "files"}}, "agents": {"a": agent}}
    with site.host(config) as host, pytest.raises(ConfigError) as caught:
        host.toolset("a")
    message = str(caught.value)
    assert key in message
    assert "only as 'other'" in message
    assert "'other.delete'" in message or "'other.*'" in message
