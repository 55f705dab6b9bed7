"""Confinement: map a model-supplied path to a real path inside the root, or refuse it.

Every path a tool receives goes through ``Root.resolve``. It refuses absolute paths and
``..`` outright (with a message saying what to send instead), then resolves symbolic links
and refuses a result that is not inside the root. The last check is the one that matters;
the first two exist so the model learns the rule instead of a vague "not allowed".
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

from toolpacks import ToolError

__all__ = ["Root"]


class Root:
    """The directory a ``FileTools`` instance may read, fully resolved."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        """Resolve ``path`` (``~`` expanded) now, so a later ``chdir`` changes nothing.

        Raises:
            ValueError: The path does not exist or is not a directory.
        """
        given = Path(path).expanduser()
        try:
            resolved = given.resolve(strict=True)
        except OSError:
            raise ValueError(f"files root {str(given)!r} does not exist") from None
        if not resolved.is_dir():
            raise ValueError(f"files root {str(given)!r} is not a directory")
        self.path = resolved
        """The absolute, symlink-free root directory."""

    def resolve(self, path: str) -> Path:
        """The real path of ``path`` (relative to the root), refused if it leaves the root.

        Args:
            path: A path relative to the root, with ``/`` separators; ``""`` means the root.

        Raises:
            ToolError: The path is absolute, contains ``..`` or a NUL character, or leads
                outside the root through a symbolic link.
        """
        if "\x00" in path:
            raise ToolError(f"the path {path!r} contains a NUL character; send a plain path")
        pure = PurePath(path or ".")
        if pure.is_absolute() or PurePosixPath(path).is_absolute() or PureWindowsPath(path).drive:
            raise ToolError(
                f"{path!r} is an absolute path; paths are relative to the root directory "
                "(for example 'docs/index.md'); call list_dir with '.' to see the root"
            )
        if ".." in pure.parts:
            raise ToolError(
                f"{path!r} contains '..'; only files inside the root directory can be read, "
                "so give the path from the root down, without '..'"
            )
        real = self.path.joinpath(pure).resolve()
        if not real.is_relative_to(self.path):
            raise ToolError(
                f"{path!r} is a symbolic link (or passes through one) that leads outside the "
                "root directory; only files inside the root can be read"
            )
        return real

    def contains(self, real: Path) -> bool:
        """Whether the resolved path ``real`` is the root or inside it."""
        return real.is_relative_to(self.path)

    def relative(self, real: Path) -> str:
        """``real`` (inside the root) as a ``/``-separated path relative to the root."""
        return real.relative_to(self.path).as_posix() or "."
