"""``FileTools``: list, read, find and search the files under one root directory."""

from __future__ import annotations

import codecs
import os
import stat
from contextlib import closing
from pathlib import Path, PurePath

from toolpacks import Toolbox, ToolContext, ToolError, tool

from toolpacks_files._glob import Glob, GlobError, compile_glob
from toolpacks_files._paths import PathNotFound, Root, close_quietly, kind_of
from toolpacks_files._walk import Budget, Skipped, WalkedFile, walk_files
from toolpacks_files.results import DirEntry, DirListing, FileMatches, TextMatch, TextSearch

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_ENTRIES", "DEFAULT_MAX_SECONDS", "FileTools"]

DEFAULT_MAX_BYTES = 65_536
"""Most bytes ``read_file`` returns per call unless configured otherwise."""
MAX_ENTRIES = 1_000
"""Most entries ``list_dir`` returns."""
MAX_RESULTS = 1_000
"""Upper bound of ``max_results`` for ``find_files`` and ``search_text``."""
DEFAULT_MAX_ENTRIES = 20_000
"""Most directory entries one ``find_files`` or ``search_text`` call looks at, by default."""
DEFAULT_MAX_SECONDS = 10.0
"""Seconds one ``find_files`` or ``search_text`` call walks for, by default; past them it
returns what it found so far."""
SEARCH_MAX_FILE_BYTES = 2 * 1024 * 1024
"""Files larger than this are skipped by ``search_text``."""
SNIFF_BYTES = 8_192
"""How much of a file is checked for NUL bytes to tell binary from text."""
LINE_CHARS = 240
"""Longest matched line ``search_text`` returns (longer ones are cut)."""

TAGS = frozenset({"files", "read"})


