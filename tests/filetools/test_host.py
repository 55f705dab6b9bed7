"""File tools in a host: from `[files] dirs`, from a pack, precedence, and reload."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Host, ToolResult, hookimpl, tool

WEEKDAY = "description: The weekday, from a file.\nparameters:\n  date: {required: true}"
FILE_HANDLER = "def handle(arguments, context):\n    return 'file tool'\n"


def version_handler(version: str) -> str:
    return f"def handle(arguments, context):\n    return {version!r}\n"


@pytest.fixture
def host(tools_dir: Path) -> Host:
    """A host whose configuration (a mapping, so trusted) adds the tools directory."""
    return Host({"files": {"dirs": [str(tools_dir)]}}, discover=False)


def call(host: Host, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
    return asyncio.run(host.toolset().call(name, arguments or {}))


def test_config_dirs_become_the_local_pack(make_tool: Callable[..., Path], host: Host) -> None:
    """`[files] dirs` tools are the pack `local`, callable by qualified and exposed name."""
    make_tool("weekday", WEEKDAY, FILE_HANDLER)
    assert host.pack("local").source == "files"
    toolset = host.toolset()
    assert toolset.names() == ["weekday"]
    assert toolset.qualified_name("weekday") == "local.weekday"
    assert call(host, "local.weekday", {"date": "2024-01-01"}).value == "file tool"
    assert call(host, "weekday", {"date": "2024-01-01"}).value == "file tool"


def test_handle_sees_the_agent_of_the_toolset(
    make_tool: Callable[..., Path], tools_dir: Path
) -> None:
    """A call through an agent's toolset gives `handle` that agent in its context."""
    make_tool(
        "whoami",
        "description: W.",
        "def handle(arguments, context):\n    return context.agent_id\n",
    )
    host = Host(
        {"files": {"dirs": [str(tools_dir)]}, "agents": {"ann": {"packs": ["local"]}}},
        discover=False,
    )
    result = asyncio.run(host.toolset("ann").call("whoami", {}))
    assert result.value == "ann"


def test_relative_dirs_are_resolved_against_the_config_file(
    make_tool: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`dirs = ["tools"]` in a toolpacks.toml means the tools folder beside that file."""
    project = tmp_path / "project"
    make_tool("weekday", WEEKDAY, FILE_HANDLER, root=project / "tools")
    (project / "toolpacks.toml").write_text('[files]\ndirs = ["tools"]\n')
    monkeypatch.chdir(tmp_path)
    host = Host(project / "toolpacks.toml", discover=False)
    assert host.toolset().names() == ["weekday"]


def test_problems_are_kept_with_the_pack(make_tool: Callable[..., Path], host: Host) -> None:
    """A broken file tool is a problem of its pack; the pack and its other tools load."""
    make_tool("weekday", WEEKDAY, FILE_HANDLER)
    make_tool("broken", "description: B.", handler=None)
    loaded = host.load("local")
    assert loaded.info.status == "loaded"
    assert list(loaded.tools) == ["local.weekday"]
    assert len(loaded.problems) == 1
    assert "handler.py: missing" in loaded.problems[0]


def test_reload_picks_up_added_changed_and_removed_tools(
    make_tool: Callable[..., Path], host: Host, tools_dir: Path
) -> None:
    """`host.reload()` picks up an added, an edited and a removed tool in the same process."""
    make_tool("stays", "description: S.", version_handler("v1"))
    make_tool("goes", "description: G.", FILE_HANDLER)
    assert host.toolset().names() == ["goes", "stays"]
    assert call(host, "stays").value == "v1"

    make_tool("arrives", "description: A.", FILE_HANDLER)
    # Same size and (very likely) the same second as the first version: no stale bytecode.
    (tools_dir / "stays" / "handler.py").write_text(version_handler("v2"))
    for file in (tools_dir / "goes").iterdir():
        file.unlink()
    (tools_dir / "goes").rmdir()
    old_toolset = host.toolset()

    host.reload()
    assert host.toolset().names() == ["arrives", "stays"]
    assert call(host, "stays").value == "v2"
    assert asyncio.run(old_toolset.call("stays", {})).value == "v1"


def test_reload_picks_up_front_matter_changes(make_tool: Callable[..., Path], host: Host) -> None:
    """An edited TOOL.md (a new parameter default) takes effect on reload."""
    make_tool("echo", "description: E.\nparameters:\n  n: {type: integer, default: 1}")
    assert call(host, "echo").value == {"n": 1}
    make_tool("echo", "description: E.\nparameters:\n  n: {type: integer, default: 2}")
    host.reload()
    assert call(host, "echo").value == {"n": 2}


@tool
def weekday(date: str) -> str:
    """The weekday, from code."""
    return "code tool"


class WeekdayPack:
    """A pack shipping a code tool and a tools directory with a file tool of the same name."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(weekday)
        register(self.directory)


def test_pack_can_register_a_tools_directory(
    make_tool: Callable[..., Path], tools_dir: Path
) -> None:
    """A pack's `register(Path)` adds the directory's tools under the pack's name."""

    class FilesOnly:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(tools_dir)

    make_tool("weekday", WEEKDAY, FILE_HANDLER)
    host = Host({}, discover=False)
    host.add_pack(FilesOnly(), "shipped")
    assert call(host, "shipped.weekday", {"date": "x"}).value == "file tool"


def test_code_tool_wins_over_file_tool_and_a_log_record_says_so(
    make_tool: Callable[..., Path], tools_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A pack's code tool beats its file tool of the same name, and a warning says so."""
    make_tool("weekday", WEEKDAY, FILE_HANDLER)
    host = Host({}, discover=False)
    host.add_pack(WeekdayPack(tools_dir), "calendar")
    with caplog.at_level(logging.WARNING, logger="toolpacks"):
        result = call(host, "weekday", {"date": "2024-01-01"})
    assert result.value == "code tool"
    assert host.toolset().get("weekday").description == "The weekday, from code."
    records = [r for r in caplog.records if "overrides the file tool" in r.getMessage()]
    assert len(records) == 1
    assert records[0].levelno == logging.WARNING
    assert "'calendar'" in records[0].getMessage()
    assert "'weekday'" in records[0].getMessage()
    assert any("overridden" in p for p in host.load("calendar").problems)
