"""What trusting a configuration covers: its parsed bytes and the code it points to.

The code is every file under its ``[files]`` directories and each MCP server script inside
the configuration's directory (a ``command`` or argument naming a file there). Trust records
one fingerprint of all of it (``packs._trust.fingerprint``).
"""

from __future__ import annotations

import os
from pathlib import Path

from toolpacks.host._config import LoadedConfig, untrusted_keys
from toolpacks.packs._trust import fingerprint, is_trusted

__all__ = ["config_fingerprint", "covered_files", "needs_trust", "trusted"]

_SKIPPED_DIRS = frozenset({"__pycache__", ".git"})


def covered_files(loaded: LoadedConfig) -> list[Path]:
    """The files of code ``loaded`` points to, sorted, each once."""
    base = loaded.base_dir.resolve()
    found: set[Path] = set()
    for entry in loaded.config.files.dirs:
        root = (base / entry).resolve()
        if root.is_dir():
            found.update(_files_under(root))
        elif root.is_file():
            found.add(root)
    for server in loaded.config.mcp_servers.values():
        where = (base / server.cwd).resolve() if server.cwd else base
        for word in (server.command, *server.args):
            if not word or word.startswith("-"):
                continue
            candidate = (where / word).resolve()
            if candidate.is_file() and candidate.is_relative_to(base):
                found.add(candidate)
    return sorted(found)


def _files_under(root: Path) -> list[Path]:
    out: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        out.extend(Path(folder) / name for name in files if not name.endswith(".pyc"))
    return out


def config_fingerprint(loaded: LoadedConfig) -> str:
    """The fingerprint trust records for ``loaded`` (bytes parsed and code covered)."""
    return fingerprint(loaded.digest or "", covered_files(loaded), loaded.base_dir.resolve())


def needs_trust(loaded: LoadedConfig) -> list[str]:
    """The keys that need trust: those of an implicit, untrusted file that grant capability."""
    if not loaded.implicit or loaded.path is None:
        return []
    keys = untrusted_keys(loaded.raw)
    if not keys or trusted(loaded):
        return []
    return keys


def trusted(loaded: LoadedConfig) -> bool:
    """Whether ``loaded`` may grant capability and run code (explicit, or trusted as is)."""
    if not loaded.implicit or loaded.path is None:
        return True
    return is_trusted(loaded.path, config_fingerprint(loaded))
