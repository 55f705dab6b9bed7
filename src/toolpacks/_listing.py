"""Listing installed packs without importing them, or pydantic.

``toolpacks list`` reads entry-point metadata and the ``[packs] disabled`` list of the
configuration (parsed with ``tomllib`` only); no pack module is imported.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

__all__ = ["list_packs"]


def _disabled(config: str | None) -> frozenset[str]:
    path: Path | None = Path(config) if config else None
    pyproject = False
    if path is None:
        if Path("toolpacks.toml").is_file():
            path = Path("toolpacks.toml")
        elif Path("pyproject.toml").is_file():
            path, pyproject = Path("pyproject.toml"), True
    if path is None:
        return frozenset()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return frozenset()  # `toolpacks doctor` reports configuration errors
    if pyproject or path.name == "pyproject.toml":
        data = data.get("tool", {}).get("toolpacks", {})
    packs = data.get("packs", {}) if isinstance(data, dict) else {}
    disabled = packs.get("disabled", []) if isinstance(packs, dict) else []
    return frozenset(n for n in disabled if isinstance(n, str))


def list_packs(config: str | None = None) -> list[dict[str, Any]]:
    """Installed packs as dicts (``name``, ``distribution``, ``version``, ``module``,
    ``status``, ``error``, ``source``), sorted by name; imports nothing."""
    from toolpacks._discovery import discover, select

    found = discover()
    rows: dict[str, dict[str, Any]] = {}
    for entry in found.entries:
        rows[entry.name] = {
            "name": entry.name,
            "distribution": entry.dist_name,
            "version": entry.dist_version,
            "module": entry.value,
            "status": "available",
            "error": None,
            "source": "entry_point",
        }
    for name, clashing in found.clashes.items():
        dists = ", ".join(f"{e.dist_name} {e.dist_version}" for e in clashing)
        rows[name] = {
            "name": name,
            "distribution": clashing[0].dist_name,
            "version": clashing[0].dist_version,
            "module": clashing[0].value,
            "status": "clash",
            "error": f"declared by several distributions: {dists}",
            "source": "entry_point",
        }
    verdicts = select(list(rows), _disabled(config), os.environ)
    for name, reason in verdicts.items():
        if reason is not None and rows[name]["status"] == "available":
            rows[name]["status"] = "disabled"
            rows[name]["error"] = reason
    return [rows[name] for name in sorted(rows)]
