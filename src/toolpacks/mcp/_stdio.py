"""The stdio transport and lifecycle of ``toolpacks serve``, without the MCP SDK.

Lines are read from stdin (each at most ``MAX_MESSAGE_BYTES``) and decoded by ``_wire``; what
is a JSON-RPC message is answered by the protocol session (``_rpc``), what is not is answered
here. Requests are answered in the order they come, each ``tools/call`` in a task of its own
so calls run side by side; ``notifications/cancelled`` cancels the call it names (which is
then not answered). While serving, fd 0 reads the null device and fd 1 writes to stderr, so a
tool that reads stdin or prints cannot touch the wire, which is served from private
duplicates; both are restored on exit.

The session ends at end of input, or on SIGTERM or SIGINT (handled by the event loop, so no
exception is raised into running code). Then no new request is read; calls in flight get a
grace period (``GRACE_ON_EOF`` or ``GRACE_ON_SIGNAL``, or ``TOOLPACKS_SERVE_GRACE`` seconds)
to be answered; a second signal ends the grace at once. What is still running after it is
cancelled and reported as abandoned in the ``ServeOutcome``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Collection, Coroutine, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from queue import SimpleQueue
from typing import IO, TYPE_CHECKING, Any, ParamSpec, TypeVar

from toolpacks.core.call._threads import busy as pack_threads_busy
from toolpacks.mcp._wire import (
    INTERNAL_ERROR,
    MAX_MESSAGE_BYTES,
    Answer,
    DuplicateAnswer,
    decode,
    encode,
    error_message,
    id_in_use,
    too_large,
)

if TYPE_CHECKING:
    from toolpacks.mcp._rpc import Session as Protocol

__all__ = [
    "GRACE_ENV",
    "GRACE_ON_EOF",
    "GRACE_ON_SIGNAL",
    "ServeOutcome",
    "run_loop",
    "serve_session",
    "signals_routed",
]

logger = logging.getLogger("toolpacks.mcp")
T = TypeVar("T")
P = ParamSpec("P")


@contextlib.contextmanager
def signals_routed(stop: Callable[[signal.Signals], object]) -> Iterator[None]:
    """Route SIGTERM and SIGINT to ``stop(signal)`` in the running loop while in the block.

    Only in the main thread (elsewhere signals cannot be handled and the block runs as is);
    the previous handlers are put back afterwards. Both servers use it: stdio and HTTP.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    loop = asyncio.get_running_loop()
    installed: list[tuple[signal.Signals, Any]] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(sig)
        try:
            loop.add_signal_handler(sig, stop, sig)
        except (NotImplementedError, RuntimeError, ValueError):  # pragma: no cover
            continue
        installed.append((sig, previous))
    try:
        yield
    finally:
        for sig, previous in installed:
            loop.remove_signal_handler(sig)
            with contextlib.suppress(TypeError, ValueError):
                signal.signal(sig, previous)


GRACE_ON_EOF = 2.0
"""Seconds calls in flight get to finish once stdin has closed."""
GRACE_ON_SIGNAL = 10.0
"""Seconds calls in flight get to finish after SIGTERM or SIGINT."""
GRACE_ENV = "TOOLPACKS_SERVE_GRACE"
"""Environment variable that, when set to a number of seconds, replaces both grace periods."""
CLOSE_TIMEOUT = 2.0
"""Seconds the server and the writer get to finish once the grace is over."""
_DISCARD_CHUNK = 1 << 16


@dataclasses.dataclass(frozen=True, slots=True)
class ServeOutcome:
    """How a stdio session ended."""

    reason: str
    """``"end of input"``, or the name of the signal that stopped it."""
    abandoned: tuple[str, ...] = ()
    """What was still running when the grace ran out (tool names, or request methods)."""
    stuck_threads: int = 0
    """Worker threads still running a call when the event loop closed (``run_loop`` only)."""


class _TooLarge:
    """A line longer than ``MAX_MESSAGE_BYTES``, already discarded up to its newline."""


_TOO_LARGE = _TooLarge()


