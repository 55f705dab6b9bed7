"""Walking the root: glob patterns as regular expressions, and a bounded, sorted file walk.

The walk never follows a symbolic link to a directory (so it cannot loop or leave the root),
skips version-control and cache directories, and yields a file reached through a symbolic
link only when the link's target is a regular file inside the root.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from toolpacks_files._paths import Root

__all__ = ["SKIPPED_DIRS", "glob_regex", "walk_files"]

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


def walk_files(root: Root) -> Iterator[tuple[str, Path]]:
    """Yield ``(relative_path, real_path)`` for every readable file under the root, sorted.

    Directories are visited in name order; ``SKIPPED_DIRS`` and symbolic links to
    directories are not entered; a symbolic link to a file is yielded only when its target
    is a regular file inside the root.
    """
    for current, dirs, files in os.walk(root.path, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        base = Path(current)
        prefix = base.relative_to(root.path).as_posix()
        for name in sorted(files):
            path = base / name
            relative = name if prefix == "." else f"{prefix}/{name}"
            if path.is_symlink():
                real = path.resolve()
                if not (root.contains(real) and real.is_file()):
                    continue
                yield relative, real
            elif path.is_file():
                yield relative, path
