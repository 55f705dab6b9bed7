"""Landlock through ``ctypes``: the kernel's unprivileged filesystem and TCP rules.

Linux 5.13+ (ABI 1) limits file access by path; ABI 4 adds TCP ``bind``/``connect``; ABI 6
scopes signals and abstract unix sockets to the sandbox. A process restricts itself (and
every process it starts afterwards, across ``exec``); nothing lifts a restriction. The
third-party bindings were weighed and not taken: ``landlock`` is a pre-release without
network rules, the others are unmaintained or need a compiler; the three system calls are
a few lines of ``ctypes``.
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys
from collections.abc import Iterable

__all__ = ["LandlockError", "abi", "restrict"]

_CREATE, _ADD, _RESTRICT = 444, 445, 446  # the same numbers on every Linux architecture
_VERSION = 1  # LANDLOCK_CREATE_RULESET_VERSION
_PATH_BENEATH, _NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38
_O_PATH = getattr(os, "O_PATH", 0o10000000)

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_MAKE_AND_REMOVE = sum(1 << bit for bit in range(4, 13))  # remove dir/file, make char..sym
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ = EXECUTE | READ_FILE | READ_DIR
"""What a read grant allows: read and run files, list directories."""
WRITE = READ | WRITE_FILE | _MAKE_AND_REMOVE | REFER | TRUNCATE | IOCTL_DEV
"""What a write grant allows: everything beneath it."""
DEVICE = READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV
"""What a device such as ``/dev/null`` is granted."""
_TCP = 1 | 2  # LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1, 2


class LandlockError(OSError):
    """A Landlock system call failed (the message names which)."""


class _Ruleset(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi() -> int:
    """The Landlock ABI version the kernel offers, 0 where there is none (or not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _libc().syscall(_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(0, int(version))


def _fs_mask(version: int) -> int:
    mask = READ | WRITE_FILE | _MAKE_AND_REMOVE
    if version >= 2:
        mask |= REFER
    if version >= 3:
        mask |= TRUNCATE
    if version >= 5:
        mask |= IOCTL_DEV
    return mask


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise LandlockError(err, f"landlock {what}: {os.strerror(err)}")
    return result


def restrict(grants: Iterable[tuple[str, int]], *, network: bool = True) -> int:
    """Restrict this process to ``grants`` (path, rights); TCP too when ``network`` is false.

    A path that does not exist is skipped; a file is granted only file rights. Signals to
    processes outside the sandbox are always refused where the kernel can (ABI 6).

    Returns:
        The ABI version used.

    Raises:
        LandlockError: The kernel has no Landlock, or ``network = False`` needs ABI 4 and the
            kernel offers less, or a system call failed.
    """
    version = abi()
    if version < 1:
        raise LandlockError(0, "landlock is not available on this system")
    if not network and version < 4:
        raise LandlockError(0, f"landlock ABI {version} has no network rules (4 needed)")
    libc = _libc()
    mask = _fs_mask(version)
    attr = _Ruleset(mask, 0 if network else _TCP, 0)
    size = ctypes.sizeof(_Ruleset) if version >= 6 else 16 if version >= 4 else 8
    if version >= 6:
        attr.scoped = _SCOPE_SIGNAL | (0 if network else _SCOPE_ABSTRACT_UNIX)
    ruleset = _check(
        libc.syscall(_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)),
        "create_ruleset",
    )
    try:
        for path, rights in grants:
            try:
                fd = os.open(path, _O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                allowed = rights & mask
                if not stat.S_ISDIR(os.fstat(fd).st_mode):
                    allowed &= _FILE_RIGHTS
                rule = _PathBeneath(allowed, fd)
                _check(
                    libc.syscall(_ADD, ruleset, _PATH_BENEATH, ctypes.byref(rule), 0),
                    f"add_rule {path}",
                )
            finally:
                os.close(fd)
        _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(libc.syscall(_RESTRICT, ruleset, 0), "restrict_self")
    finally:
        os.close(ruleset)
    return version