def _grace(default: float) -> float:
    value = os.environ.get(GRACE_ENV, "")
    try:
        return max(0.0, float(value)) if value.strip() else default
    except ValueError:
        logger.warning("%s=%r is not a number of seconds; using %s", GRACE_ENV, value, default)
        return default


# -- the wire: private duplicates of fd 0 and 1 -----------------------------------------------


def _dup_above_std(fd: int) -> int:
    """A close-on-exec duplicate of ``fd`` numbered 3 or above."""
    if sys.platform == "win32":  # pragma: no cover
        duplicate = os.dup(fd)
        if duplicate <= 2:
            os.close(duplicate)
            raise OSError(f"the duplicate of fd {fd} landed on a standard descriptor")
        return duplicate
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


_claim = threading.Lock()


@contextlib.contextmanager
def claim_stdio() -> Iterator[tuple[IO[bytes], IO[bytes]]]:
    """Serve the wire from private duplicates; point fd 0 at the null device, fd 1 at stderr.

    The duplicates are never closed: a reader or writer thread may still block on them after
    the session, and a closed descriptor could be reused under it.

    Raises:
        RuntimeError: Another session of this process is serving stdio.
    """
    if not _claim.acquire(blocking=False):
        raise RuntimeError("another MCP stdio server in this process is already serving")
    try:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        wire_in, wire_out = _dup_above_std(0), _dup_above_std(1)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)
        try:
            yield os.fdopen(wire_in, "rb", closefd=False), os.fdopen(wire_out, "wb", closefd=False)
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
            os.dup2(wire_out, 1)
            os.dup2(wire_in, 0)
    finally:
        _claim.release()


def _read_line(stream: IO[bytes]) -> bytes | _TooLarge | None:
    """The next line (``None`` at end of input); a line over the cap is skipped."""
    line = stream.readline(MAX_MESSAGE_BYTES + 1)
    if not line:
        return None
    if len(line) <= MAX_MESSAGE_BYTES or line.endswith(b"\n"):
        return line
    while (rest := stream.readline(_DISCARD_CHUNK)) and not rest.endswith(b"\n"):
        pass
    return _TOO_LARGE


def _write(stream: IO[bytes], *parts: bytes) -> None:
    for part in parts:
        stream.write(part)
    stream.flush()


