"""Names a model sees: provider-safe, unique, and mapped back to qualified names."""

from __future__ import annotations

import hashlib
import re

__all__ = ["MAX_NAME", "is_safe", "safe_name"]

MAX_NAME = 64
_SAFE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_UNSAFE_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


def is_safe(name: str) -> bool:
    """Whether ``name`` is valid for every provider (``^[a-zA-Z0-9_-]{1,64}$``)."""
    return bool(_SAFE.match(name))


def safe_name(name: str) -> str:
    """A provider-safe form of ``name``, the same for the same input.

    Characters outside ``[a-zA-Z0-9_-]`` become ``_``; a name longer than 64 characters keeps
    its first 55 and gains ``_`` and 8 hex digits of its SHA-256, so two long names that share
    a prefix never collapse into one.
    """
    candidate = _UNSAFE_CHARS.sub("_", name) or "_"
    if len(candidate) <= MAX_NAME:
        return candidate
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{candidate[:55]}_{digest}"
