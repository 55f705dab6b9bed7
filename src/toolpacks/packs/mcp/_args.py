"""Secrets in a server's command line: found (to scrub them) and hidden (to show the line).

An MCP server's ``args`` often carry a credential: ``--token X``, ``--api-key=X``,
``-e GITHUB_TOKEN=X`` (a ``docker run`` mount) or ``--header "Authorization: Bearer X"``.
What counts:

- the word after a flag whose name looks secret (``--token``, ``--api-key``, ``--password``,
  ``--client-secret``, ``--pass``; see ``is_secret_key``), and what follows ``=`` in
  ``--token=X``;
- what follows ``=`` in ``NAME=X`` and ``:`` in ``Name: X`` when the name looks secret;
- token-shaped strings (``ghp_...``, ``sk-...``, ``Bearer ...``) and passwords in URLs,
  wherever they are.

Short flags (``-p``, ``-t``) carry no name to judge by and are shown: ``-p`` is a port or a
path as often as a password, and hiding every short flag's value would hide most lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from toolpacks.core._secrets import REDACTED, is_secret_key, redact_text, secret_values

__all__ = ["redact_args", "secret_args"]

_NAMED = re.compile(r"^(?P<name>[A-Za-z_][\w.-]*)(?P<sep>=|:\s*)(?P<value>.+)$", re.DOTALL)
"""``NAME=value`` (an environment assignment) or ``Name: value`` (an HTTP header)."""
_PASS = re.compile(r"(?:^|[-_.])pass(?:$|[-_.])", re.IGNORECASE)
"""``--pass``, ``--db-pass``: a word ``is_secret_key`` does not know."""


def _secret_name(name: str) -> bool:
    return is_secret_key(name) or bool(_PASS.search(name))


def _split(args: Sequence[str]) -> list[tuple[str, str | None]]:
    """Each argument as ``(shown prefix, secret)``: the secret part, or None."""
    out: list[tuple[str, str | None]] = []
    hide_next = False
    for arg in args:
        if hide_next:
            out.append(("", arg))
            hide_next = False
            continue
        if arg.startswith("-") and len(arg) > 2 and arg[1] == "-":
            flag, eq, value = arg.partition("=")
            if _secret_name(flag.lstrip("-")):
                if eq:
                    out.append((f"{flag}=", value))
                else:
                    out.append((arg, None))
                    hide_next = True
                continue
        elif not arg.startswith("-"):
            named = _NAMED.match(arg)
            if named and _secret_name(named["name"]):
                out.append((f"{named['name']}{named['sep']}", named["value"]))
                continue
        out.append((arg, None))
    return out


def redact_args(args: Sequence[str]) -> list[str]:
    """Command-line arguments for display, secrets replaced by ``"****"`` (see the module)."""
    return [
        prefix + REDACTED if secret is not None else redact_text(prefix)
        for prefix, secret in _split(args)
    ]


def secret_args(args: Sequence[str]) -> list[str]:
    """The secret values in ``args`` (to scrub from messages and logs), without repeats."""
    found: list[str] = []
    for prefix, secret in _split(args):
        for value in [secret] if secret is not None else secret_values(prefix):
            found.append(value)
            scheme, _, credential = value.partition(" ")
            if credential and scheme.lower() in ("bearer", "basic", "token"):
                found.append(credential)
    return [value for value in dict.fromkeys(found) if value]