class _Worker:
    """A daemon thread running blocking calls in order; a caller that gives up leaves it be."""

    def __init__(self, name: str) -> None:
        self._jobs: SimpleQueue[tuple[Callable[[], Any], asyncio.Future[Any]] | None]
        self._jobs = SimpleQueue()
        self._loop = asyncio.get_running_loop()
        threading.Thread(target=self._main, name=name, daemon=True).start()

    async def run(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` in the thread and return its result."""
        future: asyncio.Future[T] = self._loop.create_future()
        self._jobs.put((fn, future))
        return await future

    def close(self) -> None:
        """Let the thread end once its current call returns."""
        self._jobs.put(None)

    def _main(self) -> None:
        while (job := self._jobs.get()) is not None:
            fn, future = job
            try:
                outcome: tuple[bool, Any] = (True, fn())
            except BaseException as exc:
                outcome = (False, exc)
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                self._loop.call_soon_threadsafe(_settle, future, *outcome)


def _settle(future: asyncio.Future[Any], ok: bool, payload: Any) -> None:
    if future.done():
        return
    if ok:
        future.set_result(payload)
    else:
        future.set_exception(payload)


# -- the session ------------------------------------------------------------------------------


class _Session:
    """One client over stdio: reading, writing, the requests not yet answered, and stopping."""

    def __init__(
        self,
        stdin: IO[bytes],
        stdout: IO[bytes],
        protocol: Protocol,
        answer_duplicate: DuplicateAnswer,
        running: Callable[[], Collection[str]],
    ) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self._protocol = protocol
        protocol.attach(self._send)  # tool calls notify and ask the client through it
        self._answer_duplicate = answer_duplicate
        self._running = running
        self._reader = _Worker("toolpacks-serve-stdin")
        self._writer = _Worker("toolpacks-serve-stdout")
        self._pending: dict[asyncio.Future[None], str] = {}  # each call's task: its name
        self._calls: dict[str | int, asyncio.Task[None]] = {}
        self._idle = asyncio.Event()
        self._idle.set()
        self._stopped = asyncio.Event()
        self._hurry = asyncio.Event()
        self._reason = ""
        self._broken = False

    # -- stopping

    def stop(self, reason: str) -> None:
        """Stop reading (first call), or end the grace at once (any later call)."""
        if not self._stopped.is_set():
            logger.info("toolpacks serve: %s; finishing calls in flight", reason)
            self._reason = reason
            self._stopped.set()
        else:
            self._hurry.set()

    def signals_handled(self) -> contextlib.AbstractContextManager[None]:
        """Route SIGTERM and SIGINT to ``stop`` while serving (main thread only)."""
        return signals_routed(lambda sig: self.stop(sig.name))

    # -- requests in flight

    def _answered(self, call: asyncio.Future[None] | None) -> None:
        if self._pending.pop(call, None) is None:  # type: ignore[arg-type]  # None: no call
            return
        if not self._pending:
            self._idle.set()

    async def _drain(self, grace: float) -> tuple[str, ...]:
        """Wait up to ``grace`` seconds for every request to be answered; what was not."""
        if self._pending:
            waits = {
                asyncio.ensure_future(self._idle.wait()),
                asyncio.ensure_future(self._hurry.wait()),
            }
            try:
                await asyncio.wait(waits, timeout=grace, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiting in waits:
                    waiting.cancel()
        if not self._pending:
            return ()
        return tuple(self._running()) or tuple(self._pending.values())

    # -- reading and writing

    async def _read(self) -> None:
        """Answer each line, or pass it on, until end of input."""
        try:
            while (line := await self._reader.run(lambda: _read_line(self._stdin))) is not None:
                await self._handle(line)
        except OSError as exc:
            logger.info("toolpacks serve: cannot read from the client (%s)", exc)
        self.stop("end of input")

    async def _handle(self, line: bytes | _TooLarge) -> None:
        if isinstance(line, _TooLarge):
            await self._send(too_large())
            return
        decoded = decode(line, self._answer_duplicate)
        if isinstance(decoded, Answer):
            await self._send(decoded.message)
            return
        if decoded is None:
            return
        if "method" in decoded and decoded.get("id") in self._calls:  # ids are unique
            await self._send(id_in_use(decoded["id"]))
            return
        if decoded.get("method") == "notifications/cancelled" and "id" not in decoded:
            self._cancel((decoded.get("params") or {}).get("requestId"))
        reply = self._protocol.reply(decoded, self._tools_changed)
        if reply is None:
            return
        if isinstance(reply, dict | list):
            await self._send(reply)
            return
        request_id = decoded["id"]
        params = decoded.get("params") or {}
        call = self._calls[request_id] = asyncio.ensure_future(self._answer(request_id, reply))
        self._pending[call] = str(params.get("name", decoded["method"]))
        self._idle.clear()

    def _cancel(self, request_id: object) -> None:
        """Cancel the call ``request_id`` names (the client gave up: it is not answered)."""
        if not isinstance(request_id, str | int):
            return
        call = self._calls.get(request_id)
        if call is not None:
            call.cancel()
        self._answered(call)

    async def _answer(
        self, request_id: str | int, reply: Coroutine[Any, Any, dict[str, Any] | None]
    ) -> None:
        call = asyncio.current_task()  # the key of this call in _pending
        try:
            response = await reply
        except asyncio.CancelledError:
            self._answered(call)
            return
        except Exception:  # a fault of the server itself: the client still gets an answer
            logger.exception("toolpacks serve: request %r failed", request_id)
            response = error_message(INTERNAL_ERROR, "Internal server error", request_id)
        finally:
            self._calls.pop(request_id, None)  # the id may be used again once answered
        if response is not None and call in self._pending:
            await self._send(response)
        self._answered(call)

    async def _tools_changed(self) -> None:
        await self._send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})

    async def _send(self, message: dict[str, Any] | list[bytes]) -> None:
        """Write one message: a dict to encode, or its JSON text in parts."""
        if self._broken:
            return
        parts = message if isinstance(message, list) else [encode(message)]
        try:
            await self._writer.run(lambda: _write(self._stdout, *parts, b"\n"))
        except (OSError, ValueError) as exc:  # the client closed its end
            logger.info("toolpacks serve: cannot write to the client (%s)", exc)
            self._broken = True

    # -- the whole session

    async def run(self) -> ServeOutcome:
        """Serve until end of input or a signal, drain, and cancel what is left."""
        reading = asyncio.ensure_future(self._read())
        try:
            await self._stopped.wait()
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reading
            grace = _grace(GRACE_ON_EOF if self._reason == "end of input" else GRACE_ON_SIGNAL)
            abandoned = await self._drain(grace)
            left = list(self._calls.values())
            for call in left:
                call.cancel()
            if left:
                await asyncio.wait(left, timeout=CLOSE_TIMEOUT)
        finally:
            reading.cancel()
            self._reader.close()
            self._writer.close()
        return ServeOutcome(self._reason, abandoned)


async def serve_session(
    protocol: Protocol,
    *,
    answer_duplicate: DuplicateAnswer,
    running: Callable[[], Collection[str]] | None = None,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
    handle_signals: bool = True,
) -> ServeOutcome:
    """Serve one MCP client over stdio (or the given binary streams) until it is done.

    Args:
        protocol: Answers each message (``_rpc.Session``).
        answer_duplicate: Answers a ``tools/call`` whose arguments repeat a key.
        running: The names of the tool calls running now (for the outcome's ``abandoned``).
        stdin: Read requests from this stream instead of claiming fd 0 and 1.
        stdout: Write responses to this stream (with ``stdin``).
        handle_signals: Stop on SIGTERM and SIGINT (in the main thread only).

    Returns:
        Why the session ended and which calls were abandoned.
    """
    with contextlib.ExitStack() as stack:
        if stdin is None or stdout is None:
            stdin, stdout = stack.enter_context(claim_stdio())
        session = _Session(stdin, stdout, protocol, answer_duplicate, running or tuple)
        if handle_signals:
            stack.enter_context(session.signals_handled())
        return await session.run()
    raise AssertionError("unreachable")  # pragma: no cover


# -- a loop that does not wait for stuck threads ----------------------------------------------


class _CountingExecutor(ThreadPoolExecutor):
    """The serving loop's default executor; it counts the calls running in its threads."""

    def __init__(self) -> None:
        super().__init__(thread_name_prefix="toolpacks-serve")
        self.busy = 0
        self._count_lock = threading.Lock()

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Schedule ``fn(*args, **kwargs)``, counted while it runs."""

        def counted() -> T:
            with self._count_lock:
                self.busy += 1
            try:
                return fn(*args, **kwargs)
            finally:
                with self._count_lock:
                    self.busy -= 1

        return super().submit(counted)


def run_loop(main: Callable[[], Coroutine[Any, Any, ServeOutcome]]) -> ServeOutcome:
    """Run ``main()`` in a new event loop and close it without waiting for stuck threads.

    ``asyncio.run`` waits for every call in the default executor to return; a sync tool stuck
    forever would keep it waiting forever. Here such calls are left running and counted in
    the outcome's ``stuck_threads``, with the sync tool calls still running in their packs'
    pools (``core.call._threads``).
    """
    loop = asyncio.new_event_loop()
    executor = _CountingExecutor()
    loop.set_default_executor(executor)
    try:
        outcome = loop.run_until_complete(main())
    finally:
        try:
            _cancel_tasks(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            executor.shutdown(wait=False, cancel_futures=True)
            loop.close()
    stuck = executor.busy + pack_threads_busy()  # sync tools run in their packs' pools
    if stuck:
        outcome = dataclasses.replace(outcome, stuck_threads=stuck)
    return outcome


def _cancel_tasks(loop: asyncio.AbstractEventLoop) -> None:
    tasks = asyncio.all_tasks(loop)
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
