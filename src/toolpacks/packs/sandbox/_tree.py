"""Nothing a child starts outlives it: a PID namespace whose init dies with the child.

``guard_tree`` runs in the child (the process the host started) before it runs anything
else. It asks the kernel for ``SIGKILL`` when the host dies (``PR_SET_PDEATHSIG``), makes a
new PID namespace (as root, or through a user namespace where unprivileged ones are
allowed) and forks the pack into it as its init; the process the host started waits for it.
When the init of a PID namespace dies the kernel kills every process in it, so new sessions
and double-forked daemons end with the pack, whether it exits, is killed by the host, or
the host is killed. (A process cannot start threads once its children are in another PID
namespace, hence the fork rather than a tiny init beside the pack.) Where no
namespace can be made the child becomes a subreaper: orphans stay below it, and
``kill_descendants`` ends them when it exits normally (not when it is SIGKILLed).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal

__all__ = ["descendants", "guard_tree", "kill_descendants"]

_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36
_CLONE_NEWUSER, _CLONE_NEWPID = 0x10000000, 0x20000000


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _die_with_parent(libc: ctypes.CDLL) -> None:
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _map_ids(uid: int, gid: int) -> bool:
    """Map this process's ids to themselves in the user namespace it has just entered."""
    try:
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"{uid} {uid} 1"),
            ("gid_map", f"{gid} {gid} 1"),
        ):
            with open(f"/proc/self/{name}", "w", encoding="ascii") as out:
                out.write(text)
    except OSError:
        return False
    return True


def _mappable(libc: ctypes.CDLL, uid: int, gid: int) -> bool:
    """Whether a user namespace made here could map our ids, tried in a throwaway child.

    Entering one cannot be undone, and one whose ids could not be mapped (root without
    ``CAP_SETFCAP`` may not map uid 0) leaves files uncreatable and, with its pending PID
    namespace, a process that can fork once: so the child finds out first.
    """
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports by its exit status only
        os._exit(0 if libc.unshare(_CLONE_NEWUSER) == 0 and _map_ids(uid, gid) else 1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def _unshare(libc: ctypes.CDLL) -> bool:
    """A new PID namespace for this process's future children (a user one if needed)."""
    if libc.unshare(_CLONE_NEWPID) == 0:
        return True
    uid, gid = os.getuid(), os.getgid()
    if not _mappable(libc, uid, gid):
        return False
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWPID) != 0:
        return False
    return _map_ids(uid, gid)  # the same ids inside as outside


def _supervise(child: int) -> None:  # pragma: no cover - the supervisor never returns
    """Wait for the namespace's init (the pack) and exit as it did."""
    while True:
        try:
            _, status = os.waitpid(child, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
        code = os.waitstatus_to_exitcode(status)
        os._exit(code if code >= 0 else 128 - code)


def guard_tree() -> str:
    """Make this process's descendants end with it; how, in a few words.

    With a PID namespace, this process stays as a supervisor (its pid, limits and CPU time
    are what the host watches) and the call returns in its only child, the namespace's
    init, which runs the pack: when the init dies, the kernel kills all in the namespace.
    Both die with their parent (``PR_SET_PDEATHSIG``).

    Returns:
        ``"pid namespace"``, ``"subreaper"`` (only a normal exit ends them) or ``"none"``.
    """
    try:
        libc = _libc()
    except OSError:
        return "none"
    _die_with_parent(libc)
    if os.getppid() == 1:  # the host is already gone
        os._exit(1)
    if _unshare(libc):
        read, write = os.pipe()
        pid = os.fork()
        if pid:
            os.close(write)
            os.read(read, 1)  # the init has set its death signal (or died)
            os.close(read)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            _supervise(pid)
        os.close(read)
        _die_with_parent(libc)
        os.write(write, b"1")
        os.close(write)
        return "pid namespace"
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
        return "subreaper"
    return "none"


def _children_of(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as src:
                found += [int(word) for word in src.read().split()]
    return found


def descendants(pid: int) -> list[int]:
    """The process ids below ``pid`` (as ``/proc`` numbers them), where ``/proc`` shows them."""
    todo, seen = _children_of(pid), []
    while todo:
        child = todo.pop()
        seen.append(child)
        todo += _children_of(child)
    return seen


def kill_descendants() -> None:
    """SIGKILL every process below this one (for the subreaper case, at a normal exit)."""
    for _ in range(10):
        seen = descendants(os.getpid())
        if not seen:
            return
        for pid in seen:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
