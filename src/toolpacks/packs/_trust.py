"""Trusting a configuration found implicitly, the way direnv's ``allow`` works.

A ``toolpacks.toml`` found in the working directory could come from a cloned repository. It
may select among installed packs untrusted, but whatever grants capability or runs code
(pack settings, MCP servers, file tools, host settings) waits until the user trusts it.
Trust is recorded by path with a fingerprint of the configuration bytes that were parsed and
of every file of code it points to; a change to any of them withdraws the trust.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["fingerprint", "is_trusted", "trust", "trust_store_path", "untrust"]


def trust_store_path() -> Path:
    """Where trusted configurations are recorded (``$TOOLPACKS_TRUST_FILE`` overrides)."""
    override = os.environ.get("TOOLPACKS_TRUST_FILE")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "toolpacks" / "trusted.json"


def fingerprint(config_digest: str, files: Iterable[Path], base: Path) -> str:
    """One SHA-256 over the configuration's digest and each file's path and content.

    A file that cannot be read counts as missing, so its appearing later changes the
    fingerprint too.
    """
    total = hashlib.sha256(b"toolpacks-trust-v2\0" + config_digest.encode())
    for path in sorted(files):
        try:
            name = str(path.relative_to(base))
        except ValueError:
            name = str(path)
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            digest = "missing"
        total.update(f"\0{name}\0{digest}".encode("utf-8", "surrogateescape"))
    return total.hexdigest()


def _read() -> dict[str, str]:
    try:
        data = json.loads(trust_store_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _write(entries: dict[str, str]) -> None:
    store = trust_store_path()
    store.parent.mkdir(parents=True, exist_ok=True)
    tmp = store.with_suffix(".tmp")
    tmp.write_text(json.dumps(entries, indent=2, sort_keys=True), encoding="utf-8")
    os.replace(tmp, store)


def is_trusted(path: Path, print_: str) -> bool:
    """Whether ``path`` is trusted with this fingerprint (see ``fingerprint``)."""
    return _read().get(str(path.resolve())) == print_


def trust(path: Path, print_: str) -> None:
    """Trust ``path`` with this fingerprint."""
    entries = _read()
    entries[str(path.resolve())] = print_
    _write(entries)


def untrust(path: Path) -> bool:
    """Withdraw trust from ``path``; returns whether it was trusted."""
    entries = _read()
    removed = entries.pop(str(path.resolve()), None) is not None
    if removed:
        _write(entries)
    return removed
