"""Locks, timeouts, cancellation and worker threads."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from toolpacks import ToolContext, tool


class Overlap:
    """Counts how many tool bodies run at the same time (thread-safe)."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0
        self._lock = threading.Lock()

    def enter(self) -> None:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def leave(self) -> None:
        with self._lock:
            self.now -= 1


# -- lock --------------------------------------------------------------------------------------


def test_lock_serialises_async_runs(run: Any) -> None:
    """With ``lock=True`` concurrent runs of an async tool never overlap."""
    overlap = Overlap()

    @tool(lock=True)
    async def step(i: int) -> int:
        """Step."""
        overlap.enter()
        await asyncio.sleep(0.01)
        overlap.leave()
        return i

    async def scenario() -> list[Any]:
        return await asyncio.gather(*(step.invoke({"i": i}) for i in range(5)))

    assert [r.value for r in run(scenario())] == [0, 1, 2, 3, 4]
    assert overlap.most == 1


def test_without_lock_async_runs_overlap(run: Any) -> None:
    """The control case: unlocked runs do overlap, so the lock test can fail."""
    overlap = Overlap()

    @tool
    async def step(i: int) -> int:
        """Step."""
        overlap.enter()
        await asyncio.sleep(0.01)
        overlap.leave()
        return i

    async def scenario() -> None:
        await asyncio.gather(*(step.invoke({"i": i}) for i in range(5)))

    run(scenario())
    assert overlap.most == 5


def test_lock_serialises_sync_runs(run: Any) -> None:
    """With ``lock=True`` sync bodies in worker threads never overlap either."""
    overlap = Overlap()

    @tool(lock=True)
    def step(i: int) -> int:
        """Step."""
        overlap.enter()
        time.sleep(0.01)
        overlap.leave()
        return i

    async def scenario() -> list[Any]:
        return await asyncio.gather(*(step.invoke({"i": i}) for i in range(4)))

    assert [r.value for r in run(scenario())] == [0, 1, 2, 3]
    assert overlap.most == 1


def test_hooks_run_outside_the_lock(run: Any) -> None:
    """before/after hooks run without the lock held; the body runs with it held."""
    held: dict[str, bool] = {}

    @tool(lock=True)
    async def locked() -> str:
        """Locked."""
        assert locked.lock is not None
        held["body"] = locked.lock.get().locked()
        return "x"

    def probe(name: str) -> Any:
        def hook(*args: Any, **kwargs: Any) -> None:
            assert locked.lock is not None
            held[name] = locked.lock.get().locked()

        return hook

    locked.before_invoke(probe("before"))
    locked.after_invoke(probe("after"))
    run(locked.invoke({}))
    assert held == {"body": True, "before": False, "after": False}


def test_error_hook_runs_outside_the_lock(run: Any) -> None:
    """on_error runs after the lock is released."""
    held: list[bool] = []

    @tool(lock=True)
    async def fail() -> str:
        """Fail."""
        raise ValueError

    @fail.on_error
    def hook(exc: BaseException) -> None:
        assert fail.lock is not None
        held.append(fail.lock.get().locked())

    run(fail.invoke({}))
    assert held == [False]


def test_lock_works_across_event_loops(run: Any) -> None:
    """A locked tool can be invoked from successive ``asyncio.run`` calls."""

    @tool(lock=True)
    async def step() -> int:
        """Step."""
        return 1

    assert [run(step.invoke({})).value for _ in range(2)] == [1, 1]


# -- timeout -----------------------------------------------------------------------------------


def test_async_tool_times_out(run: Any) -> None:
    """An async tool running past ``timeout`` gives an error result of kind timeout."""

    @tool(timeout=0.05)
    async def slow() -> str:
        """Slow."""
        await asyncio.sleep(5)
        return "late"

    started = time.monotonic()
    result = run(slow.invoke({}))
    assert time.monotonic() - started < 2.5  # not the tool's 5 s: the timeout ended it
    assert result.error is not None
    assert result.error.kind == "timeout"
    assert result.content == "Tool 'slow' timed out after 0.05 seconds."


def test_sync_tool_that_never_returns_times_out_promptly(run: Any) -> None:
    """A sync tool stuck for good returns a timeout result long before the tool would end."""
    release = threading.Event()

    @tool(timeout=0.1)
    def stuck() -> str:
        """Stuck."""
        release.wait(10)
        return "late"

    started = time.monotonic()
    try:
        result = run(stuck.invoke({}))
        elapsed = time.monotonic() - started
    finally:
        release.set()
    assert elapsed < 5  # not the tool's 10 s: the timeout released the caller
    assert result.error is not None
    assert result.error.kind == "timeout"


