"""Isolated children's private directories never outlive their host.

Each mounted isolated pack has a private directory ``toolpacks-<pack>-*`` in the temporary
directory (``_child.Runtime``). ``close()`` removes it; so does this module when the host's
interpreter exits without ``close()`` (an ``atexit`` handler closes every mount still open:
its child is stopped, then its directory removed). A host that cannot run its exit handlers
(killed by SIGKILL) leaves the directory behind: each one holds an ``owner`` file naming the
host's process id and start time, and ``toolpacks gc`` removes those whose owner is gone
(``remove_stale``).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable
from pathlib import Path

__all__ = ["OWNER", "forget", "remove_stale", "track"]

OWNER = "owner"
"""The file in a private directory naming the host that made it (JSON: pid, start)."""
_PREFIX = "toolpacks-"

_open: dict[int, tuple[Path, Callable[[], None]]] = {}
_lock = threading.Lock()


def _started(pid: int) -> str | None:
    """When process ``pid`` started (``/proc`` clock ticks), or None when it is not running."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    return raw[raw.rfind(")") + 2 :].split()[19]


def _alive(owner: dict[str, object]) -> bool:
    """Whether the process that ``owner`` names is still the one that wrote it."""
    pid = owner.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    if Path("/proc/self").exists():
        return _started(pid) == owner.get("start")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def track(root: Path, close: Callable[[], None]) -> None:
    """Mark ``root`` as this process's, and have ``close`` run at exit unless ``forget``."""
    me = os.getpid()
    with contextlib.suppress(OSError):
        (root / OWNER).write_text(json.dumps({"pid": me, "start": _started(me)}), "ascii")
    with _lock:
        _open[id(root)] = (root, _weak(close))


def _weak(close: Callable[[], None]) -> Callable[[], None]:
    """``close`` held weakly when it is a bound method (a dropped mount is not kept alive)."""
    if not hasattr(close, "__self__"):
        return close
    ref = weakref.WeakMethod(close)

    def call() -> None:
        method = ref()
        if method is not None:
            method()

    return call


def forget(root: Path) -> None:
    """``root`` was removed by its mount's ``close``: nothing to do for it at exit."""
    with _lock:
        _open.pop(id(root), None)


@atexit.register
def _close_open() -> None:
    """Close every mount still open, then remove what is left of their directories."""
    with _lock:
        entries = list(_open.values())
        _open.clear()
    for root, close in entries:
        with contextlib.suppress(Exception):
            close()
        shutil.rmtree(root, ignore_errors=True)


def remove_stale(temp: Path | None = None) -> list[Path]:
    """Remove private directories whose owner process is gone; the removed ones.

    Only directories of this user named ``toolpacks-*`` holding an ``owner`` file are
    considered; one whose owner still runs is in use and kept.
    """
    base = Path(temp) if temp is not None else Path(tempfile.gettempdir())
    removed: list[Path] = []
    try:
        candidates = sorted(p for p in base.iterdir() if p.name.startswith(_PREFIX))
    except OSError:
        return removed
    for path in candidates:
        try:
            if path.is_symlink() or not path.is_dir() or path.stat().st_uid != os.getuid():
                continue
            owner = json.loads((path / OWNER).read_text(encoding="ascii"))
        except (OSError, ValueError):
            continue
        if isinstance(owner, dict) and not _alive(owner):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed
