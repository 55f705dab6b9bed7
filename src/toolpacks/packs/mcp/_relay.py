"""A stdio server's stdout on its way to the SDK: whole lines, bounded, nothing but messages.

The SDK's stdio reader joins what it has buffered with each chunk it reads and splits the
whole again, so a line of n bytes costs O(n²) (a 40 MB result took 25 s), and it keeps a line
of any length. Its reader builds a ``TextReceiveStream`` over the server's stdout; while
``bounded_stdout`` is active (around ``stdio_client``), that name gives a ``BoundedLines``
instead, which:

- hands the reader only whole lines, so its buffer stays empty and reading is linear;
- keeps at most ``cap`` bytes of a line: a longer message is skipped, and when it answers a
  request (its ``id`` is found near its start) the reader gets an error response for that
  request instead, naming the cap, so that call fails at once and the server goes on; one
  whose request cannot be told ends the session (the server is started again at the next
  call);
- drops lines that are not JSON objects (a server printing text on stdout), which the SDK
  would log with their text, secrets included, logging them at debug level, scrubbed.

Servers started elsewhere (other users of the SDK in the process) keep the SDK's reader.
What the SDK's stdio client logs is scrubbed like every ``mcp`` record (``core._logscrub``).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anyio.abc import ByteReceiveStream

__all__ = [
    "MESSAGE_TOO_LARGE",
    "BoundedLines",
    "bounded_stdout",
    "describe_size",
]

logger = logging.getLogger("toolpacks.mcp")

MESSAGE_TOO_LARGE = -32097
"""The JSON-RPC error code of the response that stands in for an oversized one."""
_HEAD = 65536
"""Bytes of an oversized message kept to find its ``id``."""
_SHOWN = 200
"""Characters of a dropped stdout line logged."""
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s"{}\[\]:,]+')
"""JSON tokens: strings, punctuation, and bare words (numbers, true, false, null)."""


def describe_size(size: int) -> str:
    """``16 MiB``, ``1 KiB``, or ``1500 bytes``."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} bytes"


@dataclass(frozen=True, slots=True)
class _Limits:
    cap: int
    name: str
    scrub: Callable[[str], str]


_limits: contextvars.ContextVar[_Limits | None] = contextvars.ContextVar(
    "toolpacks_mcp_stdout", default=None
)


@contextlib.contextmanager
def bounded_stdout(
    cap: int, name: str, scrub: Callable[[str], str] | None = None
) -> Iterator[None]:
    """Give the SDK's stdio reader started meanwhile (in this context) a ``BoundedLines``."""
    _install()
    token = _limits.set(_Limits(cap, name, scrub or (lambda text: text)))
    try:
        yield
    finally:
        _limits.reset(token)


_installed = False


def _install() -> None:
    """Make ``mcp.client.stdio``'s ``TextReceiveStream`` give ``BoundedLines`` when asked."""
    global _installed
    if _installed:
        return
    import mcp.client.stdio as stdio

    original = getattr(stdio, "TextReceiveStream", None)
    if original is None:  # an SDK that reads differently: nothing to bound here
        logger.warning("the MCP SDK's stdio reader changed; server messages are not capped")
        _installed = True
        return

    def text_stream(
        transport_stream: ByteReceiveStream, encoding: str = "utf-8", errors: str = "strict"
    ) -> Any:
        limits = _limits.get()
        if limits is None:
            return original(transport_stream, encoding=encoding, errors=errors)
        return BoundedLines(transport_stream, limits.cap, limits.name, limits.scrub)

    stdio.TextReceiveStream = text_stream  # type: ignore[attr-defined,assignment]
    _installed = True


