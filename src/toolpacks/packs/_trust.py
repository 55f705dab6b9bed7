"""Trusting a configuration found implicitly, the way direnv's ``allow`` works.

A ``toolpacks.toml`` found in the working directory could come from a cloned repository; it
may not start MCP servers or load local tool directories until the user trusts that file,
by path and SHA-256 of its content. Changing the file withdraws the trust.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

__all__ = ["is_trusted", "trust", "trust_store_path", "untrust"]


def trust_store_path() -> Path:
    """Where trusted configurations are recorded (``$TOOLPACKS_TRUST_FILE`` overrides)."""
    override = os.environ.get("TOOLPACKS_TRUST_FILE")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "toolpacks" / "trusted.json"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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


def is_trusted(path: Path) -> bool:
    """Whether ``path`` is trusted with its current content."""
    resolved = path.resolve()
    try:
        return _read().get(str(resolved)) == _digest(resolved)
    except OSError:
        return False


def trust(path: Path) -> str:
    """Trust ``path`` as it is now; returns the recorded SHA-256."""
    resolved = path.resolve()
    digest = _digest(resolved)
    entries = _read()
    entries[str(resolved)] = digest
    _write(entries)
    return digest


def untrust(path: Path) -> bool:
    """Withdraw trust from ``path``; returns whether it was trusted."""
    entries = _read()
    removed = entries.pop(str(path.resolve()), None) is not None
    if removed:
        _write(entries)
    return removed
