"""Noticing an async tool that blocks the event loop.

An ``async def`` tool that calls ``time.sleep`` or computes for long without awaiting stops
every other call on its loop, and no timeout can interrupt it. A coroutine that awaits is
suspended, off every thread's stack; one that blocks stays on its thread's stack. So one
daemon thread, started by the first call of an async tool, samples the stacks of all threads
ten times a second; a call of an async tool seen running in every sample for longer than its
timeout (``BLOCK_LIMIT`` when it has none) is logged with the tool's name and counted against
the tool as an abandoned thread is counted: a tool with ``max_abandoned_threads`` blocks is
refused from then on. Calls pay nothing for this but a check that the thread is running.
"""

from __future__ import annotations

import gc
import logging
import sys
import threading
import time
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolpacks.core.define._definition import ToolDefinition

__all__ = ["BLOCK_LIMIT", "INTERVAL", "register_call_code", "running", "start"]

logger = logging.getLogger("toolpacks")

BLOCK_LIMIT = 5.0
"""Seconds an async tool without a timeout may run without awaiting before it is reported."""
INTERVAL = 0.1
"""Seconds between two looks at the threads' stacks."""

running: list[bool] = []
"""Non-empty once the watching thread runs (callers test it before calling ``start``)."""

_CALL_CODES: set[CodeType] = set()
"""The code of the functions that run a tool (their ``tool`` local names it)."""
_lock = threading.Lock()


def register_call_code(code: CodeType) -> None:
    """Mark ``code`` as a function whose ``tool`` local is the tool being run."""
    _CALL_CODES.add(code)


def start() -> None:
    """Start the watching thread (once per process)."""
    with _lock:
        if running:
            return
        threading.Thread(target=_run, name="toolpacks:watchdog", daemon=True).start()
        running.append(True)


def _run() -> None:
    first_seen: dict[tuple[int, Any], tuple[float, Any]] = {}
    reported: set[tuple[int, Any]] = set()
    while True:
        time.sleep(INTERVAL)
        now = time.monotonic()
        current: dict[tuple[int, Any], tuple[float, Any]] = {}
        for frame in _frames().values():
            found = _running_call(frame)
            if found is None:
                continue
            key, tool = found
            since, known = first_seen.get(key, (now, None))
            current[key] = (since if known is tool else now, tool)
        first_seen = current
        reported &= current.keys()
        for key, (since, tool) in current.items():
            if key not in reported and _report(tool, now - since + INTERVAL):
                reported.add(key)


def _frames() -> dict[int, FrameType]:
    """Every thread's current frame, with the garbage collector paused while they are read.

    ``sys._current_frames`` holds the interpreter's thread-list lock while it builds its
    dict; a collection started by that allocation can run a finalizer that lets another
    thread take the GIL and then wait for the same lock: a deadlock of the whole process on
    CPython before 3.11.9 and 3.12.4 (gh-106883). Without a collection there, there is none.
    """
    if not gc.isenabled():
        return sys._current_frames()
    gc.disable()
    try:
        return sys._current_frames()
    finally:
        gc.enable()


def _running_call(frame: FrameType | None) -> tuple[tuple[int, Any], ToolDefinition] | None:
    """The innermost tool call on a stack whose tool is async: the call's key, and the tool.

    The key is the frame's id and the call's start (``t0``), since a frame's id can be
    reused by the next call.
    """
    while frame is not None:
        if frame.f_code in _CALL_CODES:
            names = frame.f_locals
            tool: Any = names.get("tool")
            if getattr(tool, "kind", None) in ("coroutine", "async_generator"):
                return (id(frame), names.get("t0")), tool
            return None
        frame = frame.f_back
    return None


def _report(tool: ToolDefinition, blocked: float) -> bool:
    """Log and count a block longer than the tool's limit; whether it was one."""
    limit = tool.timeout if tool.timeout is not None else BLOCK_LIMIT
    if blocked < limit:
        return False
    with tool._abandoned_lock:
        tool._loop_blocks += 1
        blocks = tool._loop_blocks
    if tool._plan is not None:
        tool._plan.fast = False  # the general path refuses a tool that blocked too often
    logger.error(
        "tool %r has blocked the event loop for %.1f s (limit %.1f s; block %d of %d "
        "before it is refused): async tools must not block; await, or make the tool a "
        "sync function, which runs in a worker thread",
        tool.name,
        blocked,
        limit,
        blocks,
        tool.max_abandoned_threads,
    )
    return True