class BoundedLines:
    """A server's stdout as text made of whole lines, each at most ``cap`` bytes.

    Args:
        stream: The server's stdout.
        cap: The longest line (message) kept, in bytes.
        name: The server's pack name, for messages.
        scrub: Masks secrets in what is logged of a dropped line.
    """

    def __init__(
        self,
        stream: ByteReceiveStream,
        cap: int,
        name: str,
        scrub: Callable[[str], str] = lambda text: text,
    ) -> None:
        self._stream = stream
        self._cap = cap
        self._name = name
        self._scrub = scrub
        self._parts: list[bytes] = []
        self._size = 0
        self._head: bytes | None = None
        """The start of a line being skipped (None: the line is being kept)."""
        self._ready: list[str] = []
        self._ended = False

    def __aiter__(self) -> BoundedLines:
        return self

    async def __anext__(self) -> str:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def receive(self) -> str:
        """One or more whole lines, each with its line end; never an unfinished one."""
        while not self._ready:
            if self._ended:
                import anyio

                raise anyio.EndOfStream
            chunk = await self._stream.receive()
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0:
                self._add(chunk[start:end])
                self._line()
                start = end + 1
            self._add(chunk[start:])
        ready, self._ready = self._ready, []
        return "".join(ready)

    async def aclose(self) -> None:
        """Close the server's stdout."""
        await self._stream.aclose()

    def _add(self, piece: bytes) -> None:
        if not piece:
            return
        self._size += len(piece)
        if self._head is not None:
            if len(self._head) < _HEAD:
                self._head += piece[: _HEAD - len(self._head)]
        elif self._size > self._cap:
            self._head = b"".join([*self._parts, piece])[:_HEAD]
            self._parts = []
        else:
            self._parts.append(piece)

    def _line(self) -> None:
        size, head, parts = self._size, self._head, self._parts
        self._size, self._head, self._parts = 0, None, []
        if head is not None:
            self._oversized(head, size)
            return
        line = b"".join(parts)
        if line.lstrip()[:1] == b"{":
            self._ready.append(line.decode("utf-8", "replace") + "\n")
        elif line.strip():
            text = self._scrub(line[: _SHOWN * 4].decode("utf-8", "replace"))[:_SHOWN]
            logger.debug(
                "[%s] stdout line that is not an MCP message, dropped: %s", self._name, text
            )

    def _oversized(self, head: bytes, size: int) -> None:
        where = f"mcp_servers.{self._name}.max_message_bytes"
        cap = describe_size(self._cap)
        fields = _top_level(head.decode("utf-8", "replace"))
        request = _request_id(fields.get("id"))
        if "method" in fields:  # a request or notification of the server's: nothing waits
            logger.warning(
                "MCP server %r sent a message of %d bytes or more, over the cap of %s (%s); "
                "it was dropped",
                self._name,
                size,
                cap,
                where,
            )
            return
        if request is None:
            logger.warning(
                "MCP server %r sent a message of %d bytes or more, over the cap of %s (%s), "
                "whose request cannot be told; its session is ended, and the server is started "
                "again at the next call",
                self._name,
                size,
                cap,
                where,
            )
            self._ended = True
            return
        message = (
            f"the MCP server '{self._name}' answered with a message of {size} bytes or more, "
            f"over the cap of {cap} ({where}); it was not read and this call failed. Raise "
            f"{where} if its results are expected to be this large"
        )
        logger.warning("%s", message)
        error = {"code": MESSAGE_TOO_LARGE, "message": message}
        self._ready.append(json.dumps({"jsonrpc": "2.0", "id": request, "error": error}) + "\n")


def _top_level(head: str) -> dict[str, str]:
    """The top-level keys of the JSON object ``head`` starts, each with its value's first token.

    ``head`` may end anywhere; a key whose value starts past its end is left out.
    """
    fields: dict[str, str] = {}
    depth = 0
    key: str | None = None
    expect_key = False
    for match in _TOKEN.finditer(head):
        token = match.group()
        if token in ("{", "["):
            if depth == 1 and key is not None:
                fields[key], key = token, None
            depth += 1
            expect_key = token == "{" and depth == 1
        elif token in ("}", "]"):
            depth -= 1
            if depth <= 0:
                break
        elif token == ",":
            expect_key = depth == 1
        elif token == ":" or depth != 1:
            continue
        elif expect_key:
            try:
                key, expect_key = str(json.loads(token)), False
            except ValueError:
                return fields
        elif key is not None:
            fields[key], key = token, None
    return fields


def _request_id(token: str | None) -> str | int | None:
    """A JSON-RPC request id (a string or an integer) from its token, or None."""
    if token is None:
        return None
    try:
        value = json.loads(token)
    except ValueError:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return value
