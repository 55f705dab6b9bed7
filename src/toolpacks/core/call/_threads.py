"""Worker threads for sync tools: each pack's own bounded pool, and exceptions as values.

A sync tool (and each step of a sync generator) runs in a thread of its pack's pool, never in
the event loop's shared default executor: a pack whose calls block can hold at most
``PACK_THREADS`` threads, all its own, and other packs keep theirs. Tools that no host
registered share one pool of their own (the "no pack" group). Calls past the bound wait in
their pack's queue, holding no thread; a call cancelled while it waits never runs.

Whatever the function raises is caught in the worker thread and handed back as a value
(``Raised``), then raised again on the loop side by ``unwrap``. An ``asyncio`` future cannot
carry every exception: ``StopIteration`` cannot be set on one at all (the call would never be
answered), and a ``GeneratorExit`` set on one is thrown into the outermost coroutine of the
awaiting task, past every ``except`` of the code between (``Toolset.call`` and the servers'
handlers included). Raised from a frame, each is an ordinary exception.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["PACK_THREADS", "Raised", "busy", "capture", "pool_of", "unwrap"]

PACK_THREADS = min(32, (os.cpu_count() or 1) + 4)
"""Threads each pack's sync tools may use at once: the size ``asyncio``'s shared default
pool has, so one pack alone runs as it did there, but now no pack can take another's."""

_pools: dict[str | None, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()
_busy = 0
_busy_lock = threading.Lock()


class Raised:
    """An exception a function raised in a worker thread, carried back as a value."""

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def capture(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, or ``Raised(exc)`` for whatever it raised; counted in ``busy``."""
    global _busy
    with _busy_lock:
        _busy += 1
    try:
        return fn(*args, **kwargs)
    except BaseException as exc:  # every kind: the loop side decides (see the module)
        return Raised(exc)
    finally:
        with _busy_lock:
            _busy -= 1


def unwrap(value: Any) -> Any:
    """``value``, or the exception it carries raised from here (an ordinary raise)."""
    if type(value) is Raised:
        exc = value.exc
        value.exc = None  # type: ignore[assignment]  # no cycle through the traceback
        try:
            raise exc
        finally:
            del exc
    return value


def pool_of(pack: str | None) -> ThreadPoolExecutor:
    """The pool of ``pack``'s sync tools (``None``: tools with no pack), made on first use."""
    pool = _pools.get(pack)
    if pool is None:
        with _pools_lock:
            pool = _pools.get(pack)
            if pool is None:
                name = "none" if pack is None else pack
                pool = ThreadPoolExecutor(PACK_THREADS, thread_name_prefix=f"toolpacks:{name}")
                _pools[pack] = pool
    return pool


def busy() -> int:
    """How many sync tool calls are running in pack pools now (for a server's shutdown)."""
    return _busy


def _forget_pools() -> None:
    """In a forked child the pools' threads do not exist: start with none."""
    global _busy, _busy_lock, _pools_lock
    _pools.clear()
    _busy = 0
    _busy_lock = threading.Lock()
    _pools_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)
