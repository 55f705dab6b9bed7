"""Generator tools: iterating under lock and timeout with ``on_yield``, and ``stream``."""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from toolpacks.core._hooks import call_hook
from toolpacks.core._result import render_value
from toolpacks.core.call._plan import plan_of
from toolpacks.core.call._run import TimedOut, before_hooks, error_hooks, next_call_id
from toolpacks.core.call._threads import capture, pool_of, unwrap
from toolpacks.exceptions import WrongRunMethodError

if TYPE_CHECKING:
    import asyncio

    from toolpacks.core._context import ToolContext
    from toolpacks.core._result import ToolResult
    from toolpacks.core.call._options import CallOptions
    from toolpacks.core.define._definition import ToolDefinition
else:
    from toolpacks.core.call._run import asyncio  # imported on first use, not with the module

__all__ = ["InvalidArgumentsError", "iterate", "stream", "wrong_run_method"]


class InvalidArgumentsError(ValueError):
    """Raised by ``Tool.stream`` when the arguments do not validate.

    ``invoke`` returns a result instead; ``result`` is the error result it would have returned.
    """

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.content)
        self.result = result


async def iterate(
    tool: ToolDefinition,
    kwargs: dict[str, Any],
    ctx: ToolContext | None,
    options: CallOptions,
    items: list[Any],
    hook_errors: list[BaseException],
) -> AsyncGenerator[Any, None]:
    """Iterate a generator tool under its lock and timeout, firing on_yield per item.

    The lock covers the iteration and the on_yield hooks. An exception raised by a hook is
    recorded in ``hook_errors`` before it propagates, so callers can tell it from a failure
    of the tool. The timeout bounds the whole iteration; its expiry raises ``TimedOut``.
    """
    lock = tool.lock.get() if tool.lock is not None else None
    if lock is not None:
        await lock.acquire()
    try:
        deadline = None
        if tool.timeout is not None:
            deadline = asyncio.get_running_loop().time() + tool.timeout
        async with contextlib.aclosing(_items(tool, kwargs)) as agen:
            while True:
                try:
                    if deadline is None:
                        item = await agen.__anext__()
                    else:
                        scope = asyncio.timeout_at(deadline)
                        try:
                            async with scope:
                                item = await agen.__anext__()
                        except TimeoutError:
                            if scope.expired():
                                raise TimedOut from None
                            raise
                except StopAsyncIteration:
                    break
                items.append(item)
                if ctx is not None and ctx.channel is not None:  # each yield is progress
                    await ctx.report_progress(len(items), None, _progress_text(item))
                try:
                    for hook in tool.hooks.on_yield:
                        await call_hook(hook, item)
                    for hook in options.hooks.on_yield:
                        await call_hook(hook, tool=tool, item=item, context=ctx)
                except Exception as exc:
                    hook_errors.append(exc)
                    raise
                yield item
    finally:
        if lock is not None:
            lock.release()


def _progress_text(item: Any) -> str | None:
    """A yielded item as a progress message (text as it is, else short JSON), or None."""
    if isinstance(item, str):
        return item[:1000]
    try:
        return render_value(item)[:1000]
    except Exception:  # a value JSON cannot hold: progress without a message
        return None


async def _items(tool: ToolDefinition, kwargs: dict[str, Any]) -> AsyncGenerator[Any, None]:
    """The items of a generator tool; a sync generator advances in worker threads."""
    if tool.kind == "async_generator":
        agen = tool.fn(**kwargs)
        try:
            async for item in agen:
                yield item
        finally:
            await agen.aclose()
        return
    gen = tool.fn(**kwargs)
    loop = asyncio.get_running_loop()
    cv = contextvars.copy_context()
    done = object()
    guard = threading.Lock()
    # A step abandoned by a timeout or cancellation is still running in its thread, and a
    # running generator cannot be closed: the step closes it when it returns.
    state = {"running": False, "closed": False}

    def finish() -> bool:
        with guard:
            state["running"] = False
            return state["closed"]

    def step() -> Any:
        with guard:
            if state["closed"]:
                return done
            state["running"] = True
        try:
            return cv.run(next, gen, done)
        finally:
            if finish():  # abandoned while running: close it now that it has stopped
                gen.close()

    pool = pool_of(tool.pack)  # the pack's own threads; a raise comes back as a value
    try:
        while True:
            item = unwrap(await loop.run_in_executor(pool, capture, step))
            if item is done:
                return
            yield item
    finally:
        with guard:
            state["closed"] = True
            running = state["running"]
        if not running:
            gen.close()


