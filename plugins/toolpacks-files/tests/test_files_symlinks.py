"""Symbolic links are never followed at any step, even while the tree changes under a call.

Every test builds real files and links in ``tmp_path``: a root, and next to it a directory
holding a secret that no tool result may ever contain.
"""

from __future__ import annotations

import asyncio
import errno
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from toolpacks import Tool, ToolResult

from toolpacks_files import FileTools
from toolpacks_files import _walk as walk_module

SECRET = "SECRET outside the root"
INSIDE = "harmless text inside the root"


def run(tool: Tool, arguments: dict[str, Any]) -> ToolResult:
    """Invoke a tool the way a host would, synchronously."""
    return asyncio.run(tool.invoke(arguments))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A root with links out of it as a final component and as an intermediate directory.

    ``root/out.txt`` -> the outside secret file; ``root/sub/out_dir`` -> the outside
    directory; ``root/sub/real.txt`` is a plain file.
    """
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n", "utf-8")
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "real.txt").write_text(INSIDE + "\n", "utf-8")
    os.symlink(outside / "secret.txt", root / "out.txt")
    os.symlink(outside, root / "sub" / "out_dir", target_is_directory=True)
    return root


def value(tool: Tool, arguments: dict[str, Any]) -> Any:
    """The value of a call that must succeed."""
    result = run(tool, arguments)
    assert not result.is_error, result.content
    return result.value


def by_name(root: Path) -> dict[str, Tool]:
    """The tools of a ``FileTools`` on ``root``, by name."""
    return {t.name: t for t in FileTools(root).tools()}


def open_fds() -> int:
    """How many file descriptors this process has open."""
    return len(os.listdir("/proc/self/fd"))


# -- a link out, as the last component and as an intermediate directory ------------------------


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("out.txt", "'out.txt' is a symbolic link"),
        ("sub/out_dir/secret.txt", "passes through 'sub/out_dir', which is a symbolic link"),
        ("./sub//out_dir/secret.txt", "passes through 'sub/out_dir', which is a symbolic link"),
    ],
)
def test_read_file_refuses_links_at_every_step(tree: Path, path: str, message: str) -> None:
    """read_file refuses a link as the file itself and as a directory on the way."""
    result = run(by_name(tree)["read_file"], {"path": path})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert message in result.content
    assert "never followed" in result.content
    assert SECRET not in result.content


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("sub/out_dir", "'sub/out_dir' is a symbolic link"),
        ("sub/out_dir/.", "'sub/out_dir' is a symbolic link"),
        ("out.txt", "'out.txt' is a symbolic link"),
    ],
)
def test_list_dir_refuses_links_at_every_step(tree: Path, path: str, message: str) -> None:
    """list_dir refuses a linked directory, and a link as the last component."""
    result = run(by_name(tree)["list_dir"], {"path": path})
    assert result.is_error
    assert message in result.content
    assert "secret.txt" not in result.content


@pytest.mark.parametrize("pattern", ["**", "**/*.txt", "sub/out_dir/*", "out.txt"])
def test_find_files_never_reports_through_links(tree: Path, pattern: str) -> None:
    """find_files reports no linked file and nothing behind a linked directory."""
    found = value(by_name(tree)["find_files"], {"pattern": pattern})
    assert not any(p == "out.txt" or p.startswith("sub/out_dir") for p in found.paths)
    assert "out.txt (symbolic link, not followed)" in found.note
    # A directory the pattern cannot reach ('sub' for 'out.txt') is not entered.
    reaches_sub = pattern != "out.txt"
    assert ("sub/out_dir (symbolic link, not followed)" in found.note) is reaches_sub


@pytest.mark.parametrize("glob", ["**/*", "out.txt", "sub/out_dir/**"])
def test_search_text_never_reads_through_links(tree: Path, glob: str) -> None:
    """search_text reads neither a linked file nor a file behind a linked directory."""
    search = value(by_name(tree)["search_text"], {"query": "secret", "glob": glob})
    assert search.matches == []
    reaches_sub = glob != "out.txt"  # 'sub' cannot hold a match of 'out.txt': not entered
    assert ("sub/out_dir (symbolic link, not followed)" in search.note) is reaches_sub
    assert SECRET not in str(search)


def test_files_behind_links_are_still_reachable_by_their_real_path(tree: Path) -> None:
    """Refusing links does not hide the plain files next to them."""
    tools = by_name(tree)
    assert run(tools["read_file"], {"path": "sub/real.txt"}).value == INSIDE + "\n"
    assert value(tools["find_files"], {"pattern": "**"}).paths == ["sub/real.txt"]
    search = value(tools["search_text"], {"query": "harmless"})
    assert [(m.path, m.line) for m in search.matches] == [("sub/real.txt", 1)]


# -- racing: a path swapped between a file and a link while read_file runs ---------------------


@pytest.fixture
def swapper() -> Iterator[Callable[[Callable[[], None]], threading.Event]]:
    """Start a thread running a swap step in a loop; stopped and joined after the test."""
    stop = threading.Event()
    threads: list[threading.Thread] = []

    def start(step: Callable[[], None]) -> threading.Event:
        swapped = threading.Event()

        def loop() -> None:
            while not stop.is_set():
                step()
                swapped.set()

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        threads.append(thread)
        return swapped

    yield start
    stop.set()
    for thread in threads:
        thread.join(timeout=10)


def hammer(tool: Tool, path: str, *, calls: int = 5_000, seconds: float = 2.0) -> list[str]:
    """Call ``tool`` with ``path`` up to ``calls`` times or ``seconds``; every result text."""

    async def many() -> list[str]:
        contents: list[str] = []
        deadline = time.monotonic() + seconds
        for _ in range(calls):
            if time.monotonic() > deadline:
                break
            contents.append((await tool.invoke({"path": path})).content)
        return contents

    return asyncio.run(many())


def test_read_file_race_final_component(
    tmp_path: Path, swapper: Callable[[Callable[[], None]], threading.Event]
) -> None:
    """A file atomically swapped with a link to an outside file never yields the outside text."""
    outside = tmp_path / "outside.txt"
    outside.write_text(SECRET, "utf-8")
    root = tmp_path / "root"
    root.mkdir()
    target = root / "target.txt"
    target.write_text(INSIDE, "utf-8")

    def step() -> None:
        link, plain = root / ".link.tmp", root / ".file.tmp"
        os.symlink(outside, link)
        os.replace(link, target)
        plain.write_text(INSIDE, "utf-8")
        os.replace(plain, target)

    swapped = swapper(step)
    assert swapped.wait(10)
    contents = hammer(by_name(root)["read_file"], "target.txt")
    assert contents
    assert not [c for c in contents if SECRET in c]
    assert all(c == INSIDE or "symbolic link" in c or "no file" in c for c in contents)


def test_read_file_race_intermediate_directory(
    tmp_path: Path, swapper: Callable[[Callable[[], None]], threading.Event]
) -> None:
    """A directory swapped with a link to an outside directory never leads out."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text(SECRET, "utf-8")
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f.txt").write_text(INSIDE, "utf-8")

    def step() -> None:
        link = root / ".link.tmp"
        os.rename(root / "d", root / ".d.tmp")
        os.symlink(outside, link, target_is_directory=True)
        os.replace(link, root / "d")
        os.unlink(root / "d")
        os.rename(root / ".d.tmp", root / "d")

    swapped = swapper(step)
    assert swapped.wait(10)
    tools = by_name(root)
    contents = hammer(tools["read_file"], "d/f.txt", calls=3_000, seconds=1.0)
    contents += hammer(tools["list_dir"], "d", calls=1_000, seconds=0.5)
    assert contents
    assert not [c for c in contents if SECRET in c]


