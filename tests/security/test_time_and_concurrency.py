"""Time and concurrency: timeouts, abandoned threads, cancellation, locks, atomic reloads."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

from toolpacks import Host, ToolContext, hookimpl, tool
from toolpacks.testing import make_host


def test_sync_tool_that_never_returns_times_out_promptly() -> None:
    """A sync tool stuck for good yields a timeout result long before the tool would end."""
    release = threading.Event()

    @tool(timeout=0.2)
    def stuck() -> str:
        """Never returns (until the test releases it)."""
        release.wait(30)
        return "late"

    started = time.monotonic()
    result = asyncio.run(stuck.invoke({}))
    elapsed = time.monotonic() - started
    release.set()
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "timeout"
    assert elapsed < 15  # not the tool's 30 s: the timeout released the caller


# The abandoned-thread cap is tested in tests/core/test_concurrency.py
# (test_abandoned_threads_refuse_the_tool_past_the_limit).


def test_cancelling_a_call_cancels_an_async_tool_quickly() -> None:
    """Cancelling Toolset.call cancels the running coroutine within 100 ms."""
    state = {"cancelled_at": 0.0}

    @tool
    async def slow() -> str:
        """Sleeps for a long time."""
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            state["cancelled_at"] = time.monotonic()
            raise
        return "late"

    class Pack:
        @hookimpl
        def register_tools(self, register):  # type: ignore[no-untyped-def]
            register(slow)

    toolset = make_host(Pack(), names=["p"]).toolset()

    async def scenario() -> float:
        task = asyncio.create_task(toolset.call("slow", {}))
        await asyncio.sleep(0.05)
        cancelled = time.monotonic()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return state["cancelled_at"] - cancelled

    assert 0 <= asyncio.run(scenario()) < 0.1


def test_cancelling_a_call_signals_a_sync_tool_through_its_context() -> None:
    """A sync tool sees ctx.cancelled become true within 100 ms of the call being cancelled."""
    seen = threading.Event()
    started = threading.Event()

    @tool
    def poll(ctx: ToolContext) -> str:
        """Polls its cancellation signal."""
        started.set()
        for _ in range(3000):
            if ctx.cancelled:
                seen.set()
                return "stopped"
            time.sleep(0.001)
        return "finished"

    async def scenario() -> float:
        task = asyncio.create_task(poll.invoke({}))
        await asyncio.to_thread(started.wait, 5)
        t0 = time.monotonic()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await asyncio.to_thread(seen.wait, 2)
        return time.monotonic() - t0

    elapsed = asyncio.run(scenario())
    assert seen.is_set()
    assert elapsed < 1.5  # well before the 3 s the tool takes when nothing stops it


def test_fifty_concurrent_locked_read_modify_writes_lose_nothing() -> None:
    """50 concurrent calls of a lock=True read-modify-write tool leave the counter at exactly 50."""
    counter = {"value": 0}

    @tool(lock=True)
    async def increment() -> int:
        """Read, yield to the loop, write back."""
        current = counter["value"]
        await asyncio.sleep(0)
        counter["value"] = current + 1
        return counter["value"]

    class Pack:
        @hookimpl
        def register_tools(self, register):  # type: ignore[no-untyped-def]
            register(increment)

    toolset = make_host(Pack(), names=["c"]).toolset()
    results = asyncio.run(toolset.call_many([("increment", {})] * 50, max_concurrency=50))
    assert all(not r.is_error for r in results)
    assert counter["value"] == 50


def test_building_a_toolset_during_reload_sees_old_or_new_never_a_mix() -> None:
    """Toolsets built while another thread reloads packs are always one consistent set, sorted."""
    generation = {"n": 0}

    class Pack:
        @hookimpl
        def register_tools(self, register):  # type: ignore[no-untyped-def]
            n = generation["n"]
            for i in range(5):

                def make(i: int = i) -> str:
                    return str(i)

                register(tool(make, name=f"g{n}_t{i}", description="generated"))

    host = Host({}, discover=False)
    host.add_pack(Pack(), "gen")
    stop = threading.Event()
    errors: list[BaseException] = []

    def reloader() -> None:
        while not stop.is_set():
            generation["n"] += 1
            host.reload()

    thread = threading.Thread(target=reloader)
    thread.start()
    try:
        for _ in range(200):
            names = host.toolset().names()
            prefixes = {name.split("_")[0] for name in names}
            assert len(prefixes) == 1, names
            assert len(names) == 5
            assert names == sorted(names)
    except BaseException as exc:  # pragma: no cover - reported below
        errors.append(exc)
    finally:
        stop.set()
        thread.join()
    assert not errors, errors[0]
