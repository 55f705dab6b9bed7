"""Trusting a configuration found implicitly, the way direnv's ``allow`` works.

A ``toolpacks.toml`` found in the working directory could come from a cloned repository. It
may select among installed packs untrusted, but whatever grants capability or runs code
(pack settings, MCP servers, file tools, host settings) waits until the user trusts it.
Trust is recorded by path with a fingerprint of the configuration bytes that were parsed and
of every file of code it points to; a change to any of them withdraws the trust.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from toolpacks.packs._statefiles import config_dir, private_dir, read_json, update_json

__all__ = ["fingerprint", "is_trusted", "trust", "trust_store_path", "untrust"]

MAX_FILE_BYTES = 16 * 1024 * 1024
"""How much of one covered file is hashed; past it, its size and time stand for the rest."""

_CHUNK = 1 << 16


def trust_store_path() -> Path:
    """Where trusted configurations are recorded (``$TOOLPACKS_TRUST_FILE`` overrides).

    By default ``trusted.json`` in the per-user configuration directory
    (``$XDG_CONFIG_HOME/toolpacks`` on Linux).
    """
    override = os.environ.get("TOOLPACKS_TRUST_FILE")
    if override:
        return Path(override)
    return config_dir() / "trusted.json"


def _store_dir(store: Path) -> None:
    """Ready the store's directory: the default one is made the user's only.

    Whoever can write the store can grant trust, so the default directory is created
    ``0700`` and refused when it is a link or someone else's. A directory named by
    ``$TOOLPACKS_TRUST_FILE`` is the user's choice: only its missing levels are created.
    """
    if os.environ.get("TOOLPACKS_TRUST_FILE") and os.path.isdir(store.parent):
        return
    private_dir(store.parent)


def fingerprint(config_digest: str, files: Iterable[Path], base: Path) -> str:
    """One SHA-256 over the configuration's digest and each file's path and content.

    A file that cannot be read counts as missing, so its appearing later changes the
    fingerprint too. Only regular files are read, and at most ``MAX_FILE_BYTES`` of each
    (see ``_file_digest``), so a covered path naming a pipe or a device, or a huge file,
    cannot block or exhaust the trust check.
    """
    total = hashlib.sha256(b"toolpacks-trust-v2\0" + config_digest.encode())
    for path in sorted(files):
        try:
            name = str(path.relative_to(base))
        except ValueError:
            name = str(path)
        total.update(f"\0{name}\0{_file_digest(path)}".encode("utf-8", "surrogateescape"))
    return total.hexdigest()


def _file_digest(path: Path) -> str:
    """The SHA-256 of a regular file's bytes; a marker for anything else.

    Not a regular file (pipe, device, directory, socket): ``special:<kind>``, never opened
    (the open is non-blocking and re-checked, should the file be swapped in between). Longer
    than ``MAX_FILE_BYTES``: the hash of that much plus the size and modification time, so a
    change past the bound still withdraws trust.
    """
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return "missing"
    if not stat.S_ISREG(info.st_mode):
        return f"special:{stat.S_IFMT(info.st_mode):o}"
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return "missing"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return f"special:{stat.S_IFMT(info.st_mode):o}"
        return _hash_bounded(fd, info)
    except OSError:
        return "missing"
    finally:
        os.close(fd)


def _hash_bounded(fd: int, info: os.stat_result) -> str:
    digest = hashlib.sha256()
    remaining = MAX_FILE_BYTES
    while remaining > 0:
        chunk = os.read(fd, min(remaining, _CHUNK))
        if not chunk:
            return digest.hexdigest()
        digest.update(chunk)
        remaining -= len(chunk)
    if info.st_size <= MAX_FILE_BYTES and not os.read(fd, 1):
        return digest.hexdigest()
    return f"large:{info.st_size}:{info.st_mtime_ns}:{digest.hexdigest()}"


def _read() -> dict[str, Any]:
    """The store's entries; an unreadable store trusts nothing (it is never overwritten).

    Whoever can write the default store's directory could grant trust, so a directory that
    is a link or someone else's is not believed (``private_dir``).
    """
    store = trust_store_path()
    try:
        if not os.environ.get("TOOLPACKS_TRUST_FILE") and os.path.lexists(store.parent):
            private_dir(store.parent)
        return read_json(store)
    except (OSError, UnicodeDecodeError):
        return {}


def is_trusted(path: Path, print_: str) -> bool:
    """Whether ``path`` is trusted with this fingerprint (see ``fingerprint``)."""
    return _read().get(str(path.resolve())) == print_


def trust(path: Path, print_: str) -> None:
    """Trust ``path`` with this fingerprint.

    The store is updated under its lock and replaced atomically, so concurrent ``toolpacks
    trust`` commands each keep their entry.

    Raises:
        StateFileError: The store cannot be read as JSON, or its directory is unsafe.
    """
    store = trust_store_path()
    _store_dir(store)
    key = str(path.resolve())
    update_json(store, lambda entries: {**entries, key: print_})


def untrust(path: Path) -> bool:
    """Withdraw trust from ``path``; returns whether it was trusted."""
    store = trust_store_path()
    if not store.exists():
        return False
    key = str(path.resolve())
    removed: list[bool] = []
    update_json(store, lambda entries: removed.append(entries.pop(key, None) is not None))
    return bool(removed and removed[0])
