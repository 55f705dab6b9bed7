"""Secrets: recognising them, and keeping them out of what is shown or sent.

Configuration values under secret-looking keys, token-like strings and passwords in URLs are
secrets; they are redacted wherever configuration is shown and scrubbed from error messages,
hook payloads and logs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "MASK",
    "REDACTED",
    "is_secret_key",
    "is_secret_value",
    "redact",
    "scrub",
    "secret_values",
]

_SECRET_KEY = re.compile(r"(key|token|secret|passw(or)?d|credential|authorization)", re.IGNORECASE)
_SECRET_VALUE = re.compile(
    r"^(sk-|sk_live_|rk_live_|ghp_|gho_|ghs_|github_pat_|glpat-|xox[abpr]-|AKIA|AIza|Bearer\s)"
)
_URL_PASSWORD = re.compile(r"(?P<head>[a-zA-Z][a-zA-Z0-9+.-]*://[^/:@\s]*:)[^/@\s]+(?P<tail>@)")
REDACTED = "****"
"""What a redacted configuration value is shown as."""
MASK = "**********"
"""What a secret is replaced by in messages, logs and hook payloads."""


def is_secret_key(key: str) -> bool:
    """Whether a setting's name suggests a secret (key, token, secret, password...)."""
    return bool(_SECRET_KEY.search(key))


def is_secret_value(value: str) -> bool:
    """Whether a string looks like a credential (a known token prefix, ``Bearer ...``)."""
    return bool(_SECRET_VALUE.match(value))


def _is_env_reference(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) <= {"env", "default"} and "env" in value


def redact(value: Any) -> Any:
    """A copy of a configuration value with secret-looking entries replaced by ``"****"``.

    Values under secret-looking keys, strings that look like tokens, and passwords in URLs
    (``postgres://user:****@host``) are hidden; ``{ env = "NAME" }`` references are kept,
    since they name a variable rather than hold its value.
    """
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if _is_env_reference(v):
                out[k] = {
                    ek: (REDACTED if ek == "default" and is_secret_key(str(k)) else ev)
                    for ek, ev in v.items()
                }
            elif is_secret_key(str(k)) and not isinstance(v, Mapping | list):
                out[k] = REDACTED
            elif is_secret_key(str(k)) and isinstance(v, list):
                out[k] = [REDACTED for _ in v]
            else:
                out[k] = redact(v)
        return out
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, str):
        if is_secret_value(value):
            return REDACTED
        return _URL_PASSWORD.sub(rf"\g<head>{REDACTED}\g<tail>", value)
    return value


def secret_values(value: Any) -> list[str]:
    """The secret-looking strings in a resolved configuration value (to scrub from messages).

    Strings under secret-looking keys, token-like strings, and passwords in URLs.
    """
    out: list[str] = []
    if isinstance(value, Mapping):
        for k, v in value.items():
            if is_secret_key(str(k)) and isinstance(v, str) and v:
                out.append(v)
            elif is_secret_key(str(k)) and isinstance(v, list):
                out.extend(x for x in v if isinstance(x, str) and x)
            else:
                out.extend(secret_values(v))
    elif isinstance(value, list):
        for v in value:
            out.extend(secret_values(v))
    elif isinstance(value, str):
        if is_secret_value(value):
            out.append(value)
        for match in _URL_PASSWORD.finditer(value):
            out.append(match.group(0)[len(match.group("head")) : -1])
    return out


def scrub(text: str, secrets: Iterable[str], mask: str = MASK) -> str:
    """``text`` with every occurrence of each (non-empty) secret replaced by ``mask``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, mask)
    return text
