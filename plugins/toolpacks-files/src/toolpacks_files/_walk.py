"""Walking the root: a bounded, sorted file walk that never follows a symbolic link.

The walk holds a descriptor of each directory it is in and opens every subdirectory relative
to it with ``O_DIRECTORY | O_NOFOLLOW`` (see ``_paths``), so it never follows a symbolic link,
cannot loop, and cannot be led out of the root by a directory swapped for a link while it
runs. Symbolic links, entries that are neither regular files nor directories, and
directories that cannot be opened are skipped and recorded in a ``Skipped`` for the result's
note; they never fail the whole walk. Version-control and cache directories are not entered.

Every walk spends a ``Budget``: it looks at a limited number of entries (directories
included, so a tree of empty directories is bounded too), for a limited time, and stops at
the next entry once its call is cancelled. It is a plain Python loop, so the thread running
it lets the others (the event loop included) take the GIL at the usual intervals.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from itertools import islice
from time import monotonic

from toolpacks_files._paths import DIR_FLAGS, LEAF_FLAGS, Root, close_quietly

__all__ = [
    "MAX_DEPTH",
    "SKIPPED_DIRS",
    "SYMLINK_REASON",
    "Budget",
    "Skipped",
    "WalkedFile",
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


def _never() -> bool:
    return False


@dataclass(slots=True)
class Budget:
    """What one walk may spend: entries looked at and seconds, until its call is cancelled.

    The walk calls ``spend`` before each entry it looks at; once that returns False the walk
    ends, and ``stopped`` says why, for the result's note.

    Args:
        max_entries: Most directory entries (files, directories, links...) to look at.
        max_seconds: Most seconds to walk for, counted from the budget's creation.
        cancelled: Says whether the call has been cancelled (``ToolContext.cancelled``).
    """

    max_entries: int
    max_seconds: float
    cancelled: Callable[[], bool] = _never
    seen: int = 0
    """Entries looked at so far."""
    stopped: str = ""
    """Why the walk stopped early, or ``""`` while it has not."""
    deadline: float = field(init=False)
    """The ``time.monotonic()`` past which the walk stops."""

    def __post_init__(self) -> None:
        self.deadline = monotonic() + self.max_seconds

    @property
    def remaining(self) -> int:
        """How many more entries may be looked at."""
        return max(self.max_entries - self.seen, 0)

    def spend(self) -> bool:
        """Count one entry; False (and ``stopped`` set) when the walk must end instead."""
        if self.stopped:
            return False
        if self.cancelled():
            self.stopped = "the call was cancelled"
        elif self.seen >= self.max_entries:
            self.stopped = (
                f"stopped after looking at {self.max_entries} entries (the max_entries limit)"
            )
        elif monotonic() > self.deadline:
            self.stopped = f"stopped after {self.max_seconds:g} seconds (the max_seconds limit)"
        else:
            self.seen += 1
            return True
        return False


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


def _always(directory: str) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class _Walk:
    """What stays the same through one walk's recursion."""

    skipped: Skipped
    budget: Budget
    enter: Callable[[str], bool]


def walk_files(
    root: Root,
    skipped: Skipped,
    budget: Budget,
    enter: Callable[[str], bool] = _always,
) -> Generator[WalkedFile, None, None]:
    """Yield every regular file under the root, in a sorted, depth-first order.

    In each directory its files come first (by name), then its subdirectories (by name).
    ``SKIPPED_DIRS`` are not entered; symbolic links, other special entries and directories
    that cannot be opened are recorded in ``skipped``. The walk ends early when ``budget``
    is spent (``budget.stopped`` then says why). Close the generator (or exhaust it) to
    release its directory descriptors.

    Args:
        root: The root to walk.
        skipped: Where entries left out are recorded.
        budget: Entries, seconds and cancellation; every entry looked at spends one.
        enter: Says whether a directory (its relative path) is worth entering; a glob
            pattern's ``may_match_below`` leaves out the directories it cannot reach.

    Raises:
        ToolError: The root itself cannot be opened.
    """
    fd = root.open_root()
    try:
        yield from _walk(fd, "", _Walk(skipped, budget, enter), 0)
    finally:
        close_quietly(fd)


def _walk(fd: int, prefix: str, walk: _Walk, depth: int) -> Iterator[WalkedFile]:
    skipped, budget = walk.skipped, walk.budget
    try:
        with os.scandir(fd) as scan:
            # Past the budget's remaining entries the walk stops anyway: read no more.
            entries = sorted(islice(scan, budget.remaining + 1), key=lambda entry: entry.name)
    except OSError as exc:
        skipped.add(prefix.rstrip("/") or ".", f"cannot be listed: {exc.strerror or exc}")
        return
    subdirs: list[str] = []
    for entry in entries:
        if not budget.spend():
            return
        relative = prefix + entry.name
        try:
            if entry.is_symlink():
                skipped.add(relative, SYMLINK_REASON)
            elif entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_DIRS and walk.enter(relative):
                    subdirs.append(entry.name)
            elif entry.is_file(follow_symlinks=False):
                yield WalkedFile(relative, fd, entry.name)
            else:
                skipped.add(relative, "not a regular file or directory")
        except OSError as exc:
            skipped.add(relative, f"cannot be examined: {exc.strerror or exc}")
    for name in subdirs:
        if budget.stopped:
            return
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
            yield from _walk(child, relative + "/", walk, depth + 1)
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
