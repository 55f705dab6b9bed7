"""`scaffold_tool` writes a working tool; handlers are imported privately and afresh."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from toolpacks import Host, Tool, ToolDefinitionError
from toolpacks.filetools._handler import MODULE_PREFIX, module_name
from toolpacks.filetools._loader import load_tools_dir, scaffold_tool

Load = Callable[[], tuple[dict[str, Tool], list[str]]]


def test_scaffolded_tool_loads_and_runs(tmp_path: Path) -> None:
    """`scaffold_tool` creates the tools directory and a tool that loads and runs."""
    tools_dir = tmp_path / "new" / "tools"
    created = scaffold_tool("greet", tools_dir)
    assert created == tools_dir / "greet"
    assert sorted(p.name for p in created.iterdir()) == ["TOOL.md", "handler.py"]
    tools, problems = load_tools_dir(tools_dir)
    assert problems == []
    (greet,) = tools
    assert greet.name == "greet"
    assert greet.instructions
    assert greet.input_schema["required"] == ["who"]
    result = asyncio.run(greet.invoke({"who": "Ada"}))
    assert result.content == "Hello, Ada."


def test_scaffolded_tool_runs_in_a_host(tmp_path: Path) -> None:
    """The scaffolded tool works end to end through `[files] dirs`."""
    scaffold_tool("greet", tmp_path / "tools")
    host = Host({"files": {"dirs": [str(tmp_path / "tools")]}}, discover=False)
    result = asyncio.run(host.toolset().call("greet", {"who": "Bo", "punctuation": "!"}))
    assert result.content == "Hello, Bo!"


def test_scaffold_refuses_an_existing_directory(tmp_path: Path) -> None:
    """Scaffolding over an existing tool directory raises and changes nothing."""
    existing = tmp_path / "greet"
    existing.mkdir()
    (existing / "TOOL.md").write_text("mine")
    with pytest.raises(FileExistsError, match="already exists"):
        scaffold_tool("greet", tmp_path)
    assert (existing / "TOOL.md").read_text() == "mine"


@pytest.mark.parametrize("name", ["my tool", "-dash", "", "x" * 65, "a/b"])
def test_scaffold_refuses_an_invalid_name(tmp_path: Path, name: str) -> None:
    """A name that is not a valid tool name raises ToolDefinitionError (a ValueError)."""
    with pytest.raises(ToolDefinitionError, match="not a valid tool name"):
        scaffold_tool(name, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_handler_is_imported_under_a_private_name_off_sys_path(
    make_tool: Callable[..., Path], load: Load, tools_dir: Path
) -> None:
    """A handler gets a private module name, stays off sys.path and leaves no bytecode."""
    tool_dir = make_tool(
        "where", "description: W.", "def handle(arguments, context):\n    return __name__\n"
    )
    path_before = list(sys.path)
    tools, _ = load()
    name = asyncio.run(tools["where"].invoke({})).value
    assert name == module_name(tool_dir / "handler.py")
    assert name.startswith(MODULE_PREFIX)
    assert name in sys.modules
    assert sys.path == path_before
    assert not (tool_dir / "__pycache__").exists()


def test_handler_may_use_dataclasses_and_module_globals(
    make_tool: Callable[..., Path], load: Load
) -> None:
    """A handler is a real module: dataclasses and module-level state work."""
    make_tool(
        "counter",
        "description: C.",
        """
        from __future__ import annotations
        from dataclasses import dataclass

        @dataclass
        class State:
            calls: int = 0

        STATE = State()

        def handle(arguments, context):
            STATE.calls += 1
            return STATE.calls
        """,
    )
    tools, problems = load()
    assert problems == []
    assert [asyncio.run(tools["counter"].invoke({})).value for _ in range(2)] == [1, 2]


def test_loading_again_drops_removed_handlers_from_sys_modules(
    make_tool: Callable[..., Path], load: Load, tools_dir: Path
) -> None:
    """A tool removed before the next load leaves no module behind in sys.modules."""
    gone = make_tool("gone", "description: G.")
    load()
    name = module_name(gone / "handler.py")
    assert name in sys.modules
    (gone / "handler.py").unlink()
    (gone / "TOOL.md").unlink()
    gone.rmdir()
    load()
    assert name not in sys.modules