class FileTools(Toolbox):
    """Read-only tools for the files under one root directory.

    Nothing outside the root can be listed or read: absolute paths and ``..`` are refused
    with a ``ToolError`` the model can act on, and every path is opened one component at a
    time relative to the previous directory with ``O_NOFOLLOW``, so symbolic links are never
    followed (not even ones pointing inside the root) and a link swapped in during a call
    is refused by the kernel. Nothing is ever written.

    Args:
        root: The directory the tools may read (``~`` is expanded; a relative path is
            relative to the working directory; resolved once, here). There is no default.
        max_bytes: The most bytes ``read_file`` returns in one call.
        max_entries: The most directory entries (files, directories, links) one
            ``find_files`` or ``search_text`` call looks at before it stops.
        max_seconds: The most seconds one ``find_files`` or ``search_text`` call walks for
            before it stops.

    Raises:
        ValueError: ``root`` is not an existing directory, or a limit is not positive.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_seconds: float = DEFAULT_MAX_SECONDS,
    ) -> None:
        for name, limit in (("max_bytes", max_bytes), ("max_entries", max_entries)):
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
                raise ValueError(f"{name} must be a positive integer, got {limit!r}")
        if (
            isinstance(max_seconds, bool)
            or not isinstance(max_seconds, int | float)
            or not 0 < max_seconds < float("inf")
        ):
            raise ValueError(f"max_seconds must be a positive number, got {max_seconds!r}")
        self._root = Root(root)
        self._max_bytes = max_bytes
        self._max_entries = max_entries
        self._max_seconds = float(max_seconds)

    @property
    def root(self) -> Path:
        """The resolved root directory."""
        return self._root.path

    @property
    def max_bytes(self) -> int:
        """The most bytes ``read_file`` returns in one call."""
        return self._max_bytes

    @property
    def max_entries(self) -> int:
        """The most directory entries one ``find_files`` or ``search_text`` call looks at."""
        return self._max_entries

    @property
    def max_seconds(self) -> float:
        """The most seconds one ``find_files`` or ``search_text`` call walks for."""
        return self._max_seconds

    def __repr__(self) -> str:
        return f"FileTools(root={str(self.root)!r}, max_bytes={self.max_bytes})"

    @tool(tags=TAGS, read_only=True, idempotent=True, open_world=False)
    def list_dir(self, path: str = ".") -> DirListing:
        """List the files and subdirectories of a directory inside the root directory.

        Use it to explore what exists before reading; then call read_file on a file, or
        list_dir again on a subdirectory. Entries are sorted by name; files show their size
        in bytes. Symbolic links are shown with type 'symlink' but never followed: they
        cannot be read or listed.

        Args:
            path: The directory, relative to the root ('.' is the root itself), with '/'
                separators. Absolute paths and '..' are refused.
        """
        try:
            fd = self._root.open(path)
        except PathNotFound as exc:
            raise ToolError(
                f"no directory {path!r} in the root ({exc}); call list_dir with '.'"
            ) from None
        try:
            mode = os.fstat(fd).st_mode
            if stat.S_ISREG(mode):
                raise ToolError(f"{path!r} is a file, not a directory; use read_file to read it")
            if not stat.S_ISDIR(mode):
                raise ToolError(f"{path!r} is {kind_of(mode)}, not a directory")
            with os.scandir(fd) as scan:
                found = sorted(scan, key=lambda entry: entry.name)
            # The entries examine themselves relative to ``fd``: describe them before closing.
            entries = [_entry(entry) for entry in found[:MAX_ENTRIES]]
        except OSError as exc:
            raise ToolError(f"cannot list {path!r}: {exc.strerror or exc}") from None
        finally:
            close_quietly(fd)
        links = sum(entry.type == "symlink" for entry in entries)
        note = (
            f"{links} symbolic link{'s' if links > 1 else ''} (type 'symlink') "
            "not followed: links cannot be read or listed, wherever they point"
            if links
            else ""
        )
        return DirListing(_shown(path), entries, len(found) > MAX_ENTRIES, note)

    @tool(tags=TAGS, read_only=True, idempotent=True, open_world=False)
    def read_file(self, path: str, offset: int = 0, max_bytes: int | None = None) -> str:
        """Read a text file inside the root directory and return its contents.

        Long files are returned in parts: when the file is longer than the limit, the text
        ends with a note in square brackets giving the offset to pass to read the next
        part. Binary files (images, archives, executables) are refused; text that is not
        valid UTF-8 is shown with replacement characters. Symbolic links are never
        followed: a path that is or passes through one is refused. Find paths with list_dir
        or find_files first.

        Args:
            path: The file, relative to the root, with '/' separators (for example
                'docs/index.md'). Absolute paths and '..' are refused.
            offset: The byte position to start reading from; 0 reads from the beginning.
                Use the offset given in a previous truncation note to continue.
            max_bytes: The most bytes to return; omit it for the configured maximum
                (larger values are reduced to that maximum).
        """
        limit = self.max_bytes if max_bytes is None else min(max_bytes, self.max_bytes)
        if limit < 1:
            raise ToolError(f"max_bytes must be at least 1, got {max_bytes}")
        if offset < 0:
            raise ToolError(f"offset must be 0 or more, got {offset}")
        try:
            fd = self._root.open(path)
        except PathNotFound as exc:
            raise ToolError(
                f"no file {path!r} in the root ({exc}); use find_files or list_dir to see "
                "what exists"
            ) from None
        try:
            status = os.fstat(fd)
            if stat.S_ISDIR(status.st_mode):
                raise ToolError(f"{path!r} is a directory; use list_dir to see what it contains")
            if not stat.S_ISREG(status.st_mode):
                raise ToolError(
                    f"{path!r} is {kind_of(status.st_mode)}; only regular files can be read"
                )
            handle = os.fdopen(fd, "rb")
        except OSError as exc:
            close_quietly(fd)
            raise ToolError(f"cannot read {path!r}: {exc.strerror or exc}") from None
        except BaseException:
            close_quietly(fd)
            raise
        size = status.st_size
        try:
            with handle:
                if offset > size:
                    raise ToolError(f"offset {offset} is past the end of {path!r} ({size} bytes)")
                head = handle.read(SNIFF_BYTES) if offset else b""
                handle.seek(offset)
                chunk = handle.read(limit)
        except OSError as exc:
            raise ToolError(f"cannot read {path!r}: {exc.strerror or exc}") from None
        if _is_binary(head or chunk[:SNIFF_BYTES]):
            raise ToolError(
                f"{path!r} is a binary file ({size} bytes); read_file returns text only"
            )
        text, consumed, valid = _decode(chunk, final=offset + len(chunk) >= size)
        end = offset + consumed
        notes: list[str] = []
        if size == 0:
            notes.append("the file is empty")
        if not valid:
            notes.append("the file is not valid UTF-8; undecodable bytes are shown as \ufffd")
        if end < size:
            notes.append(
                f"truncated: this is bytes {offset} to {end} of {size}; call read_file with "
                f"path={path!r} and offset={end} to read the next part"
            )
        if notes:
            text += "\n\n" + "\n".join(f"[read_file: {note}]" for note in notes)
        return text

    @tool(tags=TAGS, read_only=True, idempotent=True, open_world=False)
    def find_files(
        self, pattern: str, max_results: int = 200, context: ToolContext | None = None
    ) -> FileMatches:
        """Find files inside the root directory whose path matches a glob pattern.

        Use it to locate files by name or extension. The pattern matches the whole path
        relative to the root: '*.md' finds Markdown files at the top level only, while
        '**/*.md' finds them at every depth and 'docs/**' everything under docs. '*' and
        '?' do not cross '/'; '[abc]' matches one listed character. Version-control and
        cache directories (.git, node_modules, .venv, __pycache__, ...) are not searched;
        symbolic links are never followed (the note lists skipped entries). A search of a
        large tree stops after a set number of entries or seconds, with a note: narrow the
        pattern to a directory ('docs/**/*.md') to search less.

        Args:
            pattern: The glob pattern, relative to the root, such as '**/*.py'.
            max_results: The most paths to return (at most 1000).
            context: Given by the host, not the model: the walk stops once the call is
                cancelled.
        """
        if not pattern.strip():
            raise ToolError("the pattern is empty; use for example '**/*' for every file")
        matcher = _compile_glob(pattern)
        wanted = _check_max_results(max_results)
        paths: list[str] = []
        truncated = False
        skipped, budget = Skipped(), self._budget(context)
        with closing(walk_files(self._root, skipped, budget, matcher.may_match_below)) as walk:
            for found in walk:
                if matcher.match(found.relative):
                    if len(paths) == wanted:
                        truncated = True
                        break
                    paths.append(found.relative)
        notes = []
        if budget.stopped:
            truncated = True
            notes.append(f"{budget.stopped}; narrow the pattern to search less")
        if not paths and "/" not in pattern and "**" not in pattern:
            notes.append(
                f"nothing matches at the top level; use '**/{pattern}' to search every depth"
            )
        if skipped.count:
            notes.append(skipped.note())
        return FileMatches(pattern, paths, truncated, "; ".join(notes))

    @tool(tags=TAGS, read_only=True, idempotent=True, open_world=False)
    def search_text(
        self,
        query: str,
        glob: str = "**/*",
        max_results: int = 50,
        case_sensitive: bool = False,
        context: ToolContext | None = None,
    ) -> TextSearch:
        """Search the text files inside the root directory for lines containing some text.

        Use it to find where something is mentioned or defined, then read_file around the
        reported line. The query is plain text, not a regular expression. Binary files and
        files over 2 MiB are skipped, as are version-control and cache directories and
        symbolic links (never followed; the note lists skipped entries). A search of a
        large tree stops after a set number of entries or seconds, with a note: narrow the
        glob to search less.

        Args:
            query: The text to look for, matched within single lines.
            glob: Which files to search, as a glob pattern relative to the root (see
                find_files), such as '**/*.py'; the default searches every file.
            max_results: The most matching lines to return (at most 1000).
            case_sensitive: Match upper and lower case exactly; by default case is ignored.
            context: Given by the host, not the model: the walk stops once the call is
                cancelled.
        """
        if not query:
            raise ToolError("the query is empty; give the text to search for")
        if "\n" in query:
            raise ToolError("the query spans several lines; search for one line of text")
        matcher = _compile_glob(glob)
        wanted = _check_max_results(max_results)
        needle = query if case_sensitive else query.casefold()
        matches: list[TextMatch] = []
        searched = unread = 0
        stopped = ""
        skipped, budget = Skipped(), self._budget(context)
        with closing(walk_files(self._root, skipped, budget, matcher.may_match_below)) as walk:
            for found in walk:
                if not matcher.match(found.relative):
                    continue
                lines = _text_lines(found)
                if lines is None:
                    unread += 1
                    continue
                searched += 1
                for number, line in enumerate(lines, start=1):
                    if needle in (line if case_sensitive else line.casefold()):
                        if len(matches) == wanted:
                            stopped = f"more than {wanted} matching lines; narrow the query or glob"
                            break
                        text = line.strip()[:LINE_CHARS]
                        matches.append(TextMatch(found.relative, number, text))
                if stopped:
                    break
        if budget.stopped and not stopped:
            stopped = f"{budget.stopped}; narrow the glob to search less"
        notes = [stopped] if stopped else []
        if unread:
            notes.append(f"skipped {unread} binary, unreadable or over-2-MiB files")
        if skipped.count:
            notes.append(skipped.note())
        return TextSearch(query, matches, searched, bool(stopped), "; ".join(notes))

    def _budget(self, context: ToolContext | None) -> Budget:
        """A fresh walk budget from the limits, stopping when ``context`` is cancelled."""
        if context is None:
            return Budget(self._max_entries, self._max_seconds)
        return Budget(self._max_entries, self._max_seconds, lambda: context.cancelled)


def _entry(entry: os.DirEntry[str]) -> DirEntry:
    """Describe a directory entry from its own metadata, never following a link."""
    try:
        if entry.is_symlink():
            return DirEntry(entry.name, "symlink")
        if entry.is_dir(follow_symlinks=False):
            return DirEntry(entry.name, "directory")
        if entry.is_file(follow_symlinks=False):
            return DirEntry(entry.name, "file", entry.stat(follow_symlinks=False).st_size)
    except OSError:
        pass
    return DirEntry(entry.name, "other")


def _shown(path: str) -> str:
    return PurePath(path or ".").as_posix()


def _compile_glob(pattern: str) -> Glob:
    pure = PurePath(pattern)
    if pure.is_absolute() or pattern.startswith("/"):
        raise ToolError(f"{pattern!r} is absolute; glob patterns are relative to the root")
    if ".." in pure.parts:
        raise ToolError(f"{pattern!r} contains '..'; only the root directory can be searched")
    try:
        return compile_glob(pattern)
    except GlobError as exc:
        raise ToolError(f"not a valid glob pattern: {exc}") from None


def _check_max_results(value: int) -> int:
    if value < 1:
        raise ToolError(f"max_results must be at least 1, got {value}")
    return min(value, MAX_RESULTS)


def _is_binary(sample: bytes) -> bool:
    return b"\x00" in sample


def _decode(chunk: bytes, *, final: bool) -> tuple[str, int, bool]:
    """Decode UTF-8, keeping an incomplete trailing character for the next part.

    Returns the text, how many bytes it covers, and whether they were valid UTF-8.
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    text = decoder.decode(chunk, final=final)
    consumed = len(chunk) - len(decoder.getstate()[0])
    if consumed == 0 and chunk:
        # The whole part is one incomplete character: show it replaced rather than stall.
        text, consumed = chunk.decode("utf-8", errors="replace"), len(chunk)
    try:
        chunk[:consumed].decode("utf-8")
    except UnicodeDecodeError:
        return text, consumed, False
    return text, consumed, True


def _text_lines(found: WalkedFile) -> list[str] | None:
    """The lines of a text file, or None for a binary, unreadable or too large one.

    The file is opened without following links and checked to be a regular file with
    ``fstat``, since it may have been replaced after the walk saw it.
    """
    try:
        fd = found.open()
    except OSError:
        return None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or status.st_size > SEARCH_MAX_FILE_BYTES:
            return None
        data = _read_at_most(fd, SEARCH_MAX_FILE_BYTES + 1)
    except OSError:
        return None
    finally:
        close_quietly(fd)
    if len(data) > SEARCH_MAX_FILE_BYTES:
        return None
    if _is_binary(data[:SNIFF_BYTES]):
        return None
    return data.decode("utf-8", errors="replace").splitlines()


def _read_at_most(fd: int, size: int) -> bytes:
    """Read up to ``size`` bytes from ``fd`` (less only at the end of the file)."""
    parts: list[bytes] = []
    while size > 0:
        part = os.read(fd, size)
        if not part:
            break
        parts.append(part)
        size -= len(part)
    return b"".join(parts)
