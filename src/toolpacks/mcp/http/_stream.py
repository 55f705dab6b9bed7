"""Which HTTP requests are answered as a stream (SSE): calls whose client listens for more.

The HTTP endpoint answers in JSON, stateless: one request, one reply. A ``tools/call`` whose
``_meta`` carries a progress token, or (2026-07-28) opts in to log messages, from a client
that accepts ``text/event-stream``, goes to a second, streaming SDK transport instead, so the
tool's progress and log notifications travel on the reply's stream before the result.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["wants_stream"]

_LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
_MARKS = (b"progressToken", _LOG_LEVEL_KEY.encode())


def wants_stream(body: bytes, headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether ``body`` is a ``tools/call`` that listens for notifications on an SSE reply.

    A byte search first, so the plain calls of the hot path pay only for that.
    """
    if not any(mark in body for mark in _MARKS):
        return False
    if not any(k == b"accept" and b"text/event-stream" in v for k, v in headers):
        return False
    from pydantic_core import from_json

    try:
        value: Any = from_json(body)
    except ValueError:
        return False
    if not isinstance(value, dict) or value.get("method") != "tools/call":
        return False
    params = value.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and ("progressToken" in meta or _LOG_LEVEL_KEY in meta)
