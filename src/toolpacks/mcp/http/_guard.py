"""Who may talk to the HTTP server: the bearer token, the ``Host`` and ``Origin`` headers.

Checked on the request's headers alone, before its body is read, so a refused request costs
nothing. The token is compared in constant time (``hmac.compare_digest`` of SHA-256 digests,
so not even its length leaks). ``Host`` and ``Origin`` are the DNS-rebinding defence the MCP
specification asks for: a web page the user visits must not reach a server on the user's
machine by pointing its own name at ``127.0.0.1``. A request without ``Origin`` (any client
that is not a browser) passes the origin check; ``Origin: null`` does not.

Patterns in the allow-lists: an exact value (``"localhost:8000"``,
``"https://app.example.com"``), a value with ``:*`` for any port (``"localhost:*"``,
``"http://127.0.0.1:*"``; it also matches the value without a port), or ``"*"`` for anything.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.responses import Response

__all__ = [
    "LOOPBACK_HOSTS",
    "LOOPBACK_ORIGINS",
    "Guard",
    "Refusal",
    "check_token",
    "is_loopback",
    "media_answer",
]

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
LOOPBACK_HOSTS: tuple[str, ...] = tuple(f"{name}:*" for name in _LOOPBACK_NAMES)
"""The ``Host`` headers accepted by default: loopback names, any port."""
LOOPBACK_ORIGINS: tuple[str, ...] = tuple(
    f"{scheme}://{name}:*" for scheme in ("http", "https") for name in _LOOPBACK_NAMES
)
"""The ``Origin`` headers accepted by default: pages served from this machine, any port."""


def is_loopback(address: str) -> bool:
    """Whether ``address`` (an IP address or ``localhost``) is reachable from this machine only."""
    if address.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def check_token(token: str) -> None:
    """Refuse a token no client could send in an ``Authorization`` header.

    Raises:
        ValueError: The token is empty, or holds whitespace or characters that are not
            printable ASCII.
    """
    if not token:
        raise ValueError("the bearer token is empty; set it to a long random value")
    if not token.isascii() or not token.isprintable() or any(c.isspace() for c in token):
        raise ValueError(
            "the bearer token must be printable ASCII without spaces "
            "(generate one with: python -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request is refused: its HTTP status, the message, and extra headers."""

    status: int
    """401, 403 or 421."""
    reason: str
    """A short label for metrics: ``unauthorized``, ``origin`` or ``host``."""
    message: str
    """What the client is told."""
    headers: tuple[tuple[str, str], ...] = ()
    """Headers to send with the refusal (``WWW-Authenticate`` on a 401)."""


def _matches(value: str, patterns: Sequence[str]) -> bool:
    lowered = value.lower()
    for pattern in patterns:
        pattern = pattern.lower()
        if pattern == "*" or lowered == pattern:
            return True
        if pattern.endswith(":*"):
            base = pattern[:-2]
            if lowered == base or (
                lowered.startswith(base + ":") and lowered[len(base) + 1 :].isdigit()
            ):
                return True
    return False


class Guard:
    """The header checks of one HTTP app."""

    def __init__(
        self,
        token: str | None,
        allowed_hosts: Sequence[str] | None,
        allowed_origins: Sequence[str] | None,
    ) -> None:
        """Checks for ``token`` (None: no token needed) and the allow-lists (None: loopback).

        Raises:
            ValueError: The token cannot be sent in a header (see ``check_token``).
        """
        if token is not None:
            check_token(token)
        self._digest = hashlib.sha256(token.encode()).digest() if token is not None else None
        self.hosts = tuple(LOOPBACK_HOSTS if allowed_hosts is None else allowed_hosts)
        """Accepted ``Host`` header patterns."""
        self.origins = tuple(LOOPBACK_ORIGINS if allowed_origins is None else allowed_origins)
        """Accepted ``Origin`` header patterns."""

    @property
    def needs_token(self) -> bool:
        """Whether requests must carry the bearer token."""
        return self._digest is not None

    def check(self, headers: dict[bytes, bytes]) -> Refusal | None:
        """The refusal for a request with these (lower-cased) headers, or None to let it in."""
        host = headers.get(b"host", b"").decode("latin-1")
        if not _matches(host, self.hosts):
            return Refusal(
                421,
                "host",
                f"Host header {host!r} is not allowed by this server "
                f"(allowed: {', '.join(self.hosts) or 'none'})",
            )
        origin = headers.get(b"origin")
        if origin is not None:
            shown = origin.decode("latin-1")
            if not _matches(shown, self.origins):
                return Refusal(
                    403,
                    "origin",
                    f"Origin {shown!r} is not allowed by this server "
                    f"(allowed: {', '.join(self.origins) or 'none'})",
                )
        return self._check_token(headers.get(b"authorization"))

    def _check_token(self, authorization: bytes | None) -> Refusal | None:
        if self._digest is None:
            return None
        if authorization is None:
            return Refusal(
                401,
                "unauthorized",
                "Unauthorized: this server needs an 'Authorization: Bearer <token>' header",
                (("WWW-Authenticate", 'Bearer realm="toolpacks"'),),
            )
        scheme, _, credential = authorization.strip().partition(b" ")
        given = hashlib.sha256(credential.strip()).digest()
        if scheme.lower() != b"bearer" or not hmac.compare_digest(given, self._digest):
            return Refusal(
                401,
                "unauthorized",
                "Unauthorized: the bearer token is not valid",
                (("WWW-Authenticate", 'Bearer realm="toolpacks", error="invalid_token"'),),
            )
        return None



def media_answer(headers: Sequence[tuple[bytes, bytes]]) -> Response | None:
    """The SDK road's answer to a POST whose ``Content-Type`` or ``Accept`` it refuses, or None.

    The SDK checks these before it reads the body: a ``Content-Type`` that does not start with
    ``application/json`` gets a plain 400 (its transport security), then an ``Accept`` that
    does not admit ``application/json`` (a missing header included) a 406, then a type that is
    not exactly ``application/json`` a 415. A body toolpacks answers without the SDK (one that
    is not JSON or repeats a key) gets the same answer.
    """
    from starlette.responses import Response

    accept = content_type = ""
    for key, value in headers:
        if key == b"accept":
            accept = value.decode("latin-1")
        elif key == b"content-type":
            content_type = value.decode("latin-1")
    if not content_type.lower().startswith("application/json"):
        return Response("Invalid Content-Type header", status_code=400)
    kinds = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    if kinds.isdisjoint({"application/json", "application/*", "*/*"}):
        message = "Not Acceptable: Client must accept application/json"
        status = 406
    elif all(part.strip() != "application/json" for part in content_type.split(";")[0].split(",")):
        message = "Unsupported Media Type: Content-Type must be application/json"
        status = 415
    else:
        return None
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    return Response(json.dumps(body), status_code=status, media_type="application/json")
