"""What each file tool returns, and the limits it applies."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from toolpacks import Tool, ToolResult

from toolpacks_files import FileTools

# -- definitions -------------------------------------------------------------------------------


def run(tool: Tool, arguments: dict[str, Any]) -> ToolResult:
    """Invoke a tool the way a host would, synchronously."""
    return asyncio.run(tool.invoke(arguments))


def test_tool_names_tags_and_hints(tools: dict[str, Tool]) -> None:
    """Four read-only, idempotent, closed-world tools tagged files and read."""
    assert list(tools) == ["list_dir", "read_file", "find_files", "search_text"]
    for t in tools.values():
        assert t.tags == {"files", "read"}
        assert t.hints.read_only is True
        assert t.hints.idempotent is True
        assert t.hints.open_world is False


def test_descriptions_are_written_for_a_model(tools: dict[str, Tool]) -> None:
    """Every tool has a description and every parameter a description in the schema."""
    for t in tools.values():
        assert len(t.description) > 40
        assert "Args:" not in t.description
        for name, schema in t.input_schema["properties"].items():
            assert schema.get("description"), f"{t.name}.{name}"


def test_constructor_refuses_bad_configuration(tmp_path: Path) -> None:
    """A missing root, a file as root, or a non-positive max_bytes fail at construction."""
    with pytest.raises(ValueError, match="does not exist"):
        FileTools(tmp_path / "missing")
    (tmp_path / "file.txt").write_text("x", "utf-8")
    with pytest.raises(ValueError, match="not a directory"):
        FileTools(tmp_path / "file.txt")
    with pytest.raises(ValueError, match="max_bytes"):
        FileTools(tmp_path, max_bytes=0)


# -- list_dir ----------------------------------------------------------------------------------


def test_list_dir_lists_root_sorted_with_types(tools: dict[str, Tool]) -> None:
    """The root's entries are sorted by name, with types and file sizes."""
    listing = run(tools["list_dir"], {}).value
    assert listing.path == "."
    names = [entry.name for entry in listing.entries]
    assert names == sorted(names)
    by_name = {entry.name: entry for entry in listing.entries}
    assert by_name["docs"].type == "directory"
    assert by_name["README.md"].type == "file"
    assert by_name["README.md"].size == len("# Demo\nHello world\nA Needle in the README\n")
    assert not listing.truncated


def test_list_dir_subdirectory(tools: dict[str, Tool]) -> None:
    """A subdirectory is listed by its relative path."""
    listing = run(tools["list_dir"], {"path": "docs"}).value
    assert [entry.name for entry in listing.entries] == ["api.md", "guide.md"]


def test_list_dir_errors(tools: dict[str, Tool]) -> None:
    """A file or a missing directory gives an error naming the right tool to use."""
    on_file = run(tools["list_dir"], {"path": "README.md"})
    assert on_file.is_error
    assert "read_file" in on_file.content
    missing = run(tools["list_dir"], {"path": "nope"})
    assert missing.is_error
    assert "no directory" in missing.content


# -- read_file ---------------------------------------------------------------------------------


def test_read_file_returns_text(tools: dict[str, Tool]) -> None:
    """A small text file is returned whole, without notes."""
    result = run(tools["read_file"], {"path": "docs/guide.md"})
    assert result.value == "Guide\nfind the needle here\n"


def test_read_file_truncates_with_offset_to_continue(tools: dict[str, Tool]) -> None:
    """A file over the limit is cut, and the note's offset reads the rest, part by part."""
    first = run(tools["read_file"], {"path": "big.txt"}).value
    assert first.startswith("line 000\n")
    assert "[read_file: truncated: this is bytes 0 to 100 of 900" in first
    assert "offset=100" in first
    parts, offset = [], 0
    while True:
        text = run(tools["read_file"], {"path": "big.txt", "offset": offset}).value
        found = re.search(r"offset=(\d+) to read the next part\]$", text)
        parts.append(text.split("\n\n[read_file:")[0] if found else text)
        if not found:
            break
        offset = int(found.group(1))
    assert "".join(parts) == "".join(f"line {i:03d}\n" for i in range(100))


def test_read_file_max_bytes_is_capped_by_configuration(tools: dict[str, Tool]) -> None:
    """A smaller max_bytes is honoured; a larger one is reduced to the configured limit."""
    small = run(tools["read_file"], {"path": "big.txt", "max_bytes": 9}).value
    assert small.startswith("line 000\n\n\n[read_file: truncated: this is bytes 0 to 9 of 900")
    large = run(tools["read_file"], {"path": "big.txt", "max_bytes": 10_000}).value
    assert "bytes 0 to 100 of 900" in large


def test_read_file_argument_errors(tools: dict[str, Tool]) -> None:
    """A non-positive max_bytes, a negative offset or one past the end are errors."""
    for arguments, expected in [
        ({"max_bytes": 0}, "max_bytes must be at least 1"),
        ({"offset": -1}, "offset must be 0 or more"),
        ({"offset": 901}, "past the end"),
    ]:
        result = run(tools["read_file"], {"path": "big.txt", **arguments})
        assert result.is_error
        assert expected in result.content


def test_read_file_refuses_binary(tools: dict[str, Tool]) -> None:
    """A file with NUL bytes is refused as binary, from any offset."""
    for offset in (0, 10):
        result = run(tools["read_file"], {"path": "image.png", "offset": offset})
        assert result.is_error
        assert "binary file" in result.content


