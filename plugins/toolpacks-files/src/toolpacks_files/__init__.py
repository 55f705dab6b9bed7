"""toolpacks-files: read-only file tools confined to one root directory.

The pack registers one ``FileTools`` instance configured from ``[packs.files]``::

    [packs.files]
    root = "docs"          # required; relative to the configuration file's directory
    max_bytes = 65536      # most bytes read_file returns per call
    max_entries = 20000    # most directory entries one find_files/search_text looks at
    max_seconds = 10       # most seconds one find_files/search_text walks for

There is no default root: without ``root`` the pack fails to load, so the tools never read
whatever directory a process happens to start in.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolpacks import hookimpl
from toolpacks.hookspecs import Register

from toolpacks_files.results import DirEntry, DirListing, FileMatches, TextMatch, TextSearch
from toolpacks_files.tools import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_ENTRIES,
    DEFAULT_MAX_SECONDS,
    FileTools,
)

__all__ = [
    "SETTINGS",
    "DirEntry",
    "DirListing",
    "FileMatches",
    "FileTools",
    "TextMatch",
    "TextSearch",
    "register_tools",
    "tools_from_config",
]

SETTINGS = frozenset({"root", "max_bytes", "max_entries", "max_seconds"})
"""The keys this pack reads from its ``[packs.NAME]`` table."""
_HOST_KEYS = frozenset({"pack"})
"""Keys the host itself uses in a pack's table (``pack`` names the pack an alias copies)."""


def tools_from_config(
    config: Mapping[str, Any],
    pack: str = "files",
    config_dir: str | os.PathLike[str] | None = None,
) -> FileTools:
    """Build the ``FileTools`` instance a ``[packs.NAME]`` table describes.

    Args:
        config: The table: ``root`` (required), ``max_bytes`` (default 65536),
            ``max_entries`` (default 20000) and ``max_seconds`` (default 10).
        pack: The pack's name in the host (an alias has its own), for error messages.
        config_dir: The directory of the configuration file the table comes from; a
            relative ``root`` is resolved against it. ``None`` (a configuration given as a
            mapping) accepts only an absolute root, or one starting with ``~``.

    Raises:
        ValueError: ``root`` is missing, relative with no ``config_dir``, or not a
            directory; a key is unknown or a value is invalid. The message says which and
            how to fix it.
    """
    table = f"[packs.{pack}]"
    unknown = sorted(set(config) - SETTINGS - _HOST_KEYS)
    if unknown:
        raise ValueError(
            f"unknown setting(s) {', '.join(unknown)} in {table}; "
            f"the files pack reads: {', '.join(sorted(SETTINGS))}"
        )
    root = config.get("root")
    if root is None:
        raise ValueError(
            f'the files pack needs a root: set {table} root = "/path/to/dir" in toolpacks.toml'
        )
    if not isinstance(root, str) or not root.strip():
        raise ValueError(
            f"{table} root must be the path of a directory (a non-empty string), got {root!r}"
        )
    path = Path(root).expanduser()
    if not path.is_absolute():
        if config_dir is None:
            raise ValueError(
                f"{table} root = {root!r} is a relative path, and no configuration file says "
                "what it is relative to; give an absolute path (or one starting with ~)"
            )
        path = Path(config_dir) / path
    try:
        return FileTools(
            path,
            max_bytes=config.get("max_bytes", DEFAULT_MAX_BYTES),
            max_entries=config.get("max_entries", DEFAULT_MAX_ENTRIES),
            max_seconds=config.get("max_seconds", DEFAULT_MAX_SECONDS),
        )
    except ValueError as exc:
        raise ValueError(f"{table}: {exc}") from None


@hookimpl
def register_tools(register: Register) -> None:
    """Register the file tools, confined to the configured root directory.

    Reads ``register.config`` (the pack's table), ``register.pack`` (its name) and
    ``register.config_dir`` (the configuration file's directory), where the host gives them.
    """
    register(
        tools_from_config(
            getattr(register, "config", None) or {},
            getattr(register, "pack", None) or "files",
            getattr(register, "config_dir", None),
        )
    )
