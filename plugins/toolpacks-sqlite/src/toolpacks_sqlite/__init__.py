"""toolpacks-sqlite: read-only tools for one SQLite database.

The pack registers one ``SQLiteTools`` instance configured from its ``[packs.NAME]`` table::

    [packs.sqlite]
    database = "data/shop.db"     # required; relative to the configuration file
    max_rows = 1000               # most rows one query returns
    timeout_seconds = 10          # how long one statement may run
    max_value_bytes = 1000000     # largest string or BLOB a statement may build or read
    max_result_bytes = 2000000    # most bytes of values one query returns

    [packs.warehouse]             # a second instance on another database
    pack = "sqlite"
    database = { env = "WAREHOUSE_DB" }
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolpacks import hookimpl
from toolpacks.hookspecs import Register

from toolpacks_sqlite.tools import (
    DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_MAX_ROWS,
    DEFAULT_MAX_VALUE_BYTES,
    DEFAULT_TIMEOUT_SECONDS,
    SQLiteTools,
)

__all__ = ["SETTINGS", "SQLiteTools", "register_tools", "tools_from_config"]

SETTINGS = frozenset(
    {"database", "max_rows", "timeout_seconds", "max_value_bytes", "max_result_bytes"}
)
"""The keys this pack reads from its ``[packs.NAME]`` table."""
_HOST_KEYS = frozenset({"pack"})
"""Keys the host itself uses in a pack's table (``pack`` names the pack an alias copies)."""


def tools_from_config(
    config: Mapping[str, Any],
    pack: str = "sqlite",
    config_dir: str | os.PathLike[str] | None = None,
) -> SQLiteTools:
    """Build the ``SQLiteTools`` instance a ``[packs.NAME]`` table describes.

    Args:
        config: The table: ``database`` (required; relative to ``config_dir``),
            ``max_rows`` (default 1000), ``timeout_seconds`` (default 10),
            ``max_value_bytes`` (default 1,000,000) and ``max_result_bytes`` (default
            2,000,000).
        pack: The pack's name in the host, for error messages.
        config_dir: The configuration file's directory; ``None`` (a mapping) accepts only
            an absolute ``database`` (or one starting with ``~``).

    Raises:
        ValueError: ``database`` is missing, a key is unknown or a value is invalid; the
            message says which and how to fix it.
    """
    unknown = sorted(set(config) - SETTINGS - _HOST_KEYS)
    if unknown:
        raise ValueError(
            f"unknown setting(s) {', '.join(unknown)} in [packs.{pack}]; "
            f"the sqlite pack reads: {', '.join(sorted(SETTINGS))}"
        )
    database = config.get("database")
    if not isinstance(database, str) or not database:
        raise ValueError(
            f'the sqlite pack needs a database file: add database = "path/to/file.db" '
            f"to [packs.{pack}] in toolpacks.toml"
        )
    path = Path(database).expanduser()
    if not path.is_absolute():
        if config_dir is None:
            raise ValueError(
                f"[packs.{pack}] database = {database!r} is a relative path, and no "
                "configuration file says what it is relative to; give an absolute path"
            )
        path = Path(config_dir) / path
    return SQLiteTools(
        path,
        max_rows=config.get("max_rows", DEFAULT_MAX_ROWS),
        timeout_seconds=config.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS),
        max_value_bytes=config.get("max_value_bytes", DEFAULT_MAX_VALUE_BYTES),
        max_result_bytes=config.get("max_result_bytes", DEFAULT_MAX_RESULT_BYTES),
    )


@hookimpl
def register_tools(register: Register) -> None:
    """Register the read-only tools of the configured SQLite database."""
    config = getattr(register, "config", None) or {}
    register(
        tools_from_config(
            config, getattr(register, "pack", "sqlite"), getattr(register, "config_dir", None)
        )
    )