def test_read_file_marks_invalid_utf8(root: Path, tools: dict[str, Tool]) -> None:
    """Bytes that are not UTF-8 are replaced, with a note saying so."""
    (root / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    text = run(tools["read_file"], {"path": "latin1.txt"}).value
    assert text.startswith("caf\ufffd\n")
    assert "not valid UTF-8" in text


def test_read_file_carries_split_character_over(root: Path, tools: dict[str, Tool]) -> None:
    """A multi-byte character cut by the limit starts the next part instead."""
    (root / "accents.txt").write_text("é" * 80, "utf-8")  # 160 bytes
    first = run(tools["read_file"], {"path": "accents.txt", "max_bytes": 5}).value
    assert first.startswith("éé\n\n[read_file: truncated: this is bytes 0 to 4 of 160")
    second = run(tools["read_file"], {"path": "accents.txt", "offset": 4, "max_bytes": 5}).value
    assert second.startswith("éé\n\n")


def test_read_file_empty_file(tools: dict[str, Tool]) -> None:
    """An empty file says so rather than returning nothing."""
    assert "the file is empty" in run(tools["read_file"], {"path": "empty.txt"}).value


def test_read_file_errors_name_the_fix(tools: dict[str, Tool]) -> None:
    """A directory or a missing file gives an error naming the tool to use instead."""
    directory = run(tools["read_file"], {"path": "docs"})
    assert directory.is_error
    assert "list_dir" in directory.content
    missing = run(tools["read_file"], {"path": "docs/missing.md"})
    assert missing.is_error
    assert "find_files" in missing.content


# -- find_files --------------------------------------------------------------------------------


def test_find_files_recursive_glob(tools: dict[str, Tool]) -> None:
    """'**/*.md' finds Markdown files at every depth, sorted, skipping .git."""
    found = run(tools["find_files"], {"pattern": "**/*.md"}).value
    assert found.paths == ["README.md", "docs/api.md", "docs/guide.md"]
    assert not found.truncated


def test_find_files_top_level_glob_and_hint(tools: dict[str, Tool]) -> None:
    """'*.py' matches the top level only, and an empty result suggests '**/'."""
    found = run(tools["find_files"], {"pattern": "*.py"}).value
    assert found.paths == []
    assert "'**/*.py'" in found.note
    assert run(tools["find_files"], {"pattern": "**/*.py"}).value.paths == ["src/app.py"]


def test_find_files_skips_vcs_directories(tools: dict[str, Tool]) -> None:
    """Files under .git are never reported."""
    paths = run(tools["find_files"], {"pattern": "**"}).value.paths
    assert not any(p.startswith(".git/") for p in paths)


def test_find_files_max_results(tools: dict[str, Tool]) -> None:
    """max_results caps the paths and sets truncated."""
    found = run(tools["find_files"], {"pattern": "**/*.md", "max_results": 2}).value
    assert len(found.paths) == 2
    assert found.truncated


def test_find_files_bad_patterns(tools: dict[str, Tool]) -> None:
    """An empty pattern or a non-positive max_results is an error."""
    assert run(tools["find_files"], {"pattern": " "}).is_error
    assert run(tools["find_files"], {"pattern": "*", "max_results": 0}).is_error


# -- search_text -------------------------------------------------------------------------------


def test_search_text_finds_lines_ignoring_case(tools: dict[str, Tool]) -> None:
    """Matching lines come with file and line number; case is ignored by default."""
    search = run(tools["search_text"], {"query": "needle"}).value
    found = [(m.path, m.line, m.text) for m in search.matches]
    assert found == [
        ("README.md", 3, "A Needle in the README"),
        ("docs/guide.md", 2, "find the needle here"),
        ("src/app.py", 2, "return 'needle'"),
    ]
    assert not search.truncated


def test_search_text_case_sensitive_and_glob(tools: dict[str, Tool]) -> None:
    """case_sensitive matches exactly; glob restricts the files searched."""
    exact = run(tools["search_text"], {"query": "Needle", "case_sensitive": True}).value
    assert [m.path for m in exact.matches] == ["README.md"]
    python = run(tools["search_text"], {"query": "needle", "glob": "**/*.py"}).value
    assert [m.path for m in python.matches] == ["src/app.py"]
    assert python.files_searched == 1


def test_search_text_skips_binary_files(tools: dict[str, Tool]) -> None:
    """Binary files are skipped, and the note says how many."""
    search = run(tools["search_text"], {"query": "needle", "glob": "*.png"}).value
    assert search.matches == []
    assert "skipped 1 binary" in search.note


def test_search_text_max_results(tools: dict[str, Tool]) -> None:
    """max_results caps the matches, sets truncated and says how to narrow the search."""
    search = run(tools["search_text"], {"query": "line", "max_results": 3}).value
    assert len(search.matches) == 3
    assert search.truncated
    assert "narrow" in search.note


def test_search_text_bad_queries(tools: dict[str, Tool]) -> None:
    """An empty or multi-line query, or a bad glob, is an error."""
    assert run(tools["search_text"], {"query": ""}).is_error
    assert run(tools["search_text"], {"query": "a\nb"}).is_error
    assert run(tools["search_text"], {"query": "a", "glob": "[!]"}).is_error
