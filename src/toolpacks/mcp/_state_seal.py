"""``requestState`` sealed: HMAC-SHA256 with the server's key, so a client cannot forge one.

On protocol 2026-07-28 a tool that asks is answered by ``input_required`` rounds: the state
the server hands the client holds the answers so far and comes back with the retry, where
the server trusts it. The client holds it between rounds, so it is sealed: ``toolpacks2.``
then the URL-safe base64 of the JSON value, a dot, and the base64 of an HMAC-SHA256 over
both. The value says which call it belongs to (the tool, a digest of its arguments, the
principal's subject) and when it expires; ``InputChannel`` checks those against the retry.

The key: over HTTP (``share_key``, called as the app is built) it is derived from the
server's ``connect.key`` in the state directory (``0600``, made when missing), the key the
``/connect`` pages seal with, so a state issued by one worker opens on any other. Elsewhere
(stdio) it is random per process. It is read at the first state sealed or opened, so a
server whose tools never ask never touches the state directory.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import secrets
import threading
import time
from collections.abc import Mapping
from typing import Any

__all__ = ["PREFIX", "TTL", "arguments_digest", "open_state", "seal_state", "share_key"]

logger = logging.getLogger("toolpacks.mcp")

PREFIX = "toolpacks2."
"""The start of every state this version issues (``toolpacks1.`` states were unsigned)."""
TTL = 3600.0
"""Seconds a state stays good: time for the user to answer, not for a replay next week."""
MAX_CHARS = 4 * 1024 * 1024
"""A longer state is refused unread (no server issues one that long)."""
_DOMAIN = b"toolpacks requestState v2"

_lock = threading.Lock()
_shared = False
_key: bytes | None = None


def share_key() -> None:
    """Use the key of the state directory (every worker of an HTTP server shares it)."""
    global _shared, _key
    with _lock:
        if not _shared:
            _shared, _key = True, None


def _the_key() -> bytes:
    global _key
    with _lock:
        if _key is None:
            _key = _shared_key() if _shared else secrets.token_bytes(32)
        return _key


def _shared_key() -> bytes:
    from toolpacks.host.credentials._store import _key_file, state_dir
    from toolpacks.packs._statefiles import private_dir

    try:
        connect_key = _key_file(private_dir(state_dir()) / "connect.key")
    except Exception as exc:  # an unwritable state directory, a damaged key file
        logger.warning(
            "requestState is sealed with a key of this process only (%s), so a retry that "
            "another worker answers is refused; make the state directory writable "
            "(TOOLPACKS_STATE_DIR) to share connect.key",
            exc,
        )
        return secrets.token_bytes(32)
    return hmac.new(connect_key, _DOMAIN, hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def arguments_digest(arguments: Mapping[str, Any]) -> str:
    """SHA-256 of the arguments as canonical JSON (sorted keys, no spaces), in hex."""
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def seal_state(value: Mapping[str, Any]) -> str:
    """``value`` (a JSON object) with an expiry, sealed with the key."""
    body = _b64(json.dumps({**value, "exp": time.time() + TTL}, separators=(",", ":")).encode())
    mac = hmac.new(_the_key(), f"{PREFIX}{body}".encode(), hashlib.sha256).digest()
    return f"{PREFIX}{body}.{_b64(mac)}"


def open_state(state: object) -> dict[str, Any] | None:
    """The value sealed in ``state``; None when it was not sealed with the key, or expired."""
    if not isinstance(state, str) or not state.startswith(PREFIX) or len(state) > MAX_CHARS:
        return None
    body, _, mac = state[len(PREFIX) :].rpartition(".")
    expected = hmac.new(_the_key(), f"{PREFIX}{body}".encode(), hashlib.sha256).digest()
    try:
        if not hmac.compare_digest(_unb64(mac), expected):
            return None
        value = json.loads(_unb64(body))
    except (ValueError, binascii.Error):
        return None
    if not isinstance(value, dict):
        return None
    expires = value.get("exp")
    if not isinstance(expires, (int, float)) or expires < time.time():
        return None
    return value
