"""The names a server's tools are exposed under, and which of them ``require_approval`` names.

A server may name its tools with characters toolpacks does not allow (``files.read``) or
rename them between two listings. The exposed name is a valid toolpacks name; the approval
plan matches the names a person wrote against both the exposed and the server's names, and
fails closed when one of them no longer matches any tool.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from toolpacks.core.define._names import safe_name

if TYPE_CHECKING:
    import mcp_types

__all__ = ["ApprovalGate", "Gatekeeper", "approval_plan", "exposed_names", "tool_name"]


def tool_name(remote_name: str) -> str:
    """A valid toolpacks tool name for a remote tool (MCP allows ``.``, ``/``, 128 chars)."""
    name = safe_name(remote_name)
    return "_" + name[1:] if name.startswith("-") else name


class Gatekeeper(Protocol):
    """Tells whether a server's tool requires approval now (the mount's current plan)."""

    def requires_approval(self, remote_name: str) -> bool:
        """Whether the tool the server calls ``remote_name`` requires approval."""


@dataclass(frozen=True, slots=True)
class ApprovalGate:
    """Which tools of a server require approval: all of them, or those the server names so."""

    every: bool = False
    """Every tool (``require_approval = true``, or a listed name matched no tool)."""
    names: frozenset[str] = frozenset()
    """The server's names of the tools that do (when not ``every``)."""


def exposed_names(remote_tools: list[mcp_types.Tool]) -> list[tuple[str, str]]:
    """``(server's name, exposed name)`` of each remote tool, in the server's order.

    The exposed name is a valid toolpacks name; one whose sanitized form collides with an
    earlier tool's gets a digest of the server's name appended.
    """
    taken: set[str] = set()
    out: list[tuple[str, str]] = []
    for remote in remote_tools:
        name = tool_name(remote.name)
        if name in taken:
            digest = hashlib.sha256(remote.name.encode()).hexdigest()[:8]
            name = f"{name[:55]}_{digest}"
        taken.add(name)
        out.append((remote.name, name))
    return out


def approval_plan(
    wanted: bool | Sequence[str], named: list[tuple[str, str]], pack: str
) -> tuple[ApprovalGate, list[str]]:
    """Which tools ``require_approval`` selects, given the server's tools; and problems.

    A listed name selects the tools it names as exposed (``files_read``), qualified
    (``pack.files_read``) or as the server names them (``files.read``); one naming two tools
    that way selects both. A listed name that selects nothing (a typo, or a tool the server
    renamed or removed) makes every tool of the server require approval: the list is what
    a person reviewed, and a tool that left it under a new name must not run unasked.
    """
    if isinstance(wanted, bool):
        return ApprovalGate(every=wanted), []
    where = f"mcp_servers.{pack}.require_approval"
    selected: set[str] = set()
    problems: list[str] = []
    missing: list[str] = []
    for listed in dict.fromkeys(wanted):
        found = [raw for raw, exposed in named if listed in (raw, exposed, f"{pack}.{exposed}")]
        if not found:
            missing.append(listed)
        elif len(found) > 1:
            problems.append(
                f"{where} names {listed!r}, which matches several tools of the server "
                f"({', '.join(sorted(found))}); each of them requires approval"
            )
        selected.update(found)
    if not missing:
        return ApprovalGate(names=frozenset(selected)), problems
    offered = ", ".join(
        exposed if raw == exposed else f"{exposed} (the server's {raw!r})" for raw, exposed in named
    )
    for listed in missing:
        problems.append(
            f"{where} names {listed!r}, which the server does not offer (it offers: "
            f"{offered or 'none'}); so that a renamed or removed tool cannot shed its "
            "approval, every tool of the server requires approval until the list names only "
            "tools it offers"
        )
    return ApprovalGate(every=True), problems
