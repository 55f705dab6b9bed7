"""Only files inside a tool's own directory are used: symbolic links leading out are refused."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from toolpacks import Tool

Load = Callable[[], tuple[dict[str, Tool], list[str]]]

MARKER_HANDLER = """\
from pathlib import Path

Path({marker!r}).write_text("imported")

def handle(arguments, context):
    return "outside"
"""


@pytest.fixture(autouse=True)
def _need_symlinks(tmp_path: Path) -> None:
    try:
        os.symlink(tmp_path, tmp_path / "probe")
    except (OSError, NotImplementedError):
        pytest.skip("this platform cannot create symbolic links")


@pytest.fixture
def outside(tmp_path: Path, make_tool: Callable[..., Path]) -> Path:
    """A complete tool outside the tools directory whose handler leaves a marker if imported."""
    marker = tmp_path / "marker"
    return make_tool(
        "elsewhere",
        "description: Outside.",
        MARKER_HANDLER.format(marker=str(marker)),
        root=tmp_path / "outside",
    )


def test_symlinked_tool_directory_pointing_outside_is_refused(
    outside: Path, tools_dir: Path, load: Load, tmp_path: Path
) -> None:
    """A tool directory that is a link to a directory outside is reported and never imported."""
    (tools_dir / "sneaky").symlink_to(outside, target_is_directory=True)
    tools, problems = load()
    assert tools == {}
    assert len(problems) == 1
    assert problems[0].startswith(f"{tools_dir / 'sneaky'}: is a symbolic link to {outside}")
    assert "outside the tools directory" in problems[0]
    assert not (tmp_path / "marker").exists()


def test_symlinked_handler_pointing_outside_is_refused(
    outside: Path, make_tool: Callable[..., Path], tools_dir: Path, load: Load, tmp_path: Path
) -> None:
    """A handler.py that is a link to a file outside is reported and never imported."""
    tool = make_tool("linked", "description: Linked.", handler=None)
    (tool / "handler.py").symlink_to(outside / "handler.py")
    tools, problems = load()
    assert tools == {}
    assert problems[0].startswith(f"{tool / 'handler.py'}: is a symbolic link to ")
    assert "outside its tool directory" in problems[0]
    assert not (tmp_path / "marker").exists()


def test_symlinked_handler_of_another_tool_is_refused(
    make_tool: Callable[..., Path], load: Load
) -> None:
    """Even inside the tools directory, a handler must live in its own tool's directory."""
    make_tool("first", "description: First.")
    second = make_tool("second", "description: Second.", handler=None)
    (second / "handler.py").symlink_to(second.parent / "first" / "handler.py")
    tools, problems = load()
    assert list(tools) == ["first"]
    assert problems[0].startswith(f"{second / 'handler.py'}: is a symbolic link")


def test_symlinked_tool_md_pointing_outside_is_refused(
    outside: Path, make_tool: Callable[..., Path], load: Load
) -> None:
    """A TOOL.md that is a link to a file outside is refused too."""
    tool = make_tool("linked", "description: Linked.")
    (tool / "TOOL.md").unlink()
    (tool / "TOOL.md").symlink_to(outside / "TOOL.md")
    tools, problems = load()
    assert tools == {}
    assert problems[0].startswith(f"{tool / 'TOOL.md'}: is a symbolic link")


def test_symlink_to_a_directory_inside_is_allowed(
    make_tool: Callable[..., Path], tools_dir: Path, load: Load
) -> None:
    """A link to a tool directory inside the tools directory loads under the link's name."""
    make_tool("original", "description: O.")
    (tools_dir / "alias").symlink_to(tools_dir / "original", target_is_directory=True)
    tools, problems = load()
    assert sorted(tools) == ["alias", "original"]
    assert problems == []


def test_tools_directory_itself_may_be_a_symlink(
    make_tool: Callable[..., Path], tools_dir: Path, tmp_path: Path
) -> None:
    """The tools directory given may be a link; its tools are checked against its target."""
    from toolpacks.filetools._loader import load_tools_dir

    make_tool("inside", "description: I.")
    (tmp_path / "link").symlink_to(tools_dir, target_is_directory=True)
    tools, problems = load_tools_dir(tmp_path / "link")
    assert [t.name for t in tools] == ["inside"]
    assert problems == []
