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
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

__all__ = ["run_sync"]

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
