"""Running a call from synchronous code: ``Tool.invoke_sync`` and ``Toolset.call_sync``.

Every synchronous call runs its coroutine on one private event loop, in one daemon thread
started by the first such call (and started again in a child process after ``fork``). The
calling thread blocks until the call is over. This works the same from plain code, from a
worker thread and from synchronous code running inside an event loop (a framework's sync
``invoke`` called from an ``async def``), where ``asyncio.run`` would refuse to start. One loop
for every synchronous caller also means a tool's ``lock`` serializes them all (locks are per
event loop), and the worker threads that run sync tools are reused rather than made anew.

The coroutine runs in a copy of the caller's ``contextvars`` context. What the call raises is
raised to the caller (a hook's exception, ``KeyboardInterrupt`` included; only the loop thread
is spared it). If the waiting thread is interrupted (Ctrl-C), the call is cancelled and the
interruption propagates. A call made on the loop thread itself (an async tool or hook that
calls ``call_sync``) cannot wait for that loop, so it runs on a loop of its own in a new
thread instead.

**Calls run on the calling thread.** A call with no async needs runs entirely on the thread
that made it (``runs_here``, then ``run_here``): no loop, no thread hop, a few microseconds
instead of a few hundred. That is a call of a plain sync tool (not a generator) with no
``timeout``, no ``lock``, no hooks (the tool's or the host's), and, through a toolset, no
``authorize`` hook, no approval, no tracer, not a placeholder still to import. Its coroutine
is driven here without an event loop and never suspends: every step of it is synchronous, and
the tool's function is called in place of being sent to its pack's pool (``_run.here``).

Why that is fair to everyone: a synchronous caller blocks its own thread until the call is
over whatever happens, so running the tool on that thread costs no other caller anything. The
pack pools (``_threads``) bound the threads a pack's tools take from a *shared* event loop;
an inline call takes no thread from anyone (it brings its own) and none from the pool, so the
pack's bound still holds for every call made through a loop. Calls still count in
``_threads.busy()``.

How the rest still holds:

- a tool with a ``timeout`` never runs here: it runs in a thread of its own under the loop's
  timer, so the caller gets the timeout result on time even when the function never returns
  (only a separate thread can be abandoned);
- a ``lock`` is an ``asyncio`` lock shared by every caller of the loop thread, and hooks,
  ``authorize`` hooks, approval handlers and tracers may await: each of these sends the call to
  the loop thread as before;
- Ctrl-C: a SIGINT handler runs on the main thread only, so an inline call on another thread
  never sees one. On the main thread the call runs with a handler that notes a real SIGINT
  before passing it on: the interruption reaches the caller as ``KeyboardInterrupt`` even when
  it struck inside the tool's function (whose exceptions otherwise become error results),
  while a ``KeyboardInterrupt`` the tool raised itself stays its failure, as on the loop.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import signal
else:
    try:  # the C module under ``signal``: its calls without the enum wrapping (2-4 us each)
        import _signal as signal
    except ImportError:  # pragma: no cover - an interpreter without it
        import signal

from toolpacks.core._hooks import EMPTY_HOOKS
from toolpacks.core.call._run import here

if TYPE_CHECKING:
    import asyncio
    from types import FrameType

    from toolpacks.core.call._options import CallOptions
    from toolpacks.core.define._definition import ToolDefinition

__all__ = ["run_here", "run_sync", "runs_here"]

T = TypeVar("T")


class _Call:
    """One synchronous call in flight: the task running it and its outcome.

    ``done`` is a lock held until the call is over (cheaper to make than an ``Event``); the
    waiting thread blocks acquiring it (see ``_wait``).
    """

    __slots__ = ("done", "error", "task", "value")

    def __init__(self) -> None:
        self.done = threading.Lock()
        self.done.acquire()
        self.task: asyncio.Task[Any] | None = None
        self.value: Any = None
        self.error: BaseException | None = None


_POLL_SECONDS = 0.1
"""How often a waiting thread wakes up to run pending signal handlers."""


def _wait(lock: threading.Lock) -> None:
    """Acquire ``lock``, waking up now and then so that Ctrl-C is never lost.

    An untimed wait is interrupted only by a signal delivered to this very thread. The
    kernel may deliver Ctrl-C to another thread (one that does not block it, when this one
    does or already has a signal pending), and Windows never interrupts a lock wait: the
    handler's ``KeyboardInterrupt`` would then wait for the call to end. Between timed
    waits, Python runs pending handlers on the main thread.
    """
    while not lock.acquire(timeout=_POLL_SECONDS):
        pass


async def _capture(coro: Coroutine[Any, Any, Any], call: _Call) -> None:
    """Await ``coro`` and keep its outcome in ``call``.

    An exception a task raises is kept rather than raised, so that a ``KeyboardInterrupt`` or
    ``SystemExit`` from a hook reaches the caller instead of stopping the shared loop.
    Cancellation is kept too (as ``asyncio.CancelledError``), after the task has settled.
    """
    try:
        call.value = await coro
    except BaseException as exc:
        call.error = exc
    finally:
        call.done.release()


class _LoopThread:
    """The private event loop and the daemon thread that runs it, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pid = 0

    @property
    def thread_id(self) -> int | None:
        """The loop thread's id, or None before it starts."""
        thread = self._thread
        return thread.ident if thread is not None else None

    def loop(self) -> asyncio.AbstractEventLoop:
        """The running loop, started (again) when there is none in this process."""
        loop, thread = self._loop, self._thread
        if (
            loop is not None
            and thread is not None
            and thread.is_alive()
            and self._pid == os.getpid()
        ):
            return loop
        with self._lock:
            if (
                self._loop is None
                or self._thread is None
                or not self._thread.is_alive()
                or self._pid != os.getpid()
            ):
                self._start()
            assert self._loop is not None
            return self._loop

    def _start(self) -> None:
        import asyncio  # imported when a sync call is first made, not with toolpacks

        loop = asyncio.new_event_loop()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_forever()

        thread = threading.Thread(target=run, name="toolpacks:sync-loop", daemon=True)
        self._loop, self._thread, self._pid = loop, thread, os.getpid()
        thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop thread and block until it is over."""
        loop = self.loop()
        call = _Call()
        context = contextvars.copy_context()

        def start() -> None:
            call.task = loop.create_task(_capture(coro, call), context=context)
            # A task cancelled before its first step never awaits ``coro``: close it then.
            call.task.add_done_callback(lambda _: coro.close())

        def cancel() -> None:
            if call.task is not None:
                call.task.cancel()
            else:  # never started: close it (no "never awaited" warning)
                coro.close()

        try:
            loop.call_soon_threadsafe(start)
            _wait(call.done)
        except BaseException:
            # The waiting thread was interrupted (Ctrl-C), maybe before the call started:
            # stop the call (after ``start`` if it was queued), then let the interruption go.
            with contextlib.suppress(RuntimeError):  # the loop may be gone at exit
                loop.call_soon_threadsafe(cancel)
            raise
        if call.error is not None:
            error, call.error = call.error, None  # no reference cycle through the frame
            raise error
        return call.value  # type: ignore[no-any-return]


_runner = _LoopThread()


def _run_in_new_thread(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` with ``asyncio.run`` in a new thread and wait for it."""
    call = _Call()
    context = contextvars.copy_context()

    def target() -> None:
        import asyncio

        context.run(asyncio.run, _capture(coro, call))

    thread = threading.Thread(target=target, name="toolpacks:sync-call", daemon=True)
    thread.start()
    _wait(call.done)
    thread.join()
    if call.error is not None:
        error, call.error = call.error, None
        raise error
    return call.value  # type: ignore[no-any-return]


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code and return its result.

    Safe from plain code, from any thread, and from synchronous code running inside an event
    loop: the coroutine runs on toolpacks' private loop thread while this thread waits.

    Args:
        coro: A coroutine that has not started.

    Returns:
        What the coroutine returns.

    Raises:
        BaseException: Whatever the coroutine raises (``asyncio.CancelledError`` when it was
            cancelled); an interruption of the waiting thread cancels the coroutine and
            propagates.
    """
    if threading.get_ident() == _runner.thread_id:
        return _run_in_new_thread(coro)
    return _runner.run(coro)


def runs_here(tool: ToolDefinition, options: CallOptions | None) -> bool:
    """Whether a synchronous call of ``tool`` may run on the calling thread (``run_here``).

    True for a plain sync function with no timeout, no lock and no hooks (its own or
    ``options``'); a toolset adds its own conditions (no ``authorize`` hook, approval or
    tracer). See the module's docstring for why, and how timeouts and Ctrl-C still hold.
    """
    if tool.deferred or tool.kind != "function":
        return False
    if tool.timeout is not None or tool.lock is not None:
        return False
    hooks = tool.hooks
    if hooks.before or hooks.after or hooks.error or hooks.on_yield:
        return False
    return options is None or options.hooks is EMPTY_HOOKS or not options.hooks


class _Interrupts:
    """A SIGINT that arrives while a call runs on the main thread, noted as it passes.

    The handler in place is called as before; what it raises (``KeyboardInterrupt`` for
    Python's own) is kept, so that it reaches the caller even when the tool's function was
    running, where an exception would otherwise become the call's error result.
    """

    __slots__ = ("previous", "raised")

    def __init__(self, previous: Any) -> None:
        self.previous = previous
        self.raised: BaseException | None = None

    def __call__(self, signum: int, frame: FrameType | None) -> Any:
        try:
            return self.previous(signum, frame)
        except BaseException as exc:
            self.raised = exc
            raise


def _drive(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro``, which never suspends, to its end on this thread; its sync tool here."""
    here.active = True
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    finally:
        here.active = False
    coro.close()  # it waited for something: ``runs_here`` let through a call it should not
    raise RuntimeError("toolpacks: a call run on the calling thread tried to suspend")


def run_here(coro: Coroutine[Any, Any, T]) -> T:
    """Run a call ``runs_here`` accepted to completion on this thread and return its result.

    Runs in a copy of the caller's ``contextvars`` context, as ``run_sync`` does. On the main
    thread, a real Ctrl-C during the call is raised to the caller (see the module).
    """
    context = contextvars.copy_context()
    if threading.get_ident() != threading.main_thread().ident:
        return context.run(_drive, coro)
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):  # ignored, or the default action: no KeyboardInterrupt comes
        return context.run(_drive, coro)
    noted = _Interrupts(previous)
    signal.signal(signal.SIGINT, noted)
    try:
        value = context.run(_drive, coro)
    finally:
        if signal.getsignal(signal.SIGINT) is noted:  # the tool may have set its own
            signal.signal(signal.SIGINT, previous)
    if noted.raised is not None:
        raise noted.raised
    return value
