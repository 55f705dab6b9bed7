"""One connection to a remote MCP server, kept alive across crashes and tool-list changes.

The official MCP client is asynchronous (anyio) while ``Host`` is synchronous, and a
connection must outlive any single caller's event loop. So each server gets a thread running
an event loop of its own, on which every session with the server lives. Callers on any event
loop reach it with ``asyncio.run_coroutine_threadsafe`` + ``asyncio.wrap_future``; cancelling
the caller cancels the remote call.

When the server is found gone (its process exited, its connection broke), the connection
records why and when it may start again: 0.5 s after the first failure, then 1 s, 2 s ... up
to 30 s; a call the server answers resets the delay. The next call after that time starts a
new session (a new process, or a new HTTP connection) before it is sent; a call before it is
an error saying when. A call is never sent twice. Tool-list changes are ``_watch``'s,
requests for input during a call ``_approval``'s.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import concurrent.futures
import logging
import math
import threading
import time
import weakref
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from toolpacks.core._credentials import relayed_meta
from toolpacks.exceptions import PackError, ToolError
from toolpacks.packs.mcp._approval import Elicit, ElicitRouter
from toolpacks.packs.mcp._spec import ServerSpec
from toolpacks.packs.mcp._transport import (
    HttpStatus,
    StderrPipe,
    leaf,
    open_transport,
    start_failure,
    timeout_message,
)
from toolpacks.packs.mcp._watch import ToolWatch

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client

__all__ = ["McpConnection", "ServerGoneError", "ServerSpec", "restart_delay"]

logger = logging.getLogger("toolpacks.mcp")

_MAX_PAGES = 100
"""tools/list pages read at most (a paginator that never ends cannot hang a start)."""
_SHUTDOWN_SECONDS = 10.0
"""How long ``close`` waits for the SDK's shutdown (stdin close, grace, SIGTERM, SIGKILL)."""
RESTART_DELAY = 0.5
"""Seconds after a first failure before the server may be started again."""
RESTART_DELAY_MAX = 30.0
"""The longest wait between restarts (the delay doubles with each failure up to this)."""

_live: weakref.WeakSet[McpConnection] = weakref.WeakSet()


def _now() -> float:
    """The clock restarts are scheduled by (monotonic; replaced in tests)."""
    return time.monotonic()


def restart_delay(failures: int) -> float:
    """Seconds to wait before starting again after ``failures`` failures in a row."""
    return float(min(RESTART_DELAY_MAX, RESTART_DELAY * 2.0 ** max(0, failures - 1)))


class ServerGoneError(ToolError):
    """The MCP server behind a tool is not running or its connection broke (shown to the model)."""


