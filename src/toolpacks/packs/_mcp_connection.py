"""One connection to a remote MCP server: a child process driven by a background event loop.

The official MCP client is asynchronous (anyio) while ``Host`` is synchronous, and a
connection must outlive any single caller's event loop. So each server gets a dedicated thread
running its own event loop, which owns the ``mcp.Client`` from start to shutdown. Callers on
any event loop reach it with ``asyncio.run_coroutine_threadsafe`` + ``asyncio.wrap_future``;
cancelling the caller cancels the remote call.

The server is started from an argument list (never a shell), with an environment holding only
the MCP SDK's minimal default set plus what the configuration names. Its stderr goes through a
pipe: lines are logged (``toolpacks.mcp``), the last ones are kept for error messages, and the
pipe's end-of-file, confirmed by a ping, tells us the server died.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import concurrent.futures
import logging
import math
import os
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from toolpacks.exceptions import PackError, ToolError

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client, StdioServerParameters
    from mcp.client import Transport

__all__ = ["McpConnection", "ServerGoneError", "ServerSpec", "server_environment"]

logger = logging.getLogger("toolpacks.mcp")

_MAX_PAGES = 100
"""tools/list pages read at most (a paginator that never ends cannot hang a start)."""
_STDERR_TAIL = 20
"""stderr lines kept for error messages."""
_MAX_LINE = 2000
"""Bytes of one stderr line kept or logged."""
_SHUTDOWN_SECONDS = 10.0
"""How long ``close`` waits for the SDK's shutdown (stdin close, grace, SIGTERM, SIGKILL)."""
_LIVENESS_SECONDS = 5.0
"""How long the liveness check after the server's stderr closed may take."""

_live: weakref.WeakSet[McpConnection] = weakref.WeakSet()


class ServerGoneError(ToolError):
    """The MCP server behind a tool has exited or its connection broke (shown to the model)."""


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """How to start one MCP server."""

    name: str
    """The pack name (for messages and logs)."""
    command: str
    """The program; run directly, never through a shell."""
    args: tuple[str, ...] = ()
    """Its arguments."""
    env: Mapping[str, str] = field(default_factory=dict)
    """The complete environment of the child (see ``server_environment``)."""
    cwd: Path | None = None
    """Its working directory (None: inherit)."""
    timeout: float = 30.0
    """Seconds allowed for starting, the handshake and listing tools."""

    def describe(self) -> str:
        """``MCP server 'time' (python -m mcp_server_time)``, for messages."""
        shown = " ".join([self.command, *self.args])
        if len(shown) > 80:
            shown = shown[:77] + "..."
        return f"MCP server {self.name!r} ({shown})"


def server_environment(
    env: Mapping[str, str] | Sequence[str], environ: Mapping[str, str] | None = None
) -> tuple[dict[str, str], list[str]]:
    """The environment an MCP server gets: the SDK's minimal default set plus ``env``.

    Args:
        env: Values to set, or names of variables to copy from ``environ``.
        environ: The host environment (``os.environ`` by default).

    Returns:
        The environment, and the names in ``env`` that ``environ`` does not define.
    """
    from mcp.client.stdio import get_default_environment

    source = os.environ if environ is None else environ
    out = dict(get_default_environment())
    missing: list[str] = []
    if isinstance(env, Mapping):
        out.update({str(k): str(v) for k, v in env.items()})
    else:
        for name in env:
            if name in source:
                out[name] = source[name]
            else:
                missing.append(name)
    return out, missing


@asynccontextmanager
async def _stdio(params: StdioServerParameters, errlog: TextIO) -> AsyncIterator[Any]:
    """``stdio_client``, closing our copy of the stderr pipe once the child holds its own."""
    from mcp.client.stdio import stdio_client

    try:
        async with stdio_client(params, errlog=errlog) as streams:
            errlog.close()
            yield streams
    finally:
        errlog.close()


def _leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside ``exc``."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


