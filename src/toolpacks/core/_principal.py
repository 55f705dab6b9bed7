"""Who a call is made for: a principal, with the scopes it was granted.

A principal enters at the edge — a verified access token over HTTP, an application's own
``ToolContext(principal=...)`` in-process — and travels in the call's ``ToolContext``; every
check (a tool's scopes, an agent's scopes, the credentials a tool may use) reads it there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from toolpacks.exceptions import ToolDefinitionError

__all__ = ["Principal", "missing_scopes", "scope_refusal", "scopes_of"]


def _frozen_scopes(scopes: Iterable[str] | str) -> frozenset[str]:
    if isinstance(scopes, str):  # "a b" as OAuth writes a scope list
        return frozenset(scopes.split())
    return frozenset(scopes)


@dataclass(frozen=True, slots=True)
class Principal:
    """The user or service a call is made for.

    Example:
        ``Principal("alice", scopes={"repo.read"})``; over HTTP, toolpacks makes one from a
        verified access token (``sub`` is the subject, ``scope``/``scp`` the scopes).
    """

    subject: str
    """Who it is: a user or service id (a token's ``sub``)."""
    scopes: frozenset[str] = field(default_factory=frozenset)
    """What it was granted (a set, a list, or OAuth's space-separated string on input)."""
    claims: Mapping[str, Any] = field(default_factory=dict)
    """The rest of what the issuer said about it (a token's claims), read-only."""

    def __post_init__(self) -> None:
        if not isinstance(self.subject, str) or not self.subject:
            raise ValueError("Principal.subject must be a non-empty string")
        object.__setattr__(self, "scopes", _frozen_scopes(self.scopes))
        object.__setattr__(self, "claims", MappingProxyType(dict(self.claims)))

    def __repr__(self) -> str:
        """Subject and scopes; the claims are not shown (they may hold personal data)."""
        return f"Principal(subject={self.subject!r}, scopes={sorted(self.scopes)!r})"

    def __hash__(self) -> int:
        return hash((self.subject, self.scopes))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Principal):
            return NotImplemented
        return (self.subject, self.scopes, dict(self.claims)) == (
            other.subject,
            other.scopes,
            dict(other.claims),
        )

    def has(self, *scopes: str) -> bool:
        """Whether every one of ``scopes`` was granted."""
        return self.scopes.issuperset(scopes)


def missing_scopes(principal: Principal | None, required: Iterable[str]) -> list[str]:
    """The scopes of ``required`` that ``principal`` lacks, sorted (all of them without one)."""
    needed = set(required)
    if principal is None:
        return sorted(needed)
    return sorted(needed - principal.scopes)


def scopes_of(scopes: Iterable[str] | str | None, tool: str) -> frozenset[str]:
    """The scopes a tool declares (``@tool(scopes=[...])``; a string splits at spaces), checked.

    Raises:
        ToolDefinitionError: A scope is not a non-empty string without whitespace.
    """
    if scopes is None:
        return frozenset()
    listed = (scopes.split() or [scopes]) if isinstance(scopes, str) else list(scopes)
    for scope in listed:
        if not isinstance(scope, str) or not scope or scope.split() != [scope]:
            raise ToolDefinitionError(
                f"tool {tool!r}: scopes=[...] must hold non-empty scope names without spaces "
                f"(such as 'repo.read'), got {scope!r}"
            )
    return frozenset(listed)


def scope_refusal(principal: Principal | None, required: frozenset[str], what: str) -> str | None:
    """Why ``principal`` may not use ``what`` needing ``required`` scopes, or None if it may."""
    if not required:
        return None
    if principal is None:
        return (
            f"{what} needs scopes {', '.join(sorted(required))} and this call has no principal "
            "(no principal: pass ToolContext(principal=...) or use Toolset.for_principal)"
        )
    lacking = sorted(required - principal.scopes)
    if not lacking:
        return None
    return (
        f"{what} needs scopes the principal {principal.subject!r} was not granted: "
        f"missing scope {', '.join(lacking)}"
    )
