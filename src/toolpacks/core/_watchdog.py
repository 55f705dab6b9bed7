"""Noticing an async tool that blocks the event loop.

An ``async def`` tool that calls ``time.sleep`` or does heavy work without awaiting stops
every other call on its loop, and no timeout can interrupt it. One daemon thread watches the
event loops that run async tools: each loop sets a heartbeat ten times a second, and when a
heartbeat is late by more than the running tool's timeout (or ``BLOCK_LIMIT`` when it has
none), the thread finds the tool on the loop thread's stack, logs its name, and counts the
block against the tool as an abandoned thread is counted. A tool with
``max_abandoned_threads`` blocks is refused from then on.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
import weakref
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolpacks.core._definition import ToolDefinition

__all__ = ["BLOCK_LIMIT", "INTERVAL", "watch"]

logger = logging.getLogger("toolpacks")

BLOCK_LIMIT = 5.0
"""Seconds an async tool without a timeout may hold the event loop before it is reported."""
INTERVAL = 0.1
"""Seconds between heartbeats (and between the watching thread's looks)."""

_CALL_CODES: set[CodeType] = set()
"""The code of the functions that run a tool (their ``tool`` local names it)."""


class _Loop:
    """One watched loop: its thread, its last heartbeat, the block being reported."""

    __slots__ = ("beat", "loop", "reported", "thread_id")

    reported: tuple[int, float] | None
    """The call last reported (its frame's id and start), so one call is reported once."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.thread_id = threading.get_ident()
        self.beat = time.monotonic()
        self.reported = None

    def tick(self) -> None:
        self.beat = time.monotonic()
        self.reported = None
        if not self.loop.is_closed():
            self.loop.call_later(INTERVAL, self.tick)


_loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Loop] = weakref.WeakKeyDictionary()
_lock = threading.Lock()
_thread: threading.Thread | None = None
_last: Any = None


def register_call_code(code: CodeType) -> None:
    """Mark ``code`` as a function whose ``tool`` local is the tool being run."""
    _CALL_CODES.add(code)


def watch(loop: asyncio.AbstractEventLoop) -> None:
    """Watch ``loop`` (the running loop of an async tool call); cheap when already watched."""
    global _last, _thread
    if loop is _last:
        return
    with _lock:
        _last = loop
        if loop in _loops:
            return
        entry = _Loop(loop)
        _loops[loop] = entry
        loop.call_soon(entry.tick)
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_run, name="toolpacks:watchdog", daemon=True)
            _thread.start()


def _run() -> None:
    while True:
        time.sleep(INTERVAL)
        with _lock:
            entries = [e for e in _loops.values() if not e.loop.is_closed()]
        now = time.monotonic()
        for entry in entries:
            late = now - entry.beat
            if late > INTERVAL * 5 and entry.loop.is_running():
                _check(entry, late)


def _running_call(thread_id: int) -> tuple[ToolDefinition, int, float] | None:
    """The tool running on ``thread_id``, the id of its call frame and when the call began."""
    frame: FrameType | None = sys._current_frames().get(thread_id)
    while frame is not None:
        if frame.f_code in _CALL_CODES:
            names = frame.f_locals
            tool: Any = names.get("tool")
            t0 = names.get("t0")
            if hasattr(tool, "max_abandoned_threads") and isinstance(t0, float):
                return tool, id(frame), t0
            return None
        frame = frame.f_back
    return None


def _check(entry: _Loop, late: float) -> None:
    found = _running_call(entry.thread_id)
    if found is None:
        return
    tool, frame_id, t0 = found
    if (frame_id, t0) == entry.reported or tool.kind not in ("coroutine", "async_generator"):
        return
    blocked = min(late, time.perf_counter() - t0)
    limit = tool.timeout if tool.timeout is not None else BLOCK_LIMIT
    if blocked < limit:
        return
    entry.reported = (frame_id, t0)
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
