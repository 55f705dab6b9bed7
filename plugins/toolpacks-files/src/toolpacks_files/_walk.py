"""Walking the root: glob patterns as regular expressions, and a bounded, sorted file walk.

The walk holds a descriptor of each directory it is in and opens every subdirectory relative
to it with ``O_DIRECTORY | O_NOFOLLOW`` (see ``_paths``), so it never follows a symbolic link,
cannot loop, and cannot be led out of the root by a directory swapped for a link while it
runs. Symbolic links, entries that are neither regular files nor directories, and
directories that cannot be opened are skipped and recorded in a ``Skipped`` for the result's
note; they never fail the whole walk. Version-control and cache directories are not entered.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field

from toolpacks_files._paths import DIR_FLAGS, LEAF_FLAGS, Root, close_quietly

__all__ = [
    "MAX_DEPTH",
    "SKIPPED_DIRS",
    "SYMLINK_REASON",
    "Skipped",
    "WalkedFile",
    "glob_regex",
    "walk_files",
]

SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".venv",
        "node_modules",
    }
)
"""Directory names the walk never enters (they are still shown by ``list_dir``)."""
MAX_DEPTH = 64
"""Deepest directory nesting the walk enters (one open descriptor per level)."""
SHOWN_SKIPPED = 10
"""How many skipped entries a note names (the rest are only counted)."""
SYMLINK_REASON = "symbolic link, not followed"
"""Why a symbolic link is skipped."""


@dataclass(slots=True)
class Skipped:
    """Entries a walk or listing left out, with why, for the note of the result."""

    count: int = 0
    """How many entries were skipped."""
    shown: list[str] = field(default_factory=list)
    """The first few, as ``path (reason)``."""

    def add(self, relative: str, reason: str) -> None:
        """Record that the entry ``relative`` (a path from the root) was skipped."""
        self.count += 1
        if len(self.shown) < SHOWN_SKIPPED:
            self.shown.append(f"{relative} ({reason})")

    def note(self) -> str:
        """``skipped N entries: a (why), b (why)`` (and how many more), or ``""``."""
        if not self.count:
            return ""
        noun = "entry" if self.count == 1 else "entries"
        more = self.count - len(self.shown)
        rest = f", and {more} more" if more else ""
        return f"skipped {self.count} {noun}: {', '.join(self.shown)}{rest}"


@dataclass(frozen=True, slots=True)
class WalkedFile:
    """A regular file the walk found (as its directory entry said, without following links)."""

    relative: str
    """The ``/``-separated path from the root."""
    dir_fd: int
    """A descriptor of its directory, valid only until the walk moves on."""
    name: str
    """Its name in that directory."""

    def open(self) -> int:
        """Open the file without following a link (it may have changed since the scan).

        Raises:
            OSError: It cannot be opened, or has been replaced by a symbolic link.
        """
        return os.open(self.name, LEAF_FLAGS, dir_fd=self.dir_fd)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob pattern matched against whole ``/``-separated relative paths.

    ``*`` and ``?`` stay within one path component, ``**/`` matches any number of
    directories (none included), a trailing ``**`` matches everything below, and ``[abc]`` /
    ``[!abc]`` are character classes. Matching is case-sensitive.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i) and i + 2 == n:
            out.append(".*")
            i += 2
            continue
        char = pattern[i]
        i += 1
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := pattern.find("]", i + 1)) != -1:
            body = pattern[i:end]
            negate = body.startswith("!")
            body = (body[1:] if negate else body).replace("\\", "\\\\")
            if body.startswith("^"):
                body = "\\" + body
            out.append("[" + ("^" if negate else "") + body + "]")
            i = end + 1
        else:
            out.append(re.escape(char))
    return re.compile("".join(out), re.DOTALL)


def walk_files(root: Root, skipped: Skipped) -> Generator[WalkedFile, None, None]:
    """Yield every regular file under the root, in a sorted, depth-first order.

    In each directory its files come first (by name), then its subdirectories (by name).
    ``SKIPPED_DIRS`` are not entered; symbolic links, other special entries and directories
    that cannot be opened are recorded in ``skipped``. Close the generator (or exhaust it)
    to release its directory descriptors.

    Raises:
        ToolError: The root itself cannot be opened.
    """
    fd = root.open_root()
    try:
        yield from _walk(fd, "", skipped, 0)
    finally:
        close_quietly(fd)


def _walk(fd: int, prefix: str, skipped: Skipped, depth: int) -> Iterator[WalkedFile]:
    try:
        with os.scandir(fd) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError as exc:
        skipped.add(prefix.rstrip("/") or ".", f"cannot be listed: {exc.strerror or exc}")
        return
    subdirs: list[str] = []
    for entry in entries:
        relative = prefix + entry.name
        try:
            if entry.is_symlink():
                skipped.add(relative, SYMLINK_REASON)
            elif entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_DIRS:
                    subdirs.append(entry.name)
            elif entry.is_file(follow_symlinks=False):
                yield WalkedFile(relative, fd, entry.name)
            else:
                skipped.add(relative, "not a regular file or directory")
        except OSError as exc:
            skipped.add(relative, f"cannot be examined: {exc.strerror or exc}")
    for name in subdirs:
        relative = prefix + name
        if depth + 1 > MAX_DEPTH:
            skipped.add(relative, f"nested deeper than {MAX_DEPTH} directories")
            continue
        try:
            child = os.open(name, DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            skipped.add(relative, _open_reason(name, fd, exc))
            continue
        try:
            yield from _walk(child, relative + "/", skipped, depth + 1)
        finally:
            close_quietly(child)


def _open_reason(name: str, dir_fd: int, exc: OSError) -> str:
    """Why the directory ``name`` could not be opened (it may have changed since the scan)."""
    try:
        if stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            return SYMLINK_REASON
    except OSError:
        pass
    if exc.errno == errno.ELOOP:
        return SYMLINK_REASON
    if exc.errno == errno.ENOTDIR:
        return "no longer a directory"
    return f"cannot be opened: {exc.strerror or exc}"
