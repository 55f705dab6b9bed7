"""Running a tool's function: worker threads, lock, timeout, and the hooks around a run.

A sync tool runs in a thread of its pack's pool (``_threads``), or in a thread of its own
when it has a timeout; either way what it raises comes back as a value and is raised again
here, so every exception kind reaches the caller as an ordinary exception. The one exception
to the pool is a call a synchronous caller drives on its own thread (``_sync.run_here``,
which decides when that may happen): ``here`` marks that thread for the call, and the tool
then runs right there, on the thread that is blocked waiting for it anyway.

``asyncio`` (with ``ssl``, ``socket`` and ``subprocess``, about 20 ms) is imported when a tool
first runs, not when one is defined: ``asyncio`` here is a stand-in that imports the module on
first use, and ``get_running_loop`` binds the real function in its own place on its first call.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import itertools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolpacks.core._hooks import call_hook
from toolpacks.core.call._threads import capture, pool_of, unwrap

if TYPE_CHECKING:
    import asyncio

    from toolpacks.core._context import ToolContext
    from toolpacks.core.call._options import CallOptions
    from toolpacks.core.call._plan import CallPlan
    from toolpacks.core.define._definition import ToolDefinition

__all__ = [
    "Refused",
    "TimedOut",
    "asyncio",
    "before_hooks",
    "call_fn",
    "call_ids",
    "error_hooks",
    "get_running_loop",
    "guarded",
    "here",
    "next_call_id",
]

call_ids = itertools.count(1)


class _Here(threading.local):
    """Per thread: whether the call being driven on this thread runs its sync tool here."""

    active = False


here = _Here()
"""Set by ``_sync.run_here`` for the one call it drives; the first sync tool run takes it."""


class _Asyncio:
    """``asyncio``, imported on first attribute access; each attribute is kept once read."""

    def __getattr__(self, name: str) -> Any:
        import asyncio

        value = getattr(asyncio, name)
        setattr(self, name, value)
        return value


if not TYPE_CHECKING:
    asyncio = _Asyncio()


def _first_get_running_loop() -> asyncio.AbstractEventLoop:
    """``asyncio.get_running_loop()``; binds that function as ``get_running_loop``."""
    global get_running_loop
    get_running_loop = asyncio.get_running_loop
    return get_running_loop()


get_running_loop: Callable[[], asyncio.AbstractEventLoop] = _first_get_running_loop
"""``asyncio.get_running_loop``, the real one from its first call on (no lookup per call)."""


def next_call_id() -> str:
    return f"call_{next(call_ids)}"


class TimedOut(Exception):
    """The tool's own ``timeout`` expired (internal).

    A ``TimeoutError`` raised by the tool's code is an ordinary failure, not a timeout result.
    """


class Refused(Exception):
    """A call refused before it ran (internal)."""


async def _run_sync_thread(
    tool: ToolDefinition, kwargs: dict[str, Any], ctx: ToolContext | None
) -> Any:
    """Run a sync tool that has a timeout in a dedicated thread that may be abandoned."""
    with tool._abandoned_lock:
        if tool._abandoned >= tool.max_abandoned_threads:
            raise Refused(
                f"Tool '{tool.name}' is unavailable: {tool._abandoned} earlier calls timed out "
                "and are still running. Try again later."
            )
    loop = get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    state = {"abandoned": False, "finished": False}
    cv = contextvars.copy_context()

    def settle(outcome: Any) -> None:
        if not future.done():
            future.set_result(outcome)  # an exception travels as ``Raised``: see ``_threads``

    def target() -> None:
        outcome = capture(cv.run, tool.fn, **kwargs)
        with tool._abandoned_lock:
            state["finished"] = True
            if state["abandoned"]:
                tool._abandoned -= 1
                return
        with contextlib.suppress(RuntimeError):  # the loop may have closed
            loop.call_soon_threadsafe(settle, outcome)

    threading.Thread(target=target, name=f"toolpacks:{tool.name}", daemon=True).start()
    try:
        outcome = await future
    except BaseException:
        with tool._abandoned_lock:
            if not state["finished"]:
                state["abandoned"] = True
                tool._abandoned += 1
        if ctx is not None:
            ctx.cancel()
        raise
    return unwrap(outcome)


async def call_fn(tool: ToolDefinition, kwargs: dict[str, Any], ctx: ToolContext | None) -> Any:
    kind = tool.kind
    if kind == "coroutine":
        return await tool.fn(**kwargs)
    if kind == "function":
        if tool.timeout is not None:
            return await _run_sync_thread(tool, kwargs, ctx)
        if here.active:  # a synchronous caller drives this call on its own thread
            here.active = False  # this call only: a call the tool makes goes its own way
            return unwrap(capture(tool.fn, **kwargs))
        # In a thread of the tool's pack, whatever it raises handed back as a value.
        cv = contextvars.copy_context()
        run = functools.partial(capture, cv.run, tool.fn, **kwargs)
        return unwrap(await get_running_loop().run_in_executor(pool_of(tool.pack), run))
    raise AssertionError(kind)  # generators are handled by the callers


async def _timed(tool: ToolDefinition, coro_fn: Callable[[], Any]) -> Any:
    """Await ``coro_fn()`` under the tool's timeout; its expiry raises ``TimedOut``."""
    if tool.timeout is None:
        return await coro_fn()
    scope = asyncio.timeout(tool.timeout)
    try:
        async with scope:
            return await coro_fn()
    except TimeoutError:
        if scope.expired():
            raise TimedOut from None
        raise


async def guarded(tool: ToolDefinition, coro_fn: Callable[[], Any]) -> Any:
    """Apply the tool's lock and timeout around ``coro_fn()`` (the function call only)."""
    if tool.lock is not None:
        async with tool.lock.get():
            return await _timed(tool, coro_fn)
    return await _timed(tool, coro_fn)


async def before_hooks(
    tool: ToolDefinition,
    plan: CallPlan,
    kwargs: dict[str, Any],
    ctx: ToolContext | None,
    options: CallOptions,
) -> None:
    public = kwargs
    if plan.context_param is not None or plan.secret_params:
        from toolpacks.core._secrets import MASK

        public = {
            k: (MASK if k in plan.secret_params else v)
            for k, v in kwargs.items()
            if k != plan.context_param
        }
    for hook in tool.hooks.before:
        await call_hook(hook, **public)
    for hook in options.hooks.before:
        await call_hook(hook, tool=tool, arguments=public, context=ctx)


async def error_hooks(
    tool: ToolDefinition, exc: BaseException, ctx: ToolContext | None, options: CallOptions
) -> None:
    for hook in tool.hooks.error:
        await call_hook(hook, exc=exc)
    for hook in options.hooks.error:
        await call_hook(hook, tool=tool, exc=exc, context=ctx)