def test_timeout_sets_cancelled_for_a_sync_tool(run: Any) -> None:
    """A timed-out sync tool sees ``ctx.cancelled`` so it can stop."""
    saw_cancel = threading.Event()

    @tool(timeout=0.05)
    def polite(ctx: ToolContext) -> str:
        """Polls its context."""
        if ctx.cancel_event.wait(2):
            saw_cancel.set()
        return "stopped"

    result = run(polite.invoke({}))
    assert result.error is not None
    assert result.error.kind == "timeout"
    assert saw_cancel.wait(2)


def test_timeout_does_not_cancel_a_reused_application_context(run: Any) -> None:
    """The application's context is not left cancelled by a timed-out call."""
    ctx = ToolContext(agent_id="a")

    @tool(timeout=0.05)
    async def slow(c: ToolContext) -> str:
        """Slow."""
        await asyncio.sleep(5)
        return "late"

    @tool
    def check(c: ToolContext) -> bool:
        """Check."""
        return c.cancelled

    assert run(slow.invoke({}, ctx)).error is not None
    assert ctx.cancelled is False
    assert run(check.invoke({}, ctx)).value is False


def test_abandoned_threads_refuse_the_tool_past_the_limit(run: Any) -> None:
    """Past ``max_abandoned_threads`` timed-out runs, calls are refused until threads end."""
    release = threading.Event()

    @tool(timeout=0.05, max_abandoned_threads=2)
    def stuck() -> str:
        """Stuck."""
        release.wait(10)
        return "done"

    async def scenario() -> list[str]:
        kinds = []
        for _ in range(3):
            result = await stuck.invoke({})
            assert result.error is not None
            kinds.append(result.error.kind)
        return kinds

    try:
        kinds = run(scenario())
        refused = run(stuck.invoke({}))
    finally:
        release.set()
    assert kinds == ["timeout", "timeout", "denied"]
    assert "2 earlier calls timed out and are still running" in refused.content
    deadline = time.monotonic() + 5
    while stuck._abandoned and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stuck._abandoned == 0
    assert run(stuck.invoke({})).value == "done"


def test_timeout_error_raised_by_the_tool_is_a_failure_not_a_timeout(run: Any) -> None:
    """A TimeoutError from the tool's own code is a tool error, with or without a timeout."""

    @tool
    def no_limit() -> int:
        """Calls a service that times out."""
        raise TimeoutError("upstream timed out")

    @tool(timeout=5)
    async def with_limit() -> int:
        """Calls a service that times out."""
        raise TimeoutError("upstream timed out")

    for t in (no_limit, with_limit):
        error = run(t.invoke({})).error
        assert error is not None
        assert (error.kind, error.exception_type) == ("tool_error", "TimeoutError")


def test_timeout_does_not_fire_after_hooks(run: Any) -> None:
    """A timeout is not a success: after hooks do not fire."""
    afters: list[Any] = []

    @tool(timeout=0.05)
    async def slow() -> str:
        """Slow."""
        await asyncio.sleep(5)
        return "late"

    slow.after_invoke(afters.append)
    result = run(slow.invoke({}))
    assert result.error is not None
    assert result.error.kind == "timeout"
    assert afters == []


def test_locked_tool_with_timeout(run: Any) -> None:
    """Lock and timeout combine: the second of two overlapping calls still gets its result."""

    @tool(lock=True, timeout=1)
    async def step(i: int) -> int:
        """Step."""
        await asyncio.sleep(0.01)
        return i

    async def scenario() -> list[Any]:
        return await asyncio.gather(step.invoke({"i": 1}), step.invoke({"i": 2}))

    assert [r.value for r in run(scenario())] == [1, 2]


# -- cancellation ------------------------------------------------------------------------------


def test_cancelling_the_caller_cancels_an_async_tool(run: Any) -> None:
    """Cancelling the task awaiting invoke cancels the coroutine and propagates."""
    cancelled = asyncio.Event()

    @tool
    async def waiter() -> str:
        """Wait."""
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "late"

    async def scenario() -> bool:
        task = asyncio.create_task(waiter.invoke({}))
        await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return cancelled.is_set()

    assert run(scenario()) is True


