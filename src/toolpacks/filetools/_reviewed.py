"""Code that a trust check reviewed, and reading it so that what runs is what was checked.

Trusting a configuration found in the working directory fingerprints the code it points to
(``host._trust_scope``). The host checks that fingerprint once, but it loads file tools and
starts MCP servers later, maybe much later; a file swapped in between would run unreviewed.
So the check records here the digest of every file it read (a ``Review``), and whatever runs
a file first reads it, compares its digest with the reviewed one and uses those very bytes
(``read_reviewed``), or refuses. A file inside a reviewed tools directory, or beside a
reviewed Python module, that the review does not list (one added since) is refused too.

Only what a trust check recorded is checked: a configuration passed explicitly is trusted
without a review, and its files are used as they are.

Reading is safe for hostile trees: only regular files are opened (a pipe, a device or a link
to one is never read, the open does not block), at most ``MAX_FILE_BYTES`` of one, and walks
stop after a number of entries (``Budget``).
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "MAX_FILE_BYTES",
    "Budget",
    "Review",
    "UnreviewedCodeError",
    "file_digest",
    "forget",
    "read_reviewed",
    "record",
    "regular_files",
    "verify",
    "verify_files",
]

MAX_FILE_BYTES = 32 * 1024 * 1024
"""The most bytes read of one file of code; a longer file is covered by its size only, and
is therefore never run from a reviewed configuration."""

_CHUNK = 1 << 16
_SKIPPED_DIRS = frozenset({"__pycache__", ".git"})


class UnreviewedCodeError(Exception):
    """A file of code differs from what the trust check reviewed; the message says which."""


class Budget:
    """How many more directory entries a walk may visit (shared by all walks of one check).

    Args:
        entries: The number of entries (files and directories) allowed in all.
    """

    def __init__(self, entries: int) -> None:
        self.left = entries
        """Entries still allowed."""

    def take(self) -> bool:
        """Use one entry; False once the budget is spent."""
        if self.left <= 0:
            return False
        self.left -= 1
        return True


def regular_files(root: Path, budget: Budget, *, suffix: str = "") -> Iterator[Path]:
    """The regular files under ``root`` (symbolic links to directories are not followed).

    Entries that are not regular files (pipes, devices, sockets, links to them) are skipped,
    as are ``.git`` and ``__pycache__``; ``suffix`` keeps only names ending with it. Stops
    when ``budget`` is spent.
    """
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in sorted(files):
            if not budget.take():
                dirs[:] = []
                return
            if name.endswith(".pyc") or not name.endswith(suffix):
                continue
            path = Path(folder) / name
            if _is_regular(path):
                yield path
        for _ in dirs:
            if not budget.take():
                dirs[:] = []
                return


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def file_digest(path: Path, *, keep: bool = False) -> tuple[str, bytes | None]:
    """The SHA-256 of a regular file read once, and (with ``keep``) the bytes hashed.

    Something else gives a marker that no content hashes to: ``missing``, ``special:<mode>``
    (a pipe or a device: stat'ed, never read) or ``large:<size>`` (past ``MAX_FILE_BYTES``).
    The open does not block and is checked again on the open file, should a pipe be swapped
    in between.
    """
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return "missing", None
    if not stat.S_ISREG(info.st_mode):
        return f"special:{stat.S_IFMT(info.st_mode):o}", None
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_BINARY", 0))
    except OSError:
        return "missing", None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return f"special:{stat.S_IFMT(info.st_mode):o}", None
        return _read_bounded(fd, info.st_size, keep)
    except OSError:
        return "missing", None
    finally:
        os.close(fd)


def _read_bounded(fd: int, size: int, keep: bool) -> tuple[str, bytes | None]:
    digest = hashlib.sha256()
    kept: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            break
        total += len(chunk)
        if total > MAX_FILE_BYTES:
            return f"large:{max(size, total)}", None
        digest.update(chunk)
        if keep:
            kept.append(chunk)
    return digest.hexdigest(), b"".join(kept) if keep else None


@dataclass(frozen=True)
class Review:
    """What one trust check of a configuration read and found trusted."""

    base: Path
    """The configuration's directory (resolved)."""
    roots: tuple[Path, ...]
    """Directories whose every file of code was reviewed (``[files]`` directories, and the
    folders of reviewed Python modules, where a module added later would be imported)."""
    digests: Mapping[Path, str]
    """Each reviewed file (resolved) and the digest of the bytes that were checked."""
    recheck: Callable[[], Review | None] | None = field(default=None, compare=False)
    """Runs the trust check again (after ``toolpacks trust``): a new review, or None."""

    def covers(self, real: Path) -> bool:
        """Whether ``real`` (resolved) is code this review speaks for."""
        if real in self.digests:
            return True
        return any(real.is_relative_to(root) for root in self.roots)


_reviews: dict[str, Review] = {}
_lock = threading.Lock()


def record(key: str, review: Review) -> None:
    """Remember ``review`` as the latest trust check of the configuration ``key``."""
    with _lock:
        _reviews[key] = review


def forget(key: str) -> None:
    """Drop the review of ``key`` (its configuration is no longer trusted)."""
    with _lock:
        _reviews.pop(key, None)


def verify(path: Path, digest: str) -> str | None:
    """Why the file ``path`` with this ``digest`` may not run, or None when it may.

    Every review that covers the file must list it with this digest. A review that does not
    is asked to check again first, so ``toolpacks trust`` followed by a reload works.
    """
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        real = path.absolute()
    with _lock:
        governing = [(key, r) for key, r in _reviews.items() if r.covers(real)]
    for key, review in governing:
        if digest.startswith(("large:", "special:")):
            return (
                f"{path} is not a regular file of at most {MAX_FILE_BYTES} bytes, so it was "
                f"not fully reviewed by the trust check of {key} and is not run"
            )
        if review.digests.get(real) == digest:
            continue
        if digest == "missing" and real not in review.digests:
            continue  # absent then and now
        renewed = review.recheck() if review.recheck is not None else None
        if renewed is not None:
            record(key, renewed)
            if renewed.digests.get(real) == digest:
                continue
        what = "changed since" if real in review.digests else "was added after"
        return (
            f"{path} {what} the trust check of {key} (or cannot be read as it was), so it "
            "was not run: review it, run `toolpacks trust` again, then reload"
        )
    return None


def verify_files(paths: Iterable[Path]) -> str | None:
    """``verify`` for each of ``paths``, each read once; the first refusal, or None."""
    for path in paths:
        if not _governed(path):
            continue  # no review speaks for it: not worth reading
        problem = verify(path, file_digest(path)[0])
        if problem is not None:
            return problem
    return None


def _governed(path: Path) -> bool:
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        real = path.absolute()
    with _lock:
        return any(review.covers(real) for review in _reviews.values())


def read_reviewed(path: Path) -> bytes:
    """The bytes of ``path``, read once, if they are what any review of them checked.

    Raises:
        UnreviewedCodeError: A review covers the file and lists other bytes (or none).
        OSError: The file cannot be read; ``FileNotFoundError`` when it is missing.
    """
    digest, data = file_digest(path, keep=True)
    problem = verify(path, digest)
    if problem is not None:
        raise UnreviewedCodeError(problem)
    if data is not None:
        return data
    if digest == "missing":
        return path.read_bytes()  # raises the precise OSError (missing, permission)
    if digest.startswith("special:"):
        raise OSError(f"{path} is not a regular file")
    return path.read_bytes()  # large, and not under review: the user's own file
