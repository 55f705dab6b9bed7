"""Assembling exposed names: renames, safe names, and conflict resolution."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from toolpacks.core._tool import Tool
from toolpacks.core.define._names import safe_name
from toolpacks.exceptions import ToolConflictError
from toolpacks.host._conflicts import ConflictContext, ConflictPolicy
from toolpacks.host._toolset import ToolEntry

__all__ = ["Candidate", "assemble"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A tool that passed the filters, before it gets its exposed name."""

    qualified: str
    """``<pack>.<tool>``."""
    pack: str
    """The pack it came from."""
    tool: Tool
    """The tool."""


def assemble(
    candidates: Iterable[Candidate],
    renames: Mapping[str, str],
    policy: ConflictPolicy,
    context: ConflictContext,
) -> dict[str, Candidate]:
    """Give every candidate a unique provider-safe exposed name.

    A candidate is exposed under its rename, else under the safe form of its tool name;
    names claimed by more than one candidate go to ``policy``. A clash the policy's own
    answer would create is an error, never a silent overwrite.
    """
    groups: dict[str, list[Candidate]] = {}
    for c in candidates:
        name = renames.get(c.qualified) or safe_name(c.tool.scoped_name)
        groups.setdefault(name, []).append(c)
    out: dict[str, Candidate] = {}
    resolved: dict[str, Candidate]
    for name, group in groups.items():
        if len(group) == 1:
            resolved = {name: group[0]}
        else:
            entries = [ToolEntry(name, c.qualified, c.pack, c.tool) for c in group]
            chosen = policy(name, entries, context)
            by_qualified = {c.qualified: c for c in group}
            resolved = {}
            for new_name, entry in chosen.items():
                if entry.qualified not in by_qualified:
                    raise ToolConflictError(
                        f"conflict policy {getattr(policy, '__name__', policy)!r} returned "
                        f"{entry.qualified!r} for the name {name!r}, which only "
                        f"{', '.join(by_qualified)} claimed"
                    )
                exposed = safe_name(new_name)
                if exposed in resolved:
                    raise ToolConflictError(
                        f"conflict policy {getattr(policy, '__name__', policy)!r} exposes both "
                        f"{resolved[exposed].qualified!r} and {entry.qualified!r} as {exposed!r}"
                    )
                resolved[exposed] = by_qualified[entry.qualified]
        for exposed, c in resolved.items():
            if exposed in out:
                raise ToolConflictError(
                    f"exposed name {exposed!r} would be used by both {out[exposed].qualified!r} "
                    f"and {c.qualified!r} (a conflict policy or rename produced a name that "
                    f"is already taken); rename one of them, e.g. "
                    f'rename = {{ "{c.qualified}" = "..." }}'
                )
            out[exposed] = c
    return dict(sorted(out.items()))
