"""The two roads to an MCP server: a child process over stdio, or streamable HTTP.

A stdio server is started from an argument list (never a shell), with an environment holding
only the MCP SDK's minimal default set plus what the configuration names, in the
configuration's directory (``_spec.launch``). Its stderr goes
through a pipe: lines are logged (``toolpacks.mcp``), the last ones are kept for error
messages, and the pipe's end-of-file tells the connection to check whether the server died.

An HTTP server is reached with the SDK's streamable HTTP client over an ``httpx2`` client
that carries the configured headers and timeouts; the status of the last failed HTTP
response is kept so that a refused connection can say why (401, 404).
"""

from __future__ import annotations

import collections
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TextIO

from toolpacks.filetools._reviewed import UnreviewedCodeError
from toolpacks.packs.mcp._httpcap import capped_transport
from toolpacks.packs.mcp._relay import bounded_stdout
from toolpacks.packs.mcp._spec import ServerSpec, launch, unreviewed_code

if TYPE_CHECKING:
    import httpx2
    from mcp.client import Transport

__all__ = [
    "HttpStatus",
    "StderrPipe",
    "leaf",
    "open_transport",
    "start_failure",
    "timeout_message",
]

logger = logging.getLogger("toolpacks.mcp")

_STDERR_TAIL = 20
"""stderr lines kept for error messages."""
_MAX_LINE = 2000
"""Bytes of one stderr line kept or logged."""
_READ_BYTES = 65536
"""Bytes of stderr read at once."""
_SCRUB_MARGIN = 512
"""Bytes kept past ``_MAX_LINE`` so that a secret cut there is still masked whole."""
_SSE_READ_SECONDS = 300.0
"""Read timeout of an HTTP response stream (a server may hold one open while it works)."""


class StderrPipe:
    """A stdio server's stderr: logged line by line, its last lines kept, secrets masked.

    It is read in pieces of ``_READ_BYTES``, and of a line only its first ``_MAX_LINE`` bytes
    are kept (a line without a newline, however long, never holds more in memory).

    Args:
        name: The pack name (log prefix).
        tail: Where the last lines go (shared by every start of the same server).
        on_eof: Called (in the reader thread) when every writer closed the pipe.
        scrub: Masks the server's secrets in each line before it is kept or logged.
    """

    def __init__(
        self,
        name: str,
        tail: collections.deque[str],
        on_eof: Callable[[], None],
        scrub: Callable[[str], str] | None = None,
    ) -> None:
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        """The end given to the child (closed here once the child holds its own copy)."""
        self.scrub = scrub
        """Masks the server's secrets (also handed to its stdout reader)."""
        self.peak_buffered = 0
        """The most bytes of stderr held at once (a read piece and the kept part of a line)."""
        self._name = name
        self._tail = tail
        self._on_eof = on_eof
        self.thread = threading.Thread(
            target=self._read, args=(read_fd,), name=f"toolpacks-mcp-stderr:{name}", daemon=True
        )
        self.thread.start()

    def _read(self, fd: int) -> None:
        kept = bytearray()
        dropped = 0
        limit = _MAX_LINE + _SCRUB_MARGIN  # a secret cut at _MAX_LINE is still recognised
        try:
            while chunk := os.read(fd, _READ_BYTES):
                start = 0
                while True:
                    end = chunk.find(b"\n", start)
                    piece = memoryview(chunk)[start : end if end >= 0 else len(chunk)]
                    room = max(0, limit - len(kept))
                    kept += piece[:room]
                    dropped += max(0, len(piece) - room)
                    self.peak_buffered = max(self.peak_buffered, len(kept) + len(chunk))
                    if end < 0:
                        break
                    self._line(bytes(kept), dropped)
                    kept.clear()
                    dropped = 0
                    start = end + 1
            if kept or dropped:
                self._line(bytes(kept), dropped)
        finally:
            os.close(fd)
        self._on_eof()

    def _line(self, raw: bytes, dropped: int) -> None:
        line = raw.decode("utf-8", "replace").rstrip()
        if self.scrub is not None:
            line = self.scrub(line)
        if len(line) > _MAX_LINE or dropped:
            line = f"{line[:_MAX_LINE]} [... cut]"
        self._tail.append(line)
        logger.debug("[%s] %s", self._name, line)


class HttpStatus:
    """The last HTTP error status an HTTP server answered with (for messages)."""

    def __init__(self) -> None:
        self.status: int | None = None
        """The status of the last response that was not a success, if any."""

    async def record(self, response: httpx2.Response) -> None:
        """An ``httpx2`` response hook."""
        if response.status_code >= 400:
            self.status = response.status_code


