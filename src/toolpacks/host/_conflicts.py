"""Conflict policies: what happens when two packs offer the same exposed name.

A policy is a plain function (``ConflictPolicy``) given the contested name and the entries
claiming it, in pack order; it returns the entries to keep under their new names. Pass your
own to ``Host.toolset(on_conflict=...)``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolpacks.core.define._names import safe_name
from toolpacks.exceptions import ConfigError, ToolConflictError

if TYPE_CHECKING:
    from toolpacks.host._toolset import ToolEntry

__all__ = [
    "POLICIES",
    "ConflictContext",
    "ConflictPolicy",
    "error_on_conflict",
    "first_on_conflict",
    "prefix_on_conflict",
    "priority_on_conflict",
]

logger = logging.getLogger("toolpacks.conflicts")
"""Resolved conflicts: informative, so a command line shows them only when asked."""


@dataclass(frozen=True, slots=True)
class ConflictContext:
    """What a policy may need besides the entries."""

    agent: str | None = None
    """The agent whose toolset is being built."""
    priority: tuple[str, ...] = ()
    """Pack order for the priority policy (earlier wins)."""
    describe_pack: Callable[[str], str] = str
    """Renders a pack name with its distribution and version, for messages."""


ConflictPolicy = Callable[[str, Sequence["ToolEntry"], ConflictContext], Mapping[str, "ToolEntry"]]
"""``(name, entries, context) -> {exposed name: entry}``; raise to refuse."""


def error_on_conflict(
    name: str, entries: Sequence[ToolEntry], context: ConflictContext
) -> Mapping[str, ToolEntry]:
    """Refuse the toolset, naming both packs and how to resolve the clash (the default)."""
    sources = " and ".join(f"{e.qualified!r} from {context.describe_pack(e.pack)}" for e in entries)
    where = (
        f"[agents.{context.agent}]"
        if context.agent
        else "the agent's table (or pass the same keyword to Host.toolset())"
    )
    first = entries[0]
    raise ToolConflictError(
        f"tool name {name!r} is offered by {sources}. Resolve it in {where}: "
        f'on_conflict = "prefix" (qualify clashing names), "first", or "priority" '
        f"with priority = [...]; or rename one, e.g. "
        f'rename = {{ "{first.qualified}" = "{safe_name(f"{first.pack}_{name}")}" }}; '
        f'or exclude = ["{first.qualified}"]'
    )


def prefix_on_conflict(
    name: str, entries: Sequence[ToolEntry], context: ConflictContext
) -> Mapping[str, ToolEntry]:
    """Keep every clashing tool, exposed as ``<pack>_<name>``.

    Two clashing tools of one pack (a rename onto a sibling's name) cannot be told apart
    by their pack, so that is an error.
    """
    out: dict[str, ToolEntry] = {}
    for e in entries:
        exposed = f"{e.pack}_{name}"
        if exposed in out:
            raise ToolConflictError(
                f"tool name {name!r} is claimed twice within pack {e.pack!r} "
                f"({out[exposed].qualified!r} and {e.qualified!r}); prefixing cannot separate "
                "them; rename one"
            )
        out[exposed] = e
    return out


def first_on_conflict(
    name: str, entries: Sequence[ToolEntry], context: ConflictContext
) -> Mapping[str, ToolEntry]:
    """Keep the tool of the pack listed first (in the agent's ``packs``, else sorted); logged."""
    winner = entries[0]
    logger.warning(
        "tool name %r: kept %s, dropped %s (on_conflict=first)",
        name,
        winner.qualified,
        ", ".join(e.qualified for e in entries[1:]),
    )
    return {name: winner}


def priority_on_conflict(
    name: str, entries: Sequence[ToolEntry], context: ConflictContext
) -> Mapping[str, ToolEntry]:
    """Keep the tool of the pack earliest in ``priority``; logged. Unlisted packs lose."""
    order = {pack: i for i, pack in enumerate(context.priority)}
    ranked = sorted(entries, key=lambda e: order.get(e.pack, len(order)))
    if ranked[0].pack not in order:
        raise ToolConflictError(
            f"tool name {name!r} is offered by packs {', '.join(e.pack for e in entries)}, none "
            "of which is in the priority list; add one of them to `priority`"
        )
    logger.warning(
        "tool name %r: kept %s by priority, dropped %s",
        name,
        ranked[0].qualified,
        ", ".join(e.qualified for e in ranked[1:]),
    )
    return {name: ranked[0]}


POLICIES: dict[str, ConflictPolicy] = {
    "error": error_on_conflict,
    "prefix": prefix_on_conflict,
    "first": first_on_conflict,
    "priority": priority_on_conflict,
}


def get_policy(policy: str | ConflictPolicy) -> ConflictPolicy:
    """The policy function for a name or a function.

    Raises:
        ConfigError: An unknown policy name (the message lists the valid ones).
    """
    if callable(policy):
        return policy
    try:
        return POLICIES[policy]
    except KeyError:
        raise ConfigError(
            f"unknown on_conflict policy {policy!r}; use one of: {', '.join(POLICIES)}"
        ) from None