def test_cancelling_the_caller_sets_cancelled_for_a_sync_tool(run: Any) -> None:
    """Cancelling the awaiting task sets ``ctx.cancelled`` for a sync tool in its thread."""
    started = threading.Event()
    saw_cancel = threading.Event()

    @tool
    def worker(ctx: ToolContext) -> str:
        """Work until cancelled."""
        started.set()
        if ctx.cancel_event.wait(2):
            saw_cancel.set()
        return "stopped"

    async def scenario() -> None:
        task = asyncio.create_task(worker.invoke({}))
        assert await asyncio.to_thread(started.wait, 2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(scenario())
    # the caller is released as soon as the event is set; the tool's thread wakes after
    assert saw_cancel.wait(5)


def test_cancelled_run_still_records_its_end_time(run: Any) -> None:
    """A cancelled run sets ``metadata.end_time`` (it is set in a ``finally``)."""

    @tool
    async def waiter() -> str:
        """Wait."""
        await asyncio.sleep(5)
        return "late"

    async def scenario() -> None:
        task = asyncio.create_task(waiter.invoke({}))
        await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(scenario())
    assert waiter.metadata.end_time is not None


# -- worker threads ----------------------------------------------------------------------------


def test_sync_tools_run_concurrently_in_worker_threads(run: Any) -> None:
    """Two sync tools block in parallel threads, not on the event loop."""
    barrier = threading.Barrier(2, timeout=2)

    @tool
    def meet(i: int) -> str:
        """Wait for the other call."""
        barrier.wait()
        return threading.current_thread().name

    async def scenario() -> list[Any]:
        return await asyncio.gather(meet.invoke({"i": 1}), meet.invoke({"i": 2}))

    names = [r.value for r in run(scenario())]
    assert threading.current_thread().name not in names
    assert len(set(names)) == 2


def test_sync_generator_items_are_produced_off_the_loop(run: Any) -> None:
    """A sync generator advances in worker threads."""

    @tool
    def where() -> Iterator[str]:
        """Where each item is produced."""
        yield threading.current_thread().name
        yield threading.current_thread().name

    async def scenario() -> list[str]:
        return [item async for item in where.stream({})]

    assert threading.current_thread().name not in run(scenario())


def test_each_concurrent_result_has_its_own_timing(run: Any) -> None:
    """Concurrent calls are timed separately: the slow call's duration is its own."""

    @tool
    async def nap(seconds: float) -> float:
        """Nap."""
        await asyncio.sleep(seconds)
        return seconds

    async def scenario() -> list[Any]:
        return await asyncio.gather(nap.invoke({"seconds": 0.2}), nap.invoke({"seconds": 0}))

    slow, fast = run(scenario())
    assert slow.duration >= 0.19
    assert fast.duration < slow.duration
    assert slow.started_at > 0
    assert fast.started_at > 0


# -- generators under lock and timeout ---------------------------------------------------------


def test_lock_covers_generator_iteration_and_on_yield(run: Any) -> None:
    """For a generator the lock is held while it yields and while on_yield hooks run."""
    held: list[bool] = []

    @tool(lock=True)
    async def items() -> AsyncIterator[int]:
        """Items."""
        yield 1
        yield 2

    @items.on_yield
    def probe(item: int) -> None:
        assert items.lock is not None
        held.append(items.lock.get().locked())

    assert run(items.invoke({})).value == 2
    assert held == [True, True]


def test_async_generator_times_out(run: Any) -> None:
    """An async generator that stalls gives a timeout result."""

    @tool(timeout=0.05)
    async def stalls() -> AsyncIterator[int]:
        """Stalls."""
        yield 1
        await asyncio.sleep(5)
        yield 2

    error = run(stalls.invoke({})).error
    assert error is not None
    assert error.kind == "timeout"


def test_sync_generator_times_out_and_is_closed_later(run: Any) -> None:
    """A stalled sync generator gives a timeout result and is closed once its step returns."""
    release = threading.Event()
    closed = threading.Event()

    @tool(timeout=0.1)
    def stalls() -> Iterator[int]:
        """Stalls."""
        try:
            yield 1
            release.wait(10)
            yield 2
        finally:
            closed.set()

    async def scenario() -> Any:
        started = time.monotonic()
        result = await stalls.invoke({})
        elapsed = time.monotonic() - started
        release.set()
        return result, elapsed

    result, elapsed = run(scenario())
    assert elapsed < 5  # not the generator's 10 s stall
    assert result.error is not None
    assert result.error.kind == "timeout"
    assert closed.wait(2)


def test_streaming_past_the_timeout_raises_timeout_error(run: Any) -> None:
    """``stream()`` of a generator that times out raises TimeoutError to the consumer."""

    @tool(timeout=0.05)
    async def stalls() -> AsyncIterator[int]:
        """Stalls."""
        yield 1
        await asyncio.sleep(5)
        yield 2

    got: list[int] = []

    async def scenario() -> None:
        async for item in stalls.stream({}):
            got.append(item)

    with pytest.raises(TimeoutError, match=r"timed out after 0\.05 seconds"):
        run(scenario())
    assert got == [1]
