"""Header values that are the calling principal's own credential, as configured.

An ``[mcp_servers.NAME]`` reached over ``url`` may send, in a header, the value of a
``[credentials.CRED]`` entry of the principal a call is made for::

    [mcp_servers.github]
    url = "https://example.com/mcp"
    headers = { Authorization = { credential = "github", format = "Bearer {}" } }

``format`` is optional (``"{}"``: the value alone); its ``{}`` is replaced by the value (no
other formatting happens). This module reads and checks that form; nothing here imports the
MCP SDK. Routing each call over its principal's own connection is ``_per_principal``'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "CredentialHeader",
    "credential_headers",
    "header_table_problem",
    "undefined_credentials",
]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A credential name (as ``@tool(credentials=[...])`` accepts it)."""
_PLACEHOLDER = "{}"


@dataclass(frozen=True, slots=True)
class CredentialHeader:
    """One header whose value is the call's principal's credential."""

    header: str
    """The HTTP header's name (``Authorization``)."""
    credential: str
    """The ``[credentials.NAME]`` whose value it carries."""
    format: str = _PLACEHOLDER
    """The header's value with ``{}`` where the credential goes (``Bearer {}``)."""

    def value(self, secret: str) -> str:
        """The header's value for ``secret`` (``{}`` replaced; nothing else interpreted)."""
        return self.format.replace(_PLACEHOLDER, secret)


def header_table_problem(value: Mapping[str, str]) -> str | None:
    """Why a table given as a header's value is neither accepted form, or None.

    Accepted: ``{ env = "VAR" }`` (with an optional ``default``) and
    ``{ credential = "NAME" }`` (with an optional ``format`` holding ``{}`` once).
    """
    keys = set(value)
    if "env" in keys and keys <= {"env", "default"}:
        return None
    if "credential" in keys and keys <= {"credential", "format"}:
        name = value["credential"]
        if not isinstance(name, str) or not _NAME.match(name):
            return (
                f"credential = {name!r} is not a credential name (letters, digits, '_', '.', "
                "'-'; the NAME of a [credentials.NAME] table)"
            )
        shape = value.get("format", _PLACEHOLDER)
        if not isinstance(shape, str) or shape.count(_PLACEHOLDER) != 1:
            return (
                f'format must hold "{{}}" exactly once, where the credential goes (e.g. '
                f'format = "Bearer {{}}"), got {shape!r}'
            )
        if any(ch in shape for ch in "\r\n\0"):
            return "format holds a line break or NUL, which would split the HTTP header"
        return None
    return (
        'a table value must be { env = "VARIABLE" } (a value from the environment) or '
        '{ credential = "NAME", format = "Bearer {}" } (the calling user\'s own '
        "[credentials.NAME] value)"
    )


def credential_headers(
    headers: Mapping[str, str | Mapping[str, str]],
) -> tuple[CredentialHeader, ...]:
    """The headers of a server table whose values are the principal's credential."""
    return tuple(
        CredentialHeader(name, value["credential"], value.get("format", _PLACEHOLDER))
        for name, value in headers.items()
        if isinstance(value, Mapping) and "credential" in value
    )


def undefined_credentials(
    servers: Mapping[str, object], credentials: Mapping[str, object]
) -> str | None:
    """Why a server's credential header names no ``[credentials.NAME]`` table, or None.

    Args:
        servers: ``[mcp_servers]`` tables by name (each with ``headers``).
        credentials: ``[credentials]`` tables by name.
    """
    for server, table in servers.items():
        headers = getattr(table, "headers", None) or {}
        for found in credential_headers(headers):
            if found.credential not in credentials:
                defined = ", ".join(sorted(credentials)) or "none"
                return (
                    f"mcp_servers.{server}.headers.{found.header} sends the credential "
                    f"{found.credential!r}, which no [credentials.{found.credential}] table "
                    f'defines (defined: {defined}); add one (kind = "secret" or kind = '
                    '"oauth2") or fix the name'
                )
    return None