@asynccontextmanager
async def _stdio(
    spec: ServerSpec, errlog: TextIO, scrub: Callable[[str], str] | None = None
) -> AsyncIterator[Any]:
    """``stdio_client``, closing our copy of the stderr pipe once the child holds its own.

    The child starts as ``launch`` says (never in the host's working directory), and only
    after its code was found to be what a trust check reviewed, if one did.
    """
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    command, args, env, cwd = launch(spec)
    params = StdioServerParameters(command=command, args=args, env=env, cwd=cwd)
    try:
        # Last look before the child starts: the code is what the trust check reviewed.
        problem = unreviewed_code(spec)
        if problem is not None:
            raise UnreviewedCodeError(problem)
        # Its stdout is read in whole lines of at most max_message_bytes (see _relay).
        with bounded_stdout(spec.max_message_bytes, spec.name, scrub):
            async with stdio_client(params, errlog=errlog) as streams:
                errlog.close()
                yield streams
    finally:
        errlog.close()


@asynccontextmanager
async def _http(spec: ServerSpec, status: HttpStatus) -> AsyncIterator[Any]:
    """The SDK's streamable HTTP client over an ``httpx2`` client with our headers."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    assert spec.url is not None
    timeout = httpx2.Timeout(spec.timeout, read=max(spec.timeout, _SSE_READ_SECONDS))
    http = httpx2.AsyncClient(
        headers=dict(spec.headers),
        timeout=timeout,
        event_hooks={"response": [status.record]},
        transport=capped_transport(spec.max_message_bytes),
    )
    cap = spec.max_message_bytes
    async with http, streamable_http_client(
        spec.url, http_client=http, max_sse_event_size=cap
    ) as streams:
        yield streams


def open_transport(spec: ServerSpec, stderr: StderrPipe | None, status: HttpStatus) -> Transport:
    """The transport for one start of ``spec`` (a stdio child needs its ``stderr`` pipe)."""
    if spec.url is not None:
        return _http(spec, status)
    assert stderr is not None
    return _stdio(spec, stderr.writer, stderr.scrub)


def leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside ``exc``."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def timeout_message(spec: ServerSpec, tail: str) -> str:
    """A start that took longer than ``spec.timeout``."""
    what = "answer" if spec.url is not None else "complete the MCP handshake and tool listing"
    return (
        f"{spec.describe()} did not {what} within {spec.timeout:g} s (raise `timeout` in "
        f"its configuration if it is just slow){tail}"
    )


def start_failure(spec: ServerSpec, exc: BaseException, tail: str, status: int | None) -> str:
    """Why a start failed, for a person: what happened and what to check.

    Args:
        spec: The server.
        exc: What the start raised (exception groups are unwrapped).
        tail: The server's last stderr lines, formatted (stdio), or "".
        status: The last HTTP error status the server answered with (HTTP), if any.
    """
    found = leaf(exc)
    if isinstance(found, TimeoutError):
        return timeout_message(spec, tail)
    if spec.url is not None:
        return _http_failure(spec, found, status)
    if isinstance(found, UnreviewedCodeError):
        return f"{spec.describe()} was not started: {found}"
    if isinstance(found, FileNotFoundError):
        return (
            f"{spec.describe()} could not be started: command {spec.command!r} was not found "
            "(is it installed, and on the PATH given to the server?)"
        )
    if isinstance(found, PermissionError):
        return f"{spec.describe()} could not be started: {spec.command!r} is not executable"
    if isinstance(found, OSError):
        return f"{spec.describe()} could not be started: {found.strerror or found}"
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED

    if isinstance(found, MCPError) and found.code == CONNECTION_CLOSED:
        return f"{spec.describe()} exited during startup{tail}"
    return f"{spec.describe()} failed during startup ({_detail(found)}){tail}"


def _http_failure(spec: ServerSpec, error: BaseException, status: int | None) -> str:
    import httpx2

    where = spec.describe()
    if status in (401, 403):
        return (
            f"{where} refused the request (HTTP {status}): check the credentials in "
            f'mcp_servers.{spec.name}.headers (e.g. Authorization = {{ env = "TOKEN" }})'
        )
    if status == 404:
        return (
            f"{where} answered HTTP 404: no MCP endpoint at that path (a toolpacks server "
            "serves /mcp, or /agents/NAME/mcp)"
        )
    if status is not None:
        return f"{where} answered HTTP {status} and could not be used"
    if isinstance(error, httpx2.TimeoutException):
        return timeout_message(spec, "")
    if isinstance(error, httpx2.ConnectError):
        return (
            f"{where} could not be reached ({_detail(error)}): is the server running, and "
            "are the host and port right?"
        )
    if isinstance(error, httpx2.HTTPError):
        return f"{where} could not be reached ({_detail(error)})"
    return f"{where} failed while connecting ({_detail(error)})"


def _detail(exc: BaseException) -> str:
    return f"{type(exc).__qualname__}: {exc}" if str(exc) else type(exc).__qualname__
