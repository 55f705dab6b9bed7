"""Where toolpacks keeps its state, and how it writes it without losing any.

Several ``toolpacks`` processes may write the same file at once (two terminals running
``toolpacks trust``, a server refreshing a cache while ``toolpacks lock`` runs). Every state
file is therefore written whole to a uniquely named temporary file beside it and renamed over
it (a reader sees the old file or the new one, never half of one), and every read-modify-write
holds a lock file (``<file>.lock``) so that no writer overwrites another's change.

Locations come from ``platformdirs`` (``XDG_CONFIG_HOME`` and ``XDG_CACHE_HOME`` on Linux,
the platform's own folders elsewhere); ``TOOLPACKS_CACHE_DIR`` overrides the cache. The
directories that hold state are the user's only: created ``0700``, refused when they are a
symbolic link or belong to someone else.

``platformdirs`` and ``filelock`` are imported inside the functions, so ``import toolpacks``
does not pay for them.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: discovery imports this on `toolpacks list`
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from typing import Any

__all__ = [
    "StateFileError",
    "atomic_write",
    "cache_dir",
    "config_dir",
    "locked",
    "private_dir",
    "read_json",
    "update_json",
]

APP = "toolpacks"


class StateFileError(OSError):
    """A state file or its directory cannot be used safely (wrong owner, a link, a lock)."""


def config_dir() -> Path:
    """The per-user configuration directory of toolpacks (where the trust store lives).

    ``$XDG_CONFIG_HOME/toolpacks`` or ``~/.config/toolpacks`` on Linux, the platform's
    configuration folder elsewhere.
    """
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP, appauthor=False))


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The per-user cache directory: ``$TOOLPACKS_CACHE_DIR``, else the platform's.

    On Linux the platform's is ``$XDG_CACHE_HOME/toolpacks`` or ``~/.cache/toolpacks``;
    ``XDG_CACHE_HOME`` is read from ``environ`` (default ``os.environ``) like the override.
    """
    env = os.environ if environ is None else environ
    override = env.get("TOOLPACKS_CACHE_DIR")
    if override:
        return Path(override)
    if os.name == "posix" and sys.platform != "darwin":
        # platformdirs' XDG rule, applied to the mapping given rather than os.environ.
        xdg = env.get("XDG_CACHE_HOME", "").strip() or os.path.expanduser("~/.cache")
        return Path(xdg) / APP
    from platformdirs import user_cache_dir

    return Path(user_cache_dir(APP, appauthor=False))


def private_dir(path: Path) -> Path:
    """Make sure ``path`` is a directory only its owner, the current user, can use.

    Missing directories (parents too) are created ``0700``. An existing one is refused when
    it is a symbolic link or (on POSIX) belongs to another user, since whoever controls it
    could read or replace what toolpacks keeps there; one of ours with a looser mode is
    tightened to ``0700``.

    Raises:
        StateFileError: ``path`` is a link, not a directory, or not the current user's.
    """
    path = Path(path)
    missing: list[Path] = []
    probe = path
    while not os.path.lexists(probe) and probe.parent != probe:
        missing.append(probe)
        probe = probe.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory, 0o700)
    return _check_private(path)


def _check_private(path: Path) -> Path:
    """Refuse a link, a non-directory or a stranger's directory; tighten a loose mode."""
    import stat

    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise StateFileError(
            f"{path} is a symbolic link; toolpacks keeps its state only in a real directory "
            "of yours. Remove the link (or point TOOLPACKS_CACHE_DIR / XDG_* elsewhere)."
        )
    if not stat.S_ISDIR(info.st_mode):
        raise StateFileError(f"{path} exists and is not a directory; remove it or move it away")
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        raise StateFileError(
            f"{path} belongs to user id {info.st_uid}, not to you ({os.geteuid()}); toolpacks "
            "will not keep state where someone else can change it"
        )
    if os.name == "posix" and stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def atomic_write(path: Path, data: str | bytes, *, mode: int = 0o600) -> None:
    """Replace ``path`` with ``data`` in one step; readers never see a partial file.

    The data goes to a uniquely named temporary file in the same directory (so concurrent
    writers never share one), is flushed to disk, given ``mode`` and renamed over ``path``.
    The directory must exist. ``str`` data is written as UTF-8.
    """
    import tempfile

    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _sync_directory(path.parent)


def _sync_directory(directory: Path) -> None:
    """Flush the rename to disk where the platform allows opening a directory."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def locked(path: Path, timeout: float = 30.0) -> Iterator[None]:
    """Hold ``<path>.lock`` for the duration; other processes using it wait their turn.

    Raises:
        StateFileError: The lock was not free within ``timeout`` seconds.
    """
    from filelock import FileLock, Timeout

    lock = FileLock(str(path) + ".lock", timeout=timeout, mode=0o600)
    try:
        lock.acquire()
    except Timeout as exc:
        raise StateFileError(
            f"{path} is locked by another toolpacks process (waited {timeout:g} s for "
            f"{lock.lock_file}); try again, or remove the lock file if no process holds it"
        ) from exc
    try:
        yield
    finally:
        lock.release()


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``; ``{}`` when it is missing.

    Raises:
        StateFileError: The file exists but does not hold a JSON object.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise StateFileError(f"{path} is not valid JSON ({exc}); fix or remove it") from exc
    if not isinstance(data, dict):
        raise StateFileError(f"{path} does not hold a JSON object; fix or remove it")
    return data


def update_json(
    path: Path,
    change: Callable[[dict[str, Any]], dict[str, Any] | None],
    *,
    mode: int = 0o600,
    timeout: float = 30.0,
) -> dict[str, Any]:
    """Read the JSON object in ``path``, apply ``change``, write it back, all under its lock.

    ``change`` receives the current object (``{}`` when the file is missing) and returns the
    new one, or ``None`` when it changed the one it was given. A file that does not hold a
    JSON object is refused rather than overwritten, so nothing already recorded is lost.

    Returns:
        The object as written.

    Raises:
        StateFileError: The file is not a JSON object, or its lock was not free in time.
    """
    path = Path(path)
    with locked(path, timeout):
        data = read_json(path)
        changed = change(data)
        result = data if changed is None else changed
        atomic_write(path, json.dumps(result, indent=2, sort_keys=True) + "\n", mode=mode)
    return result
