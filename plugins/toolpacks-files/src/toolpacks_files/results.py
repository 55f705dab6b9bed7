"""The values the file tools return (rendered as JSON for the model)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["DirEntry", "DirListing", "EntryType", "FileMatches", "TextMatch", "TextSearch"]

EntryType = Literal["file", "directory", "symlink", "other"]
"""What a directory entry is; a ``symlink`` is shown but never followed (it cannot be read)."""


@dataclass(frozen=True, slots=True)
class DirEntry:
    """One entry of a directory listing."""

    name: str
    """The entry's name (not its path)."""
    type: EntryType
    """``file``, ``directory``, ``symlink`` (a symbolic link: never followed, so it cannot be
    read or listed, wherever it points), or ``other`` (a socket, a pipe, a device, or an
    entry that could not be examined)."""
    size: int | None = None
    """The size in bytes, for files."""


@dataclass(frozen=True, slots=True)
class DirListing:
    """The result of ``list_dir``."""

    path: str
    """The directory listed, relative to the root."""
    entries: list[DirEntry]
    """Its entries, sorted by name."""
    truncated: bool = False
    """Whether there were more than 1000 entries (only the first are listed)."""
    note: str = ""
    """Says that symbolic links are not followed, when the directory holds some."""


@dataclass(frozen=True, slots=True)
class FileMatches:
    """The result of ``find_files``."""

    pattern: str
    """The glob pattern."""
    paths: list[str]
    """Matching files, relative to the root, sorted."""
    truncated: bool = False
    """Whether more files match than were returned."""
    note: str = ""
    """A hint when nothing matched, why the search stopped early, and which entries were
    skipped (symbolic links, special files, directories that cannot be opened)."""


@dataclass(frozen=True, slots=True)
class TextMatch:
    """One line containing the searched text."""

    path: str
    """The file, relative to the root."""
    line: int
    """The line number, starting at 1."""
    text: str
    """The line, stripped (cut at 240 characters)."""


@dataclass(frozen=True, slots=True)
class TextSearch:
    """The result of ``search_text``."""

    query: str
    """The text searched for."""
    matches: list[TextMatch]
    """Matching lines, in file order."""
    files_searched: int
    """How many text files were searched."""
    truncated: bool = False
    """Whether the search stopped before looking everywhere (see ``note``)."""
    note: str = ""
    """Why the search stopped early, and which files and entries were skipped."""
