"""What a tool may know of its user's credentials: only those it declared, only this call's.

A tool declares the credentials it uses (``@tool(credentials=["github"])``). For each call the
host resolves exactly those, for the call's principal, and puts them in the call's
``ToolContext`` as a ``CallCredentials``; ``ToolContext.credential(name)`` reads it. The
store, and other principals' values, never reach the tool. Core knows nothing of stores:
the host (``toolpacks.host.credentials``) does the resolving.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from toolpacks.exceptions import ToolDefinitionError, ToolError

__all__ = [
    "PRINCIPAL_META_KEY",
    "RELAY_META_KEY",
    "CallCredentials",
    "ConnectRequired",
    "CredentialError",
    "credentials_of",
    "relayed_meta",
]

RELAY_META_KEY = "io.toolpacks/credentials"
"""The ``_meta`` key of the credentials a host relays to its isolated pack's child."""
PRINCIPAL_META_KEY = "io.toolpacks/principal"
"""The ``_meta`` key of the call's principal (subject, scopes) relayed to that child."""
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class CredentialError(ToolError, LookupError):
    """A credential a tool asked for is not available to this call.

    The tool did not declare it, or the call has no principal, or the principal has not
    connected it (the message says how). Raised inside a tool, it ends the call with an error
    result carrying that message.
    """


class ConnectRequired(Exception):
    """The call's principal must connect credentials first, at the URLs given.

    Raised by ``Toolset.call`` only where a server asked for it (``serve --http`` with
    ``oauth2`` credentials): the server answers with an MCP URL elicitation (``-32042``),
    and the client retries once the user has connected. In-process calls never see it.
    """

    def __init__(self, message: str, elicitations: list[dict[str, str]]) -> None:
        super().__init__(message)
        self.elicitations = elicitations
        """``{"name", "url", "message"}`` per credential to connect."""


def credentials_of(names: Iterable[str] | str, tool: str) -> tuple[str, ...]:
    """The declared credential names, checked (``credentials=`` of a tool).

    Raises:
        ToolDefinitionError: A name is not a string of letters, digits, ``_``, ``.``, ``-``.
    """
    listed = [names] if isinstance(names, str) else list(names)
    for name in listed:
        if not isinstance(name, str) or not _NAME.match(name):
            raise ToolDefinitionError(
                f"tool {tool!r}: credentials=[...] must hold credential names (letters, "
                f"digits, '_', '.', '-'; the NAME of a [credentials.NAME] table), got {name!r}"
            )
    return tuple(dict.fromkeys(listed))


class CallCredentials:
    """The credentials resolved for one call: the tool's declared ones, for its principal.

    Its ``repr`` never shows a value.
    """

    __slots__ = ("__weakref__", "_values", "declared", "subject")

    def __init__(self, declared: Iterable[str], subject: str | None, values: Mapping[str, str]):
        self.declared = frozenset(declared)
        """What the tool declared."""
        self.subject = subject
        """Whose they are (the call's principal's subject)."""
        self._values = MappingProxyType({k: v for k, v in values.items() if k in self.declared})

    def __repr__(self) -> str:
        """Names only."""
        return f"CallCredentials(subject={self.subject!r}, names={sorted(self._values)!r})"

    def values(self) -> dict[str, str]:
        """The values by name (for relaying to an isolated pack's child; never shown)."""
        return dict(self._values)

    def get(self, name: str, tool: str | None) -> str:
        """The value of ``name`` (see ``ToolContext.credential``)."""
        if name not in self.declared:
            raise CredentialError(
                f"tool {tool!r} asked for the credential {name!r}, which it did not declare; "
                f"add it to the tool's credentials=[...] (declared: "
                f"{', '.join(sorted(self.declared)) or 'none'})"
            )
        try:
            return self._values[name]
        except KeyError:
            raise CredentialError(
                f"the credential {name!r} is not connected for this call"
            ) from None


def no_credentials(name: str, tool: str | None) -> CredentialError:
    """The error of a context holding no credentials.

    The tool declared none, or was not run through a toolset that resolves them.
    """
    return CredentialError(
        f"tool {tool!r} asked for the credential {name!r}, but this call carries none: "
        "declare it (@tool(credentials=[...])) and call the tool through a Toolset whose "
        "host has [credentials] configured (or pass credentials resolved for the principal)"
    )


def relayed_meta(tag: object, relay: bool = True) -> dict[str, Any] | None:
    """The ``_meta`` carrying a call's credentials and principal to an isolated pack's child.

    ``tag`` holds the call's ``ToolContext`` in ``.context``; None when it holds none or
    ``relay`` is false (a server that is not the host's own child gets nothing).
    """
    context = getattr(tag, "context", None) if relay else None
    held = getattr(context, "credentials", None)
    principal = getattr(context, "principal", None)
    meta: dict[str, Any] = {}
    if isinstance(held, CallCredentials):
        meta[RELAY_META_KEY] = held.values()
    if principal is not None:  # who the call is for: subject and scopes (not the claims)
        meta[PRINCIPAL_META_KEY] = {
            "subject": principal.subject,
            "scopes": sorted(principal.scopes),
        }
    return meta or None
