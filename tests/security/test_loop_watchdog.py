"""An async tool that blocks the event loop is noticed, named, and refused when it persists."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from toolpacks import tool


def test_a_blocking_async_tool_is_logged_timed_out_and_then_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``time.sleep`` inside ``async def`` cannot be interrupted; the watchdog reports it."""

    @tool(timeout=0.2, max_abandoned_threads=2)
    async def sleepy() -> str:
        """Block the loop (wrongly)."""
        time.sleep(0.9)  # noqa: ASYNC251 - the behaviour under test
        return "done"

    async def main() -> list[str]:
        out = []
        for _ in range(3):
            result = await sleepy.invoke({})
            assert result.error is not None
            out.append(result.error.kind + ": " + result.content)
        return out

    with caplog.at_level(logging.ERROR, logger="toolpacks"):
        outcomes = asyncio.run(main())
    assert outcomes[0].startswith("timeout:")
    assert outcomes[1].startswith("timeout:")
    assert "blocked the event loop 2 times" in outcomes[2]
    reports = [r.getMessage() for r in caplog.records if "blocked the event loop" in r.getMessage()]
    assert len(reports) == 2
    assert "'sleepy'" in reports[0]
    assert "async tools must not block" in reports[0]


def test_well_behaved_async_tools_are_never_reported(caplog: pytest.LogCaptureFixture) -> None:
    """Awaiting (even for long) is not blocking."""

    @tool(timeout=5)
    async def patient() -> str:
        """Await for a while."""
        await asyncio.sleep(0.7)
        return "done"

    with caplog.at_level(logging.ERROR, logger="toolpacks"):
        result = asyncio.run(patient.invoke({}))
    assert result.content == "done"
    assert not [r for r in caplog.records if "blocked the event loop" in r.getMessage()]


def test_the_watchdog_reads_stacks_with_the_collector_paused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No collection can start inside ``sys._current_frames`` (CPython gh-106883 deadlock).

    Before 3.11.9 a collection started there runs finalizers while the thread-list lock is
    held; a finalizer that lets another thread in can deadlock the whole process.
    """
    import gc
    import sys
    import threading


    seen: list[bool] = []
    sampled = threading.Event()
    real = sys._current_frames

    def spy() -> dict[int, object]:
        seen.append(gc.isenabled())
        sampled.set()
        return real()

    monkeypatch.setattr(sys, "_current_frames", spy)

    @tool
    async def quick() -> str:
        """Answer at once (starts the watchdog)."""
        return "ok"

    assert gc.isenabled()
    assert asyncio.run(quick.invoke({})).content == "ok"
    assert sampled.wait(30), "the watchdog never sampled"
    assert seen
    assert not any(seen), "sys._current_frames ran with the collector enabled"
    assert gc.isenabled(), "the collector was left paused"


def test_the_watchdog_still_reports_under_gc_pressure(caplog: pytest.LogCaptureFixture) -> None:
    """With a collection every few allocations, a blocking async tool is still reported."""
    import gc

    @tool(timeout=0.2)
    async def sleepy_under_pressure() -> str:
        """Block the loop (wrongly) while garbage piles up."""
        end = time.monotonic() + 0.9
        while time.monotonic() < end:
            cycle: list[object] = []
            cycle.append(cycle)
        return "done"

    old = gc.get_threshold()
    gc.set_threshold(5, 2, 2)
    try:
        with caplog.at_level(logging.ERROR, logger="toolpacks"):
            result = asyncio.run(sleepy_under_pressure.invoke({}))
    finally:
        gc.set_threshold(*old)
    assert result.error is not None
    assert result.error.kind == "timeout"
    assert gc.isenabled()
    assert any("'sleepy_under_pressure'" in r.getMessage() for r in caplog.records)
