"""Nothing outside the root can be listed, read, found or searched."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from toolpacks import Tool, ToolResult


def run(tool: Tool, arguments: dict[str, Any]) -> ToolResult:
    """Invoke a tool the way a host would, synchronously."""
    return asyncio.run(tool.invoke(arguments))


@pytest.mark.parametrize(
    "path",
    ["../outside/secret.txt", "docs/../../outside/secret.txt", "..", "docs/.."],
)
def test_read_file_refuses_dot_dot(tools: dict[str, Tool], path: str, secret: str) -> None:
    """A path containing '..' is refused with a message saying how to write it instead."""
    result = run(tools["read_file"], {"path": path})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert "'..'" in result.content
    assert "without '..'" in result.content
    assert secret not in result.content


def test_read_file_refuses_absolute_path(
    tools: dict[str, Tool], outside: Path, secret: str
) -> None:
    """An absolute path is refused, even one naming a real file."""
    result = run(tools["read_file"], {"path": str(outside / "secret.txt")})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert "absolute path" in result.content
    assert secret not in result.content


def test_read_file_refuses_symlink_leading_out(tools: dict[str, Tool], secret: str) -> None:
    """A symbolic link inside the root whose target is outside it is refused."""
    result = run(tools["read_file"], {"path": "escape.txt"})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert "'escape.txt' is a symbolic link" in result.content
    assert "never followed" in result.content
    assert secret not in result.content


def test_read_file_refuses_path_through_linked_directory(
    tools: dict[str, Tool], secret: str
) -> None:
    """A path passing through a directory link that leads out is refused."""
    result = run(tools["read_file"], {"path": "escape_dir/secret.txt"})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert "passes through 'escape_dir', which is a symbolic link" in result.content
    assert secret not in result.content


def test_read_file_refuses_symlink_inside_root_too(tools: dict[str, Tool]) -> None:
    """Symbolic links are never followed, even one whose target stays inside the root."""
    result = run(tools["read_file"], {"path": "guide_link.md"})
    assert result.is_error
    assert "symbolic link" in result.content
    assert "never followed" in result.content
    assert "use the real path" in result.content


def test_read_file_refuses_nul_character(tools: dict[str, Tool]) -> None:
    """A path with a NUL character is refused instead of crashing the tool."""
    result = run(tools["read_file"], {"path": "README.md\x00.txt"})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert "NUL" in result.content


def test_list_dir_refuses_escapes(tools: dict[str, Tool], outside: Path) -> None:
    """list_dir refuses '..', absolute paths and linked directories leading out."""
    for path in ("..", str(outside), "escape_dir"):
        result = run(tools["list_dir"], {"path": path})
        assert result.is_error, path
        assert result.error is not None
        assert result.error.kind == "tool_error"
        assert "secret.txt" not in result.content


def test_list_dir_marks_symlinks(tools: dict[str, Tool]) -> None:
    """Every link appears as type symlink, without size or target, and a note says why."""
    listing = run(tools["list_dir"], {}).value
    types = {entry.name: entry for entry in listing.entries}
    assert types["escape.txt"].type == "symlink"
    assert types["escape_dir"].type == "symlink"
    assert types["guide_link.md"].type == "symlink"
    assert types["escape.txt"].size is None
    assert listing.note.startswith("3 symbolic links (type 'symlink') not followed")
    assert run(tools["list_dir"], {"path": "docs"}).value.note == ""


def test_find_files_skips_links(tools: dict[str, Tool]) -> None:
    """find_files lists no link and no file behind a directory link, and notes the skips."""
    found = run(tools["find_files"], {"pattern": "**/*"}).value
    assert "escape.txt" not in found.paths
    assert "guide_link.md" not in found.paths
    assert not any(p.startswith("escape_dir") for p in found.paths)
    assert found.note == (
        "skipped 3 entries: escape.txt (symbolic link, not followed), "
        "escape_dir (symbolic link, not followed), guide_link.md (symbolic link, not followed)"
    )


@pytest.mark.parametrize("pattern", ["../outside/*", "/etc/*", "docs/../../*"])
def test_find_files_refuses_patterns_leaving_root(tools: dict[str, Tool], pattern: str) -> None:
    """A glob pattern that is absolute or contains '..' is refused."""
    result = run(tools["find_files"], {"pattern": pattern})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert "root" in result.content


def test_search_text_never_reads_outside(tools: dict[str, Tool]) -> None:
    """search_text does not search files reached through links leading out."""
    result = run(tools["search_text"], {"query": "TOP SECRET"})
    assert not result.is_error
    assert result.value.matches == []


def test_search_text_refuses_glob_leaving_root(tools: dict[str, Tool]) -> None:
    """search_text refuses a glob with '..'."""
    result = run(tools["search_text"], {"query": "SECRET", "glob": "../**"})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert "'..'" in result.content
