"""A host's lock file: ``toolpacks lock`` writes it, ``toolpacks doctor`` checks it.

The lock file's format and what a pin is are the packs layer's
(``toolpacks.packs.entrypoints._pinning``); this is the part that walks a host's packs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolpacks.core._secrets import scrub, secret_values
from toolpacks.packs._statefiles import atomic_write
from toolpacks.packs.entrypoints._pinning import (
    canonical_definition,
    definition_hash,
    load_pins,
    lock_path,
)

if TYPE_CHECKING:
    from toolpacks.host._host import Host

__all__ = ["check_pins", "write_lock"]


def write_lock(host: Host, output: str | os.PathLike[str] | None = None) -> Path:
    """Pin every tool of every loadable pack; returns the lock file's path.

    Pins are what later toolsets are checked against, so they are built only from a
    configuration that may run code (see ``Host.check_trusted``). The file is replaced whole
    (``atomic_write``), so concurrent ``toolpacks lock`` runs never crash or leave half a
    file. Each writes everything it pinned, reading nothing back, so no lock file (which
    would sit in the project beside it) is needed: the last one to finish wins whole.

    Raises:
        UntrustedConfigError: The configuration was found implicitly, is not trusted, and
            sets keys that need trust (such as ``[packs.NAME]`` settings).
    """
    host.check_trusted()
    path = Path(output) if output else lock_path(host.config.base_dir)
    # A definition may quote a secret setting (a description naming a token): the file keeps
    # its hash (what pins are checked by) but shows the definition with secrets masked.
    secrets = secret_values(host.config.raw, host._environ)
    packs: dict[str, Any] = {}
    for info in host.packs:
        if info.status not in ("available", "loaded"):
            continue
        loaded = host.load(info.name)
        if loaded.info.status != "loaded":
            continue
        packs[info.name] = {
            "version": loaded.info.version,
            "tools": {
                t.scoped_name: {
                    "sha256": definition_hash(t),
                    "definition": _masked(canonical_definition(t), secrets),
                }
                for t in loaded.tools.values()
            },
        }
    text = json.dumps({"version": 1, "packs": packs}, indent=2, sort_keys=True, default=str)
    atomic_write(path, text + "\n", mode=0o600)  # the user's own, like every state file
    return path


def _masked(value: Any, secrets: list[str]) -> Any:
    """``value`` with every secret in its strings masked (``scrub``: encoded forms too)."""
    if not secrets:
        return value
    if isinstance(value, str):
        return scrub(value, secrets)
    if isinstance(value, dict):
        return {scrub(str(k), secrets): _masked(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(v, secrets) for v in value]
    return value


def check_pins(host: Host) -> list[tuple[str, str]]:
    """``(qualified name, problem)`` for every loaded tool its lock file withholds."""
    pins = load_pins(lock_path(host.config.base_dir))
    if pins is None:
        return []
    out: list[tuple[str, str]] = []
    for info in host.packs:
        if info.status != "loaded":
            continue
        for qualified, tool in host.load(info.name).tools.items():
            problem = pins.problem(info.name, tool)
            if problem is not None:
                out.append((qualified, problem))
    return out