class McpConnection:
    """A started MCP server and the session that talks to it.

    ``start()`` blocks until the tools are listed (or raises ``PackError``); ``call_tool`` may
    be awaited from any event loop; ``close()`` shuts the server down and joins the thread.
    """

    def __init__(self, spec: ServerSpec, on_lost: Callable[[str], None] | None = None) -> None:
        self.spec = spec
        """How the server is started."""
        self.on_lost = on_lost
        """Called once (in the connection's thread) when the server is found to be gone."""
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL)
        """The last lines the server wrote to stderr."""
        self.lost_reason: str | None = None
        """Why the connection is gone, once it is."""
        self.server_name: str | None = None
        """The name the server reports (``serverInfo``), once started."""
        self.instructions: str | None = None
        """The server's instructions, if it gives any."""
        self._ready: concurrent.futures.Future[list[mcp_types.Tool]] = concurrent.futures.Future()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._client: Client | None = None
        self._closing = False
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stderr_thread: threading.Thread | None = None
        self._main_task: asyncio.Task[None] | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        """Whether the server is started and not known to be gone or closed."""
        return self._client is not None and self.lost_reason is None and not self._closing

    def start(self) -> list[mcp_types.Tool]:
        """Start the server, complete the handshake and list its tools (all pages).

        Raises:
            PackError: The command cannot be run, the server exits or breaks the protocol
                during startup, or it does not answer within ``spec.timeout``.
        """
        spec = self.spec
        if spec.cwd is not None and not spec.cwd.is_dir():
            raise PackError(
                f"{spec.describe()}: working directory {str(spec.cwd)!r} does not exist"
            )
        read_fd, write_fd = os.pipe()
        errlog = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._stderr_thread = threading.Thread(
            target=self._read_stderr,
            args=(read_fd,),
            name=f"toolpacks-mcp-stderr:{spec.name}",
            daemon=True,
        )
        self._stderr_thread.start()
        self._thread = threading.Thread(
            target=self._run, args=(errlog,), name=f"toolpacks-mcp:{spec.name}", daemon=True
        )
        _live.add(self)
        self._thread.start()
        try:
            # The deadline is enforced inside the thread; this wait only guards against a hang.
            return self._ready.result(spec.timeout + _SHUTDOWN_SECONDS)
        except concurrent.futures.TimeoutError:
            self._cancel()
            _live.discard(self)
            raise PackError(self._timeout_message()) from None
        except Exception as exc:
            _live.discard(self)
            raise PackError(self._start_message(exc)) from None

    def close(self, timeout: float = _SHUTDOWN_SECONDS) -> None:
        """Stop the server (close its stdin, then terminate it if needed); idempotent."""
        with self._lock:
            self._closing = True
        self._signal_stop()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive():
                logger.warning("%s did not shut down within %g s", self.spec.describe(), timeout)
        _live.discard(self)

    def _signal_stop(self) -> None:
        loop, stop = self._loop, self._stop
        if loop is None or stop is None:
            return
        with suppress(RuntimeError):  # the loop has already closed
            loop.call_soon_threadsafe(stop.set)

    def _cancel(self) -> None:
        loop, task = self._loop, self._main_task
        if loop is not None and task is not None:
            with suppress(RuntimeError):
                loop.call_soon_threadsafe(task.cancel)
        if self._thread is not None:
            self._thread.join(_SHUTDOWN_SECONDS)

    def _run(self, errlog: TextIO) -> None:
        try:
            asyncio.run(self._main(errlog))
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            else:
                logger.debug("%s: session ended with %r", self.spec.describe(), exc)
        finally:
            errlog.close()

    async def _main(self, errlog: TextIO) -> None:
        import anyio
        from mcp import Client, Implementation, StdioServerParameters

        from toolpacks._version import __version__

        self._loop = asyncio.get_running_loop()
        self._main_task = asyncio.current_task()
        self._stop = asyncio.Event()
        spec = self.spec
        params = StdioServerParameters(
            command=spec.command, args=list(spec.args), env=dict(spec.env), cwd=spec.cwd
        )
        transport: Transport = _stdio(params, errlog)
        client = Client(
            transport,
            cache=None,
            client_info=Implementation(name="toolpacks", version=__version__),
        )
        with anyio.CancelScope() as scope:
            scope.deadline = anyio.current_time() + spec.timeout
            try:
                async with client:
                    tools = await self._list_tools(client)
                    scope.deadline = math.inf
                    self._client = client
                    info = client.server_info
                    self.server_name = info.name if info is not None else None
                    self.instructions = client.instructions
                    self._ready.set_result(tools)
                    await self._stop.wait()
            except Exception:
                if scope.cancel_called and not self._ready.done():
                    raise TimeoutError from None
                raise
        if scope.cancelled_caught and not self._ready.done():
            self._ready.set_exception(TimeoutError())

    async def _list_tools(self, client: Client) -> list[mcp_types.Tool]:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None or cursor in seen:
                break
            seen.add(cursor)
        return tools

    # -- calls --------------------------------------------------------------------------------

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call ``name`` on the server, from any event loop.

        Raises:
            ServerGoneError: The server has exited, the connection broke, or it was closed.
            mcp.MCPError: The server answered with a protocol error.
        """
        loop = self._loop
        if not self.alive or loop is None:
            raise ServerGoneError(self._gone_message())
        call = self._call(name, arguments)
        try:
            future = asyncio.run_coroutine_threadsafe(call, loop)
        except RuntimeError:  # the connection's loop has closed
            call.close()
            raise ServerGoneError(self._gone_message()) from None
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if future.cancelled() and task is not None and not task.cancelling():
                # Cancelled by the connection's shutdown, not by our caller.
                raise ServerGoneError(self._gone_message()) from None
            raise

    async def _call(self, name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        import anyio
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        client = self._client
        if client is None:
            raise ServerGoneError(self._gone_message())
        try:
            return await client.call_tool(name, arguments)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._lost("its connection closed")
                raise ServerGoneError(self._gone_message()) from None
            raise
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError):
            self._lost("its connection broke")
            raise ServerGoneError(self._gone_message()) from None

    # -- failure detection --------------------------------------------------------------------

    def _read_stderr(self, fd: int) -> None:
        with os.fdopen(fd, "rb") as stream:
            for raw in stream:
                line = raw[:_MAX_LINE].decode("utf-8", "replace").rstrip()
                self.stderr_tail.append(line)
                logger.debug("[%s] %s", self.spec.name, line)
        # End of file: every holder of the pipe (the server and its children) has exited,
        # or the server closed its stderr. A ping tells the two apart.
        loop = self._loop
        if self._closing or loop is None or loop.is_closed() or not self._ready.done():
            return
        check = self._check_alive()
        try:
            asyncio.run_coroutine_threadsafe(check, loop)
        except RuntimeError:  # the loop closed meanwhile
            check.close()

    async def _check_alive(self) -> None:
        """After stderr closed: a request only a closed connection fails means "gone"."""
        import anyio
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        client = self._client
        if client is None or self._closing or self.lost_reason is not None:
            return
        try:
            with anyio.fail_after(_LIVENESS_SECONDS):
                # tools/list exists in every protocol era (ping does not, after 2026-07-28).
                await client.list_tools()
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._lost("the server process exited")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError):
            self._lost("the server process exited")
        except Exception:
            logger.debug("%s: liveness check inconclusive", self.spec.describe(), exc_info=True)

    def _lost(self, reason: str) -> None:
        """Record that the server is gone and let the thread shut the session down."""
        if self.lost_reason is not None or self._closing:
            return
        self.lost_reason = reason
        tail = self._tail()
        logger.warning("%s is gone: %s%s", self.spec.describe(), reason, tail)
        if self.on_lost is not None:
            try:
                self.on_lost(reason)
            except Exception:
                logger.exception("on_lost callback of %s failed", self.spec.describe())
        if self._stop is not None:
            self._stop.set()

    # -- messages -----------------------------------------------------------------------------

    def _tail(self, lines: int = 5) -> str:
        kept = [line for line in self.stderr_tail if line.strip()][-lines:]
        if not kept:
            return ""
        return "; its last stderr output:\n  " + "\n  ".join(kept)

    def _gone_message(self) -> str:
        reason = self.lost_reason or ("it was shut down" if self._closing else "it is not running")
        return (
            f"The MCP server '{self.spec.name}' is no longer available ({reason}); its tools "
            "cannot be called until the host restarts it."
        )

    def _timeout_message(self) -> str:
        return (
            f"{self.spec.describe()} did not complete the MCP handshake and tool listing within "
            f"{self.spec.timeout:g} s (raise `timeout` in its configuration if it is just slow)"
            f"{self._tail()}"
        )

    def _start_message(self, exc: BaseException) -> str:
        leaf = _leaf(exc)
        spec = self.spec
        if isinstance(leaf, TimeoutError):
            return self._timeout_message()
        if isinstance(leaf, FileNotFoundError):
            return (
                f"{spec.describe()} could not be started: command {spec.command!r} was not found "
                "(is it installed, and on the PATH given to the server?)"
            )
        if isinstance(leaf, PermissionError):
            return f"{spec.describe()} could not be started: {spec.command!r} is not executable"
        if isinstance(leaf, OSError):
            return f"{spec.describe()} could not be started: {leaf.strerror or leaf}"
        self._wait_for_stderr()
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        if isinstance(leaf, MCPError) and leaf.code == CONNECTION_CLOSED:
            return f"{spec.describe()} exited during startup{self._tail()}"
        detail = f"{type(leaf).__qualname__}: {leaf}" if str(leaf) else type(leaf).__qualname__
        return f"{spec.describe()} failed during startup ({detail}){self._tail()}"

    def _wait_for_stderr(self) -> None:
        if self._thread is not None:
            self._thread.join(_SHUTDOWN_SECONDS)
        if self._stderr_thread is not None:
            self._stderr_thread.join(1.0)


@atexit.register
def _close_all() -> None:
    """Stop servers still running at interpreter exit (no stray processes)."""
    for connection in list(_live):
        connection.close(timeout=5.0)
