"""Listing packs without importing them, or pydantic.

``toolpacks list`` reads entry-point metadata and the configuration (parsed with
``tomllib`` only: ``[packs] disabled``, aliases, MCP servers, file tools); no pack module is
imported. ``Host.packs`` gives the same rows once pydantic is loaded anyway.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["list_packs"]


def _read_config(config: str | None) -> dict[str, Any]:
    path: Path | None = Path(config) if config else None
    if path is None:
        if Path("toolpacks.toml").is_file():
            path = Path("toolpacks.toml")
        elif Path("pyproject.toml").is_file():
            path = Path("pyproject.toml")
    if path is None:
        return {}
    try:
        data: Any = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        if config is None:
            return {}  # `toolpacks doctor` reports configuration errors
        from toolpacks.exceptions import ConfigError

        reason = exc.strerror if isinstance(exc, OSError) else f"invalid TOML: {exc}"
        raise ConfigError(f"{path}: cannot read configuration: {reason}") from None
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        data = tool.get("toolpacks", {}) if isinstance(tool, dict) else {}
    return data if isinstance(data, dict) else {}


def _table(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key, {})
    return value if isinstance(value, dict) else {}


def _row(name: str, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "name": name,
        "distribution": None,
        "version": None,
        "module": None,
        "status": "available",
        "error": None,
        "source": "entry_point",
        "alias_of": None,
    }
    row.update(fields)
    return row


def list_packs(
    config: str | None = None,
    *,
    path: list[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Packs as dicts, sorted by name; imports no pack (nor pydantic).

    Each dict has ``name``, ``distribution``, ``version``, ``module``, ``status``, ``error``,
    ``source`` and ``alias_of``.

    Raises:
        ConfigError: ``config`` was given and cannot be read or parsed.

    Args:
        config: The configuration file (default: ``toolpacks.toml`` or ``pyproject.toml``
            in the working directory, ignored when unreadable).
        path: Directories to search instead of ``sys.path``.
        environ: The environment (``TOOLPACKS_DISABLE``, ``TOOLPACKS_PACKS``).
    """
    from toolpacks.packs.entrypoints._discovery import discover, select

    data = _read_config(config)
    packs = _table(data, "packs")
    disabled = packs.get("disabled", [])
    disabled_names = (
        frozenset(n for n in disabled if isinstance(n, str))
        if isinstance(disabled, list)
        else frozenset()
    )
    found = discover(path)
    rows: dict[str, dict[str, Any]] = {}
    for entry in found.entries:
        rows[entry.name] = _row(
            entry.name,
            distribution=entry.dist_name,
            version=entry.dist_version,
            module=entry.value,
        )
    for name, clashing in found.clashes.items():
        dists = ", ".join(f"{e.dist_name} {e.dist_version}" for e in clashing)
        rows[name] = _row(
            name,
            distribution=clashing[0].dist_name,
            version=clashing[0].dist_version,
            module=clashing[0].value,
            status="clash",
            error=(
                f"pack name {name!r} is declared by several distributions ({dists}); "
                "neither is loaded until all but one are uninstalled"
            ),
        )
    env = os.environ if environ is None else environ

    def apply_controls(names: list[str]) -> None:
        for name, reason in select(names, disabled_names, env).items():
            if reason is not None and rows[name]["status"] == "available":
                rows[name]["status"] = "disabled"
                rows[name]["error"] = reason

    apply_controls(sorted(rows))
    installed = set(rows)
    for name, server in _table(data, "mcp_servers").items():
        command = server.get("command") if isinstance(server, dict) else None
        rows.setdefault(name, _row(name, module=command, source="mcp"))
    files = _table(data, "files")
    if files.get("dirs"):
        local = files.get("pack", "local")
        if isinstance(local, str):
            rows.setdefault(local, _row(local, source="files"))
    for name, table in packs.items():
        if not isinstance(table, dict) or not isinstance(table.get("pack"), str):
            continue
        if name in rows:
            continue  # `toolpacks doctor` reports the name taken twice
        base = table["pack"]
        if base in installed:
            rows[name] = dict(rows[base], name=name, source="alias", alias_of=base)
        else:
            error = f"packs.{name}.pack = {base!r}, but {base!r} is not an installed pack"
            rows[name] = _row(name, status="failed", error=error, source="alias", alias_of=base)
    apply_controls(sorted(set(rows) - installed))
    return [rows[name] for name in sorted(rows)]
