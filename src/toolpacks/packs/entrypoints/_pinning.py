"""Definition pinning: ``toolpacks lock`` and the withholding of changed tools.

A lock file records, per pack and tool, the SHA-256 of the tool's canonical definition (name,
description, input and output schema, annotations). While a lock file exists, a tool whose
definition no longer matches (a pack upgrade, an MCP server that rewrote a description) or
that was not there when locking is withheld from toolsets until ``toolpacks lock`` runs
again; ``toolpacks doctor`` shows the old and the new definition. Writing and checking a
host's lock file is the host's part (``toolpacks.host._lockfile``).
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolpacks.exceptions import ConfigError

if TYPE_CHECKING:
    from toolpacks.core._tool import Tool

__all__ = [
    "LOCK_NAME",
    "Pins",
    "canonical_definition",
    "definition_hash",
    "load_pins",
    "lock_path",
]

LOCK_NAME = "toolpacks.lock"
logger = logging.getLogger("toolpacks")


def canonical_definition(tool: Tool) -> dict[str, Any]:
    """What a model is told about a tool, in a stable form."""
    hints = {
        k: getattr(tool.hints, k)
        for k in ("read_only", "destructive", "idempotent", "open_world")
        if getattr(tool.hints, k) is not None
    }
    return {
        "name": tool.scoped_name,
        "description": tool.description,
        "instructions": tool.instructions,
        "input_schema": tool.input_schema,
        "output_schema": tool.output_schema,
        "annotations": hints,
    }


def definition_hash(tool: Tool) -> str:
    """SHA-256 of the canonical JSON of ``canonical_definition(tool)``."""
    text = json.dumps(
        canonical_definition(tool), sort_keys=True, separators=(",", ":"), default=str
    )
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Pins:
    """The contents of a lock file."""

    path: Path
    """Where it was read from."""
    packs: dict[str, dict[str, Any]]
    """Pack name to ``{"version": ..., "tools": {tool: {"sha256": ..., "definition": ...}}}``."""

    def problem(self, pack: str, tool: Tool) -> str | None:
        """Why ``tool`` of ``pack`` is withheld, or None when its pin matches."""
        pinned = self.packs.get(pack, {}).get("tools", {}).get(tool.scoped_name)
        if pinned is None:
            return f"tool {pack}.{tool.scoped_name} appeared after {self.path.name} was written"
        if pinned.get("sha256") != definition_hash(tool):
            old = json.dumps(pinned.get("definition"), sort_keys=True, indent=1)
            new = json.dumps(canonical_definition(tool), sort_keys=True, indent=1, default=str)
            return (
                f"definition of {pack}.{tool.scoped_name} changed since it was locked; it is "
                f"withheld until `toolpacks lock` runs again.\n--- locked\n{old}\n+++ now\n{new}"
            )
        return None


def lock_path(base_dir: Path) -> Path:
    """The lock file of a configuration whose directory is ``base_dir``."""
    return base_dir / LOCK_NAME


def load_pins(path: Path) -> Pins | None:
    """Read a lock file; None when there is none.

    Raises:
        ConfigError: The file exists but is not a valid lock file.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{path}: not a valid lock file ({exc}); delete it and run `toolpacks lock`"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("packs"), dict):
        raise ConfigError(f"{path}: not a valid lock file (no 'packs' table)")
    return Pins(path, data["packs"])