# -- loops and odd entries are skipped with a note, never a failure of the whole root ----------


@pytest.fixture
def loops(tmp_path: Path) -> Path:
    """A root holding a -> b, b -> a, and dir/loop -> dir, next to ordinary files."""
    root = tmp_path / "root"
    (root / "dir").mkdir(parents=True)
    (root / "dir" / "note.txt").write_text("a needle in dir\n", "utf-8")
    (root / "top.txt").write_text("a needle at the top\n", "utf-8")
    os.symlink("b", root / "a")
    os.symlink("a", root / "b")
    os.symlink(root / "dir", root / "dir" / "loop", target_is_directory=True)
    return root


def test_list_dir_answers_beside_loops(loops: Path) -> None:
    """list_dir shows looping links as symlink entries next to the rest."""
    tools = by_name(loops)
    listing = value(tools["list_dir"], {})
    assert [(e.name, e.type) for e in listing.entries] == [
        ("a", "symlink"),
        ("b", "symlink"),
        ("dir", "directory"),
        ("top.txt", "file"),
    ]
    assert "2 symbolic links" in listing.note
    inner = value(tools["list_dir"], {"path": "dir"})
    assert [(e.name, e.type) for e in inner.entries] == [("loop", "symlink"), ("note.txt", "file")]
    assert "1 symbolic link " in inner.note
    for path in ("a", "dir/loop", "dir/loop/loop/note.txt"):
        refused = run(tools["read_file"], {"path": path})
        assert refused.is_error
        assert "symbolic link" in refused.content


def test_find_files_answers_beside_loops(loops: Path) -> None:
    """find_files finds the real files and names the skipped links in its note."""
    found = value(by_name(loops)["find_files"], {"pattern": "**/*.txt"})
    assert found.paths == ["top.txt", "dir/note.txt"]
    assert found.note == (
        "skipped 3 entries: a (symbolic link, not followed), b (symbolic link, not followed), "
        "dir/loop (symbolic link, not followed)"
    )


def test_search_text_answers_beside_loops(loops: Path) -> None:
    """search_text searches the real files and names the skipped links in its note."""
    search = value(by_name(loops)["search_text"], {"query": "needle"})
    assert [m.path for m in search.matches] == ["top.txt", "dir/note.txt"]
    assert "skipped 3 entries" in search.note
    assert "dir/loop (symbolic link, not followed)" in search.note
    assert not search.truncated