class McpConnection:
    """A started MCP server and the session that talks to it.

    ``start()`` blocks until the tools are listed (or raises ``PackError``); ``call_tool`` may
    be awaited from any event loop; ``close()`` shuts the server down and joins the thread.

    Args:
        spec: How to reach the server.
        on_lost: Called with the reason when the server is found gone (connection thread).
        on_tools: Called with the new tool list after a list change or a restart.
        elicit: Answers elicitation requests (None: every request is declined).
        may_restart: Asked before a restart; a text refuses it and says why.
        scrub: Masks the server's secrets in what it writes that is logged or kept.
    """

    def __init__(
        self,
        spec: ServerSpec,
        on_lost: Callable[[str], None] | None = None,
        *,
        on_tools: Callable[[list[mcp_types.Tool]], None] | None = None,
        elicit: Elicit | None = None,
        may_restart: Callable[[], str | None] | None = None,
        scrub: Callable[[str], str] | None = None,
    ) -> None:
        self.spec = spec
        """How the server is reached."""
        self.on_lost = on_lost
        self.on_tools = on_tools
        self.may_restart = may_restart
        self.elicitation = ElicitRouter(spec.name, elicit)
        """Routes the server's requests for input to the calls they belong to."""
        self.watch = ToolWatch(self)
        """Lists the tools again when the server says they changed."""
        self.scrub, self.relays_credentials = scrub, False  # True: the host's isolated child
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        """The last lines the server wrote to stderr (stdio servers), secrets masked."""
        self.stderr: StderrPipe | None = None
        """The current session's stderr pipe (stdio servers)."""
        self.lost_reason: str | None = None
        """Why the server is not available, while it is not."""
        self.server_name: str | None = None
        """The name the server reports (``serverInfo``), once started."""
        self.instructions: str | None = None
        """The server's instructions, if it gives any."""
        self.tools: dict[str, mcp_types.Tool] = {}
        """The server's current tool definitions by its own names."""
        self.failures = 0
        """Failures (crashes, failed restarts) since the last call the server answered."""
        self.retry_at: float | None = None
        """When (``_now()``) the next restart may happen, after a failure."""
        self.generation = 0
        """Sessions started so far; signals from an older session are ignored."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._session_task: asyncio.Task[None] | None = None
        self._restarting: asyncio.Future[None] | None = None
        self._closing = False
        self._lock = threading.Lock()

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        """Whether a session is up and not known to be gone or closed."""
        return self._client is not None and self.lost_reason is None and not self._closing

    @property
    def client(self) -> Client | None:
        """The current session's client (None while there is none)."""
        return self._client

    def start(self) -> list[mcp_types.Tool]:
        """Start the server (or connect), complete the handshake and list its tools.

        Raises:
            PackError: The command cannot be run, the server cannot be reached, exits or
                breaks the protocol during startup, or does not answer within the timeout.
        """
        spec = self.spec
        if spec.cwd is not None and not spec.cwd.is_dir():
            raise PackError(
                f"{spec.describe()}: working directory {str(spec.cwd)!r} does not exist"
            )
        loop = self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._run_loop, args=(loop,), name=f"toolpacks-mcp:{spec.name}", daemon=True
        )
        _live.add(self)
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._open(), loop)
        try:
            # The deadline is enforced inside the loop; this wait only guards against a hang.
            return future.result(spec.timeout + _SHUTDOWN_SECONDS)
        except concurrent.futures.TimeoutError:
            future.cancel()
            self.close()
            raise PackError(timeout_message(spec, self._tail())) from None
        except BaseException:
            self.close()
            raise

    def close(self, timeout: float = _SHUTDOWN_SECONDS) -> None:
        """Stop the server (close its stdin, then terminate it if needed); idempotent."""
        with self._lock:
            self._closing = True
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread is not threading.current_thread():
            if thread.is_alive() and not loop.is_closed():
                shutdown = self._shutdown()
                try:
                    asyncio.run_coroutine_threadsafe(shutdown, loop).result(timeout)
                except RuntimeError:  # the loop closed meanwhile
                    shutdown.close()
                except concurrent.futures.TimeoutError:
                    pass
                with suppress(RuntimeError):
                    loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
            if thread.is_alive():
                logger.warning("%s did not shut down within %g s", self.spec.describe(), timeout)
        _live.discard(self)

    def _run_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            with suppress(Exception):
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()

    async def _shutdown(self) -> None:
        if self._stop is not None:
            self._stop.set()
        task = self._session_task
        if task is not None and not task.done():
            with suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(task), _SHUTDOWN_SECONDS)

    async def _open(self) -> list[mcp_types.Tool]:
        """Start one session and wait until its tools are listed (connection loop)."""
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[list[mcp_types.Tool]] = loop.create_future()
        self.generation += 1
        self._stop = stop = asyncio.Event()
        self._session_task = loop.create_task(self._session(self.generation, ready, stop))
        return await ready

    async def _session(
        self, generation: int, ready: asyncio.Future[list[mcp_types.Tool]], stop: asyncio.Event
    ) -> None:
        import anyio
        from mcp import Client, Implementation

        from toolpacks._version import __version__

        spec = self.spec
        status = HttpStatus()
        stderr = None
        up = False
        ended = "its session ended"
        try:
            if spec.url is None:
                stderr = self.stderr = StderrPipe(
                    spec.name,
                    self.stderr_tail,
                    lambda: self._stderr_eof(generation),
                    scrub=self.scrub,
                )
            client = Client(
                open_transport(spec, stderr, status),
                cache=None,
                client_info=Implementation(name="toolpacks", version=__version__),
                message_handler=lambda message: self.watch.on_message(generation, message),
                elicitation_callback=self.elicitation,
            )
            with anyio.CancelScope() as scope:
                scope.deadline = anyio.current_time() + spec.timeout
                try:
                    async with client:
                        tools = await self.list_tools(client)
                        scope.deadline = math.inf
                        self._publish(client, tools)
                        ready.set_result(tools)
                        up = True
                        async with anyio.create_task_group() as group:
                            group.start_soon(self.watch.listen, client, generation)
                            await stop.wait()
                            group.cancel_scope.cancel()
                except Exception as exc:
                    if scope.cancel_called and not ready.done():
                        raise TimeoutError from None
                    ended = f"its connection failed ({type(leaf(exc)).__qualname__})"
                    raise
            if scope.cancelled_caught and not ready.done():
                raise TimeoutError
        except Exception as exc:
            if not ready.done():
                if stderr is not None:
                    stderr.thread.join(1.0)  # its last lines say why it failed
                ready.set_exception(
                    PackError(start_failure(spec, exc, self._tail(), status.status))
                )
            else:
                logger.debug("%s: session ended with %r", spec.describe(), exc)
        finally:
            if stderr is not None:
                stderr.writer.close()
            if not ready.done():
                ready.set_exception(PackError(f"{spec.describe()} was closed while starting"))
            if up and not stop.is_set():
                self.lost(generation, ended)

    def _publish(self, client: Client, tools: list[mcp_types.Tool]) -> None:
        info = client.server_info
        self.server_name = info.name if info is not None else None
        self.instructions = client.instructions
        self.tools = {t.name: t for t in tools}
        with self._lock:
            self._client = client
            self.lost_reason = None

    async def list_tools(self, client: Client) -> list[mcp_types.Tool]:
        """Every tool the server lists, following ``nextCursor`` (bounded)."""
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

    _list_tools = list_tools

    # -- calls --------------------------------------------------------------------------------

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        tag: Any = None,
        check: Callable[[], None] | None = None,
    ) -> mcp_types.CallToolResult:
        """Call ``name`` on the server, from any event loop; start it again first if needed.

        Args:
            name: The server's name of the tool.
            arguments: Its arguments.
            tag: Handed to ``elicit`` if the server asks for input during this call.
            check: Run once the session is up, just before the call is sent (it sees the
                tool list of a server that was just started again); raising stops the call.

        Raises:
            ServerGoneError: The server is not available (and when it will be tried again),
                its restart failed, or the connection broke during the call.
            mcp.MCPError: The server answered with a protocol error.
        """
        loop = self._loop
        if self._closing or loop is None:
            raise ServerGoneError(self._gone_message())
        call = self._call(name, arguments, tag, asyncio.get_running_loop(), check)
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

    async def _call(
        self,
        name: str,
        arguments: dict[str, Any],
        tag: Any,
        caller: asyncio.AbstractEventLoop,
        check: Callable[[], None] | None,
    ) -> mcp_types.CallToolResult:
        import anyio
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        await self._ensure_session()
        if check is not None:
            check()
        client, generation = self._client, self.generation
        if client is None:
            raise ServerGoneError(self._gone_message())
        try:
            with self.elicitation.calling(tag, caller):
                relay = relayed_meta(tag, self.relays_credentials)  # our isolated child's only
                result = await client.call_tool(name, arguments, meta=relay)  # type: ignore[arg-type]
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self.lost(generation, "its connection closed")
                raise ServerGoneError(self._gone_message()) from None
            raise
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError):
            self.lost(generation, "its connection broke")
            raise ServerGoneError(self._gone_message()) from None
        with self._lock:
            self.failures = 0
            self.retry_at = None
        return result

    async def _ensure_session(self) -> None:
        """Start a new session if the server is gone and its restart delay has passed."""
        while not self.alive:
            if self._closing:
                raise ServerGoneError(self._gone_message())
            if self._restarting is not None:  # another call is starting it
                with suppress(BaseException):
                    await asyncio.shield(self._restarting)
                continue
            if self.retry_at is not None and _now() < self.retry_at:
                raise ServerGoneError(self._gone_message())
            refused = self.may_restart() if self.may_restart is not None else None
            if refused:
                self._failed_restart(refused)
                raise ServerGoneError(self._gone_message())
            self._restarting = asyncio.get_running_loop().create_future()
            try:
                logger.info("starting %s again (%s)", self.spec.describe(), self.lost_reason)
                tools = await self._open()
            except PackError as exc:
                self._failed_restart(f"starting it again failed: {exc}")
                raise ServerGoneError(self._gone_message()) from None
            finally:
                self._restarting.set_result(None)
                self._restarting = None
            self.tools_changed(tools)

    def _failed_restart(self, reason: str) -> None:
        with self._lock:
            self.lost_reason = reason
            self.failures += 1
            self.retry_at = _now() + restart_delay(self.failures)
        self._notify_lost(reason)

    def tools_changed(self, tools: list[mcp_types.Tool]) -> None:
        """The server's tool list is now ``tools``: keep it, and tell ``on_tools``."""
        self.tools = {t.name: t for t in tools}
        if self.on_tools is not None:
            try:
                self.on_tools(tools)
            except Exception:
                logger.exception("on_tools callback of %s failed", self.spec.describe())

    # -- failure detection --------------------------------------------------------------------

    def _stderr_eof(self, generation: int) -> None:
        """The stderr pipe closed: the server (and its children) exited, or closed stderr."""
        loop = self._loop
        if self._closing or loop is None or generation != self.generation or not self.alive:
            return
        check = self.watch.check_alive(generation)
        try:
            asyncio.run_coroutine_threadsafe(check, loop)
        except RuntimeError:  # the loop closed meanwhile
            check.close()

    def lost(self, generation: int, reason: str) -> None:
        """Record that the session ``generation`` is gone and let it shut down."""
        with self._lock:
            if self._closing or generation != self.generation or self.lost_reason is not None:
                return
            self.lost_reason = reason
            self._client = None
            self.failures += 1
            self.retry_at = _now() + restart_delay(self.failures)
        logger.warning("%s is gone: %s%s", self.spec.describe(), reason, self._tail())
        self._notify_lost(reason)
        if self._stop is not None:
            self._stop.set()

    def _notify_lost(self, reason: str) -> None:
        if self.on_lost is not None:
            try:
                self.on_lost(reason)
            except Exception:
                logger.exception("on_lost callback of %s failed", self.spec.describe())

    def _tail(self, lines: int = 5) -> str:
        kept = [line for line in self.stderr_tail if line.strip()][-lines:]
        return "; its last stderr output:\n  " + "\n  ".join(kept) if kept else ""

    def _gone_message(self) -> str:
        name = self.spec.name
        if self._closing:
            return (
                f"The MCP server '{name}' was shut down with its host; its tools cannot be called."
            )
        reason = self.lost_reason or "it is not running"
        wait = max(0.0, (self.retry_at or 0.0) - _now())
        when = f"after {wait:.1f} s" if wait > 0 else "now"
        return (
            f"The MCP server '{name}' is no longer available ({reason}). toolpacks starts it "
            f"again at the next call made {when}; retry then."
        )


@atexit.register
def _close_all() -> None:
    """Stop servers still running at interpreter exit (no stray processes)."""
    for connection in list(_live):
        connection.close(timeout=5.0)