async def stream(
    tool: ToolDefinition,
    arguments: Mapping[str, Any] | str | bytes | None,
    context: ToolContext | None,
    options: CallOptions | None,
) -> AsyncIterator[Any]:
    """Yield the items of a generator tool as they are produced; see ``Tool.stream``."""
    from toolpacks.core._result import ToolResult
    from toolpacks.core.call._gate import prepare
    from toolpacks.core.call._options import DEFAULT_OPTIONS
    from toolpacks.core.call._outcome import unbound_result

    if not tool.is_generator:
        raise wrong_run_method(tool)
    options = options or DEFAULT_OPTIONS
    started = time.time()
    t0 = time.perf_counter()
    call_id = context.call_id if context is not None and context.call_id else next_call_id()
    plan = tool._plan or plan_of(tool)
    prepared = prepare(tool, plan, arguments, context, options, call_id, started)
    if isinstance(prepared, ToolResult):
        raise InvalidArgumentsError(prepared)
    if plan.unbound:
        raise InvalidArgumentsError(unbound_result(tool, call_id, started))
    kwargs, ctx = prepared
    await before_hooks(tool, plan, kwargs, ctx, options)
    items: list[Any] = []
    hook_errors: list[BaseException] = []
    meta = tool.metadata
    meta.start = started
    closed = False  # by the consumer, at a ``yield`` (a tool can raise GeneratorExit too)
    try:
        try:
            async with contextlib.aclosing(
                iterate(tool, kwargs, ctx, options, items, hook_errors)
            ) as iterator:
                async for item in iterator:
                    try:
                        yield item
                    except GeneratorExit:
                        closed = True
                        raise
        finally:
            meta.end = time.time()
    except GeneratorExit as exc:
        if not closed:  # the tool raised it: like any other BaseException below
            await error_hooks(tool, exc, ctx, options)
            raise _raised_base(tool, exc) from exc
        # The consumer stopped early (and closed the stream): after hooks see the partial list.
        await _after_stream(tool, items, call_id, ctx, options, started, t0)
        raise
    except TimedOut:
        if ctx is not None:
            ctx.cancel()
        raise TimeoutError(
            f"Tool '{tool.name}' timed out after {tool.timeout:g} seconds."
        ) from None
    except asyncio.CancelledError:
        if ctx is not None:
            ctx.cancel()
        raise
    except Exception as exc:
        if not (hook_errors and exc is hook_errors[0]):
            await error_hooks(tool, exc, ctx, options)
        raise
    except BaseException as exc:  # SystemExit, KeyboardInterrupt... must not end the consumer
        await error_hooks(tool, exc, ctx, options)
        raise _raised_base(tool, exc) from exc
    await _after_stream(tool, items, call_id, ctx, options, started, t0)


def _raised_base(tool: ToolDefinition, exc: BaseException) -> RuntimeError:
    """What the consumer of a stream gets for a ``BaseException`` the tool raised."""
    return RuntimeError(f"Tool '{tool.name}' raised {type(exc).__qualname__} while streaming.")


def wrong_run_method(tool: ToolDefinition) -> WrongRunMethodError:
    return WrongRunMethodError(
        f"tool {tool.name!r} is not a generator; use `await tool.invoke(...)` instead of "
        "`tool.stream(...)`"
    )


async def _after_stream(
    tool: ToolDefinition,
    items: list[Any],
    call_id: str,
    ctx: ToolContext | None,
    options: CallOptions,
    started: float,
    t0: float,
) -> None:
    for hook in tool.hooks.after:
        await call_hook(hook, items)
    if options.hooks.after:
        from toolpacks.core._result import ToolResult

        result = ToolResult(
            items[-1] if items else None,
            tool_name=tool.name,
            call_id=call_id,
            started_at=started,
            duration=time.perf_counter() - t0,
        )
        for hook in options.hooks.after:
            await call_hook(hook, tool=tool, result=result, context=ctx)