def test_odd_entries_are_skipped_with_a_note(tmp_path: Path) -> None:
    """A named pipe is refused by read_file without blocking, and noted by the walks."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "plain.txt").write_text("needle\n", "utf-8")
    os.mkfifo(root / "pipe")
    tools = by_name(root)
    refused = run(tools["read_file"], {"path": "pipe"})
    assert refused.is_error
    assert "'pipe' is a named pipe; only regular files can be read" in refused.content
    assert [e.type for e in value(tools["list_dir"], {}).entries] == ["other", "file"]
    found = value(tools["find_files"], {"pattern": "**"})
    assert found.paths == ["plain.txt"]
    assert "pipe (not a regular file or directory)" in found.note
    search = value(tools["search_text"], {"query": "needle"})
    assert [m.path for m in search.matches] == ["plain.txt"]
    assert "pipe (not a regular file or directory)" in search.note


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_unreadable_directory_is_skipped_with_a_note(tmp_path: Path) -> None:
    """A directory that cannot be opened is skipped by the walks, not fatal to the root."""
    root = tmp_path / "root"
    (root / "locked").mkdir(parents=True)
    (root / "locked" / "hidden.txt").write_text("needle\n", "utf-8")
    (root / "open.txt").write_text("needle\n", "utf-8")
    (root / "locked").chmod(0)
    try:
        tools = by_name(root)
        found = value(tools["find_files"], {"pattern": "**"})
        assert found.paths == ["open.txt"]
        assert "locked (cannot be opened: Permission denied)" in found.note
        search = value(tools["search_text"], {"query": "needle"})
        assert [m.path for m in search.matches] == ["open.txt"]
        assert "locked (cannot be opened" in search.note
        denied = run(tools["list_dir"], {"path": "locked"})
        assert denied.is_error
        assert "permission denied" in denied.content
    finally:
        (root / "locked").chmod(0o755)


def test_directory_failing_to_open_is_skipped_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Permission denied on a subdirectory (simulated, so it holds as root too) is noted."""
    root = tmp_path / "root"
    (root / "locked").mkdir(parents=True)
    (root / "locked" / "hidden.txt").write_text("needle\n", "utf-8")
    (root / "open.txt").write_text("needle\n", "utf-8")
    real_open = os.open

    def deny_locked(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if path == "locked" and dir_fd is not None:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", deny_locked)
    tools = by_name(root)
    found = value(tools["find_files"], {"pattern": "**"})
    assert found.paths == ["open.txt"]
    assert found.note == "skipped 1 entry: locked (cannot be opened: Permission denied)"
    search = value(tools["search_text"], {"query": "needle"})
    assert [m.path for m in search.matches] == ["open.txt"]
    assert "locked (cannot be opened: Permission denied)" in search.note
    denied = run(tools["list_dir"], {"path": "locked/"})
    assert denied.is_error
    assert "'locked' cannot be opened: permission denied" in denied.content


def test_deep_nesting_is_skipped_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Directories nested past the depth limit are skipped and named in the note."""
    monkeypatch.setattr(walk_module, "MAX_DEPTH", 2)
    root = tmp_path / "root"
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "a" / "b" / "one.txt").write_text("x", "utf-8")
    (root / "a" / "b" / "c" / "two.txt").write_text("x", "utf-8")
    found = value(by_name(root)["find_files"], {"pattern": "**"})
    assert found.paths == ["a/b/one.txt"]
    assert "a/b/c (nested deeper than 2 directories)" in found.note


def test_long_skip_lists_are_cut(tmp_path: Path) -> None:
    """The note names the first ten skipped entries and counts the rest."""
    root = tmp_path / "root"
    root.mkdir()
    for number in range(13):
        os.symlink("nowhere", root / f"link{number:02d}")
    note = value(by_name(root)["find_files"], {"pattern": "**"}).note
    assert note.startswith("skipped 13 entries: link00 (symbolic link, not followed), ")
    assert "link09 (symbolic link, not followed), and 3 more" in note
    assert "link10" not in note


def test_no_descriptor_leaks(tree: Path, loops: Path) -> None:
    """Successful, refused and stopped-early calls all close every descriptor they open."""
    calls: list[tuple[Path, str, dict[str, Any]]] = [
        (tree, "read_file", {"path": "sub/real.txt"}),
        (tree, "read_file", {"path": "sub/out_dir/secret.txt"}),
        (tree, "read_file", {"path": "sub"}),
        (tree, "read_file", {"path": "sub/missing/x.txt"}),
        (tree, "list_dir", {"path": "sub"}),
        (tree, "list_dir", {"path": "sub/real.txt"}),
        (loops, "find_files", {"pattern": "**", "max_results": 1}),
        (loops, "search_text", {"query": "needle", "max_results": 1}),
    ]
    for root, name, arguments in calls:  # warm up (imports, caches)
        run(by_name(root)[name], arguments)
    before = open_fds()
    for _ in range(20):
        for root, name, arguments in calls:
            run(by_name(root)[name], arguments)
    assert open_fds() == before
