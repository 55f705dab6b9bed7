"""toolpacks-files: read-only file tools confined to one root directory.

The pack registers one ``FileTools`` instance configured from ``[packs.files]``::

    [packs.files]
    root = "./docs"        # default: the working directory
    max_bytes = 65536      # most bytes read_file returns per call
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolpacks import hookimpl
from toolpacks.hookspecs import Register

from toolpacks_files.results import DirEntry, DirListing, FileMatches, TextMatch, TextSearch
from toolpacks_files.tools import DEFAULT_MAX_BYTES, FileTools

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

SETTINGS = frozenset({"root", "max_bytes"})
"""The keys this pack reads from its ``[packs.NAME]`` table."""
_HOST_KEYS = frozenset({"pack"})
"""Keys the host itself uses in a pack's table (``pack`` names the pack an alias copies)."""


def tools_from_config(config: Mapping[str, Any]) -> FileTools:
    """Build the ``FileTools`` instance a ``[packs.files]`` table describes.

    Args:
        config: The table: ``root`` (default ``"."``, relative to the working directory)
            and ``max_bytes`` (default 65536).

    Raises:
        ValueError: A key is unknown or a value is invalid; the message says which.
    """
    unknown = sorted(set(config) - SETTINGS - _HOST_KEYS)
    if unknown:
        raise ValueError(
            f"unknown setting(s) {', '.join(unknown)} for the files pack; "
            f"it reads: {', '.join(sorted(SETTINGS))}"
        )
    root = config.get("root", ".")
    if not isinstance(root, str):
        raise ValueError(f"files pack: root must be a path (a string), got {root!r}")
    max_bytes = config.get("max_bytes", DEFAULT_MAX_BYTES)
    return FileTools(root, max_bytes=max_bytes)


@hookimpl
def register_tools(register: Register) -> None:
    """Register the file tools, confined to the configured root directory."""
    register(tools_from_config(getattr(register, "config", None) or {}))
