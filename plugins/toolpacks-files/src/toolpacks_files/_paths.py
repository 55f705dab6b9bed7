"""Confinement: open a model-supplied path inside the root without following symbolic links.

Every path a tool receives goes through ``Root.open``. It refuses absolute paths, ``..`` and
NUL characters outright (with a message saying what to send instead), then walks the path
one component at a time, ``openat``-style:

1. the root directory is opened (``O_DIRECTORY | O_NOFOLLOW``), once per call;
2. each intermediate component is opened relative to the previous directory's descriptor
   with ``O_DIRECTORY | O_NOFOLLOW``;
3. the last component is opened relative to its parent with ``O_NOFOLLOW | O_NONBLOCK``
   (non-blocking, so opening a named pipe cannot hang), and the caller checks with
   ``fstat`` what it got.

A symbolic link at any step makes the open fail in the kernel, so nothing that swaps a path
for a link between two system calls can lead the walk out of the root: there is no
check-then-open window. Symbolic links are therefore never followed, not even ones whose
target is inside the root.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

from toolpacks import ToolError

__all__ = [
    "DIR_FLAGS",
    "LEAF_FLAGS",
    "PathNotFound",
    "Root",
    "close_quietly",
    "kind_of",
    "split_path",
]

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""Flags opening a directory step: refuses a symbolic link or anything but a directory."""
LEAF_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
"""Flags opening the last step: refuses a symbolic link; never blocks on a pipe."""


class PathNotFound(ToolError):
    """Nothing exists at the path (or a step of it is not a directory).

    Tools catch it to name the tool the model should call instead.
    """


def close_quietly(fd: int) -> None:
    """Close a file descriptor, ignoring errors (it is being abandoned anyway)."""
    with contextlib.suppress(OSError):
        os.close(fd)


def split_path(path: str) -> list[str]:
    """The components of a model-supplied relative path, without ``.`` and empty parts.

    Args:
        path: A path relative to the root, with ``/`` separators; ``""`` means the root.

    Raises:
        ToolError: The path is absolute, contains ``..`` or a NUL character.
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
    return [part for part in pure.parts if part not in ("", ".")]


class Root:
    """The directory a ``FileTools`` instance may read, and the only way to open inside it."""

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

    def open_root(self) -> int:
        """A new descriptor of the root directory (the caller closes it).

        Raises:
            ToolError: The root cannot be opened (removed, or replaced by a link).
        """
        try:
            return os.open(self.path, DIR_FLAGS)
        except OSError as exc:
            raise ToolError(
                f"the root directory cannot be opened right now ({exc.strerror or exc}); "
                "tell the user"
            ) from None

    def open(self, path: str) -> int:
        """Open ``path`` (relative to the root) without following any symbolic link.

        The result may be a directory, a regular file or something else (a pipe, a
        device): the caller checks with ``os.fstat`` and closes the descriptor.

        Args:
            path: A path relative to the root, with ``/`` separators; ``""`` or ``"."``
                means the root itself.

        Raises:
            PathNotFound: Nothing exists at ``path``, or one of its steps is not a
                directory.
            ToolError: The path is absolute, contains ``..`` or a NUL character, or one of
                its steps is a symbolic link (they are never followed), or it cannot be
                opened (permissions).
        """
        parts = split_path(path)
        fd = self.open_root()
        for index, name in enumerate(parts):
            last = index == len(parts) - 1
            try:
                child = os.open(name, LEAF_FLAGS if last else DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                try:
                    error = _open_error(path, parts[: index + 1], last, fd, exc)
                finally:
                    close_quietly(fd)
                raise error from None
            close_quietly(fd)
            fd = child
        return fd


def _open_error(path: str, steps: list[str], last: bool, dir_fd: int, exc: OSError) -> ToolError:
    """The error to report when opening the last of ``steps`` (relative to ``dir_fd``) failed.

    The kernel already refused the open; ``lstat`` only picks the clearest message.
    """
    step = "/".join(steps)
    try:
        mode: int | None = os.stat(steps[-1], dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        mode = None
    if (mode is not None and stat.S_ISLNK(mode)) or exc.errno == errno.ELOOP:
        where = f"{step!r} is" if last else f"{path!r} passes through {step!r}, which is"
        return ToolError(
            f"{where} a symbolic link; symbolic links are never followed (not even "
            "ones pointing inside the root), so nothing outside the root directory can be "
            "read through one; use the real path of the file"
        )
    if exc.errno == errno.ENOENT or mode is None:
        return PathNotFound(f"nothing named {step!r} exists in the root directory")
    if exc.errno == errno.ENOTDIR:
        return PathNotFound(f"{step!r} is not a directory")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return ToolError(f"{step!r} cannot be opened: permission denied")
    return ToolError(f"{step!r} cannot be opened: {exc.strerror or exc}")


def kind_of(mode: int) -> str:
    """A short name for what a file mode describes, for error messages."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"
