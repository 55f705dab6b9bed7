"""An isolated pack's manifest: its tools as the child serves them, so listing starts nothing.

``toolpacks serve --pack NAME --manifest FILE`` writes it as it starts serving: for each tool
the MCP definition it lists (``tools/list``) and what MCP does not carry but the tool has
in-process (its tags, timeout, approval and its declared output schema, which MCP wraps when
it is not an object). The host reads it to build the pack's tools without starting the child;
the first call starts it, and a definition the child lists differently from the manifest is
refused at that call (and the child has rewritten the manifest, so the next toolset shows it).

A manifest is used only when the toolpacks version and the Python version that wrote it are
the host's and it names the pack asked for; anything else is ignored (the child is started to
list the tools). It lives in the user's cache directory (``_statefiles``), ``0600``, written
whole.

A secret never reaches it in clear: a definition quoting a secret setting (a description built
from ``api_token``) is written with every form of the secret masked (``scrub``) and the
manifest marked ``masked``. A masked manifest is never what tools are built from: the host
starts the child and lists its tools live, as it shows them in-process. Secret values are
left out of the manifest's key too (``manifest_key``), digest or not.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from toolpacks._version import __version__
from toolpacks.core._secrets import MASK, scrub
from toolpacks.packs._statefiles import StateFileError, atomic_write, private_dir, read_json

__all__ = [
    "FORMAT",
    "Manifest",
    "ToolRecord",
    "manifest_key",
    "masked",
    "read_manifest",
    "write_manifest",
]

FORMAT = 1
"""The manifest format written here."""


def _python() -> str:
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


@dataclass(frozen=True, slots=True)
class ToolRecord:
    """One tool of an isolated pack, as the host builds it."""

    mcp: Mapping[str, Any]
    """Its MCP definition, exactly as the child lists it."""
    tags: tuple[str, ...] = ()
    """Its tags."""
    timeout: float | None = None
    """Its own timeout in seconds (None: none)."""
    require_approval: bool = False
    """Whether it requires approval in-process."""
    output_schema: Mapping[str, Any] | None = None
    """Its declared output schema (not wrapped)."""
    credentials: tuple[str, ...] = ()
    """The per-user credentials it declares (the host resolves them and relays the values)."""
    scopes: tuple[str, ...] = ()
    """The scopes a call's principal needs (checked in the host before the child is asked)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "mcp": dict(self.mcp),
            "tags": list(self.tags),
            "timeout": self.timeout,
            "require_approval": self.require_approval,
            "output_schema": self.output_schema,
            "credentials": list(self.credentials),
            "scopes": list(self.scopes),
        }


@dataclass(frozen=True, slots=True)
class Manifest:
    """What the child of one isolated pack serves."""

    pack: str
    """The pack name."""
    tools: tuple[ToolRecord, ...]
    """Its tools, in the child's order."""
    distribution: str | None = None
    """The distribution that provides the pack, in the child's environment."""
    version: str | None = None
    """Its version."""
    masked: bool = False
    """Whether a secret was masked in it (its definitions are not the child's, to the letter)."""


def masked(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` with every form of each of ``secrets`` in its strings (keys too) masked."""
    if not secrets:
        return value
    if isinstance(value, str):
        return scrub(value, secrets, MASK)
    if isinstance(value, Mapping):
        return {masked(str(k), secrets): masked(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [masked(v, secrets) for v in value]
    return value


def manifest_key(
    pack: str,
    interpreter: str,
    settings: Mapping[str, Any],
    *parts: str,
    secrets: Sequence[str] = (),
) -> str:
    """The file name of a pack's manifest: what decides its tools, digested.

    The pack name, the interpreter (its environment), the settings and ``parts`` (such as the
    distribution's version) go in; toolpacks' and Python's versions are checked inside.
    ``secrets`` are masked in the settings first: a file name is no digest to guess them by.
    """
    shown = masked(json.loads(json.dumps(dict(settings), default=str)), secrets)
    text = json.dumps([pack, interpreter, shown, list(parts)], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32] + ".json"


def write_manifest(path: Path, manifest: Manifest, secrets: Sequence[str] = ()) -> None:
    """Write ``manifest`` to ``path`` whole (its directory made private if needed).

    Every form of each of ``secrets`` is masked in what is written; a manifest where one was
    found is marked ``masked``, and the host lists such a pack's tools from its child.
    """
    private_dir(path.parent)
    tools = [record.to_dict() for record in manifest.tools]
    shown = masked(tools, secrets)
    data = {
        "format": FORMAT,
        "toolpacks": __version__,
        "python": _python(),
        "pack": manifest.pack,
        "distribution": manifest.distribution,
        "version": manifest.version,
        "masked": manifest.masked or _text(shown) != _text(tools),
        "tools": shown,
    }
    atomic_write(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def read_manifest(path: Path, pack: str) -> Manifest | None:
    """The manifest in ``path`` if it is one this host can use for ``pack``, else None."""
    try:
        data = read_json(path)
    except (StateFileError, OSError):
        return None
    if (
        data.get("format") != FORMAT
        or data.get("toolpacks") != __version__
        or data.get("python") != _python()
        or data.get("pack") != pack
        or not isinstance(data.get("tools"), list)
    ):
        return None
    try:
        tools = tuple(_record(entry) for entry in data["tools"])
    except (TypeError, KeyError, ValueError):
        return None
    found = Manifest(pack, tools, data.get("distribution"), data.get("version"))
    return replace(found, masked=data.get("masked") is not False)


def _record(entry: Mapping[str, Any]) -> ToolRecord:
    mcp = entry["mcp"]
    if not isinstance(mcp, Mapping) or not isinstance(mcp.get("name"), str):
        raise ValueError("a tool without an MCP definition")
    timeout = entry.get("timeout")
    tags: Sequence[str] = entry.get("tags") or ()
    return ToolRecord(
        mcp=mcp,
        tags=tuple(str(t) for t in tags),
        timeout=float(timeout) if timeout is not None else None,
        require_approval=bool(entry.get("require_approval")),
        output_schema=entry.get("output_schema"),
        credentials=tuple(str(c) for c in entry.get("credentials") or ()),
        scopes=tuple(str(s) for s in entry.get("scopes") or ()),
    )
