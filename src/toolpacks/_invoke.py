"""Running a tool: parse, validate, inject, hooks, lock, timeout, and a ``ToolResult``.

Everything that can be decided once per tool (what to inject, which checks apply) is decided
when the tool is defined; a call does only what that call needs.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import itertools
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

from toolpacks._context import ToolContext
from toolpacks._hooks import EMPTY_HOOKS, HookSet, call_hook
from toolpacks._jsonargs import DEFAULT_LIMITS, ArgumentLimits, ArgumentsParseError, parse_arguments
from toolpacks._result import ArgumentError, ToolResult, error_result
from toolpacks._schema import ExtraArgs, _is_context
from toolpacks.exceptions import ToolError, WrongRunMethodError

if TYPE_CHECKING:
    from toolpacks._tool import Tool

__all__ = ["CallOptions", "InvalidArgumentsError", "invoke", "stream"]

logger = logging.getLogger("toolpacks")
_ids = itertools.count(1)
_EMPTY: dict[str, Any] = {}


@dataclass(frozen=True, slots=True)
class CallOptions:
    """How a host or toolset runs tools; the defaults suit direct ``Tool.invoke`` calls."""

    hooks: HookSet = EMPTY_HOOKS
    """Global hooks that apply to the tool being called."""
    expose_errors: bool = False
    """Send a failing tool's exception message to the model (trusted development only);
    by default the model sees the tool name and exception type, and the log gets the rest."""
    limits: ArgumentLimits = DEFAULT_LIMITS
    """Caps on JSON arguments (size, depth, integer length)."""
    extra_args: ExtraArgs | None = None
    """Override the tool's own policy for undeclared arguments (``None`` keeps it)."""
    max_content_chars: int = 100_000
    """Results whose text is longer are truncated with a marker."""
    redact: tuple[str, ...] = ()
    """Secret values to scrub from error messages and hook payloads."""


DEFAULT_OPTIONS = CallOptions()


class InvalidArgumentsError(ValueError):
    """Raised by ``Tool.stream`` when the arguments do not validate (``invoke`` returns a
    result instead); ``result`` is the error result ``invoke`` would have returned."""

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.content)
        self.result = result


class _Plan:
    """What a call of one tool needs, computed on its first call."""

    __slots__ = ("bool_sensitive", "context_param", "fixed", "params", "secret_params", "validate")

    def __init__(self, tool: Tool) -> None:
        sig = tool.signature
        self.context_param = sig.context_param if sig else _annotated_context(tool.fn)
        self.bool_sensitive = sig.bool_sensitive if sig else ()
        self.params = frozenset(sig.params if sig else tool.input_schema.get("properties") or ())
        self.fixed = dict(tool.fixed_kwargs)
        self.secret_params = _secret_params(tool)
        if sig is not None:
            self.validate: Callable[[Any], dict[str, Any]] = sig.adapter.validate_python
        else:
            from toolpacks._schema_validator import schema_validator

            self.validate = schema_validator(tool.input_schema, tool.extra_args)


def _annotated_context(fn: Callable[..., Any]) -> str | None:
    """A schema-only tool's parameter annotated ``ToolContext`` (typed tools: ``analyze``)."""
    try:
        parameters = inspect.signature(fn, eval_str=True).parameters.values()
    except Exception:
        return None
    return next((p.name for p in parameters if _is_context(p.annotation)), None)


def _secret_params(tool: Tool) -> frozenset[str]:
    sig = tool.signature
    if sig is None:
        return frozenset()
    return frozenset(
        name
        for name, prop in sig.input_schema.get("properties", {}).items()
        if prop.get("format") == "password" or prop.get("writeOnly") is True
    )


def _plan(tool: Tool) -> _Plan:
    plan: _Plan | None = tool._plan
    if plan is None:
        plan = tool._plan = _Plan(tool)
    return plan


def _next_call_id() -> str:
    return f"call_{next(_ids)}"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _argument_errors(exc: ValidationError, plan: _Plan, allowed: list[str]) -> list[ArgumentError]:
    details: list[ArgumentError] = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(part) for part in err["loc"])
        kind = err["type"]
        if kind == "extra_forbidden":
            message = f"unexpected argument; allowed arguments are: {', '.join(allowed) or 'none'}"
        elif kind == "missing":
            message = "missing required argument"
        elif err["loc"] and err["loc"][0] in plan.secret_params:
            message = f"{err['msg']} (value redacted)"
        else:
            message = f"{err['msg']} (got {_short(err.get('input'))})"
        details.append(ArgumentError(loc, message))
    return details


def _invalid(tool: Tool, details: list[ArgumentError], call_id: str, started: float) -> ToolResult:
    lines = [f"Invalid arguments for tool '{tool.name}':"]
    lines.extend(f"- {d.argument or '(arguments)'}: {d.message}" for d in details)
    lines.append("Fix the arguments and call the tool again.")
    return error_result(
        "invalid_arguments",
        "\n".join(lines),
        tool_name=tool.name,
        call_id=call_id,
        details=tuple(details),
        started_at=started,
    )


def _prepare(
    tool: Tool,
    arguments: Mapping[str, Any] | str | bytes | None,
    context: ToolContext | None,
    options: CallOptions,
    call_id: str,
    started: float,
) -> tuple[dict[str, Any], ToolContext | None] | ToolResult:
    """Parse and validate; return the keyword arguments and context, or an error result."""
    plan = _plan(tool)
    if arguments is None:
        arguments = _EMPTY
    elif isinstance(arguments, str | bytes | bytearray):
        try:
            arguments = parse_arguments(arguments, options.limits)
        except ArgumentsParseError as exc:
            return _invalid(tool, [ArgumentError("", str(exc))], call_id, started)
    if type(arguments) is not dict:
        if not isinstance(arguments, Mapping):
            return _invalid(
                tool,
                [ArgumentError("", f"arguments must be a JSON object, got {type(arguments).__name__}")],
                call_id,
                started,
            )
        arguments = dict(arguments)
    overrides: dict[str, Any] | None = None
    if plan.fixed and not plan.fixed.keys().isdisjoint(arguments):
        overrides = {k: arguments[k] for k in plan.fixed if k in arguments}
        arguments = {k: v for k, v in arguments.items() if k not in overrides}
        logger.warning(
            "tool %r: call-time argument(s) %s override fixed keyword arguments",
            tool.name,
            ", ".join(sorted(overrides)),
        )
    extra = options.extra_args or tool.extra_args
    if extra == "ignore" and tool.extra_args == "reject" and plan.params:
        arguments = {k: v for k, v in arguments.items() if k in plan.params}
    for name, kind in plan.bool_sensitive:
        value = arguments.get(name)
        if kind == "number" and (value is True or value is False):
            return _invalid(
                tool,
                [ArgumentError(name, f"expected a number, got boolean {value!r}")],
                call_id,
                started,
            )
        if kind == "boolean" and type(value) is int:
            return _invalid(
                tool,
                [ArgumentError(name, f"expected true or false, got number {value!r}")],
                call_id,
                started,
            )
    try:
        kwargs = plan.validate(arguments)
    except ValidationError as exc:
        allowed = sorted(plan.params)
        return _invalid(tool, _argument_errors(exc, plan, allowed), call_id, started)
    except ValueError as exc:  # schema-only validators raise plain ValueError subclasses
        details = getattr(exc, "details", None) or [ArgumentError("", str(exc))]
        return _invalid(tool, list(details), call_id, started)
    if plan.fixed:
        for key, value in plan.fixed.items():
            kwargs[key] = value() if callable(value) else value
        if overrides:
            kwargs.update(overrides)
    ctx = None
    if plan.context_param is not None or options.hooks or tool.require_approval:
        if context is None:
            ctx = ToolContext(call_id=call_id, tool_name=tool.name)
        else:
            ctx = replace(context, call_id=call_id, tool_name=tool.name)
        if plan.context_param is not None:
            kwargs[plan.context_param] = ctx
    return kwargs, ctx


def _failure(
    tool: Tool, exc: BaseException, options: CallOptions, call_id: str, started: float
) -> ToolResult:
    exc_type = type(exc).__qualname__
    if isinstance(exc, ToolError):
        message = f"Tool '{tool.name}' failed: {exc}"
    elif options.expose_errors:
        message = f"Tool '{tool.name}' failed: {exc_type}: {exc}"
    else:
        message = f"Tool '{tool.name}' failed with {exc_type}."
        logger.error("tool %r (call %s) raised %s", tool.name, call_id, exc_type, exc_info=exc)
    for secret in options.redact:
        if secret:
            message = message.replace(secret, "**********")
    return error_result(
        "tool_error",
        message,
        tool_name=tool.name,
        call_id=call_id,
        exception_type=exc_type,
        started_at=started,
        duration=time.perf_counter() - started,
    )


def _timeout_result(tool: Tool, call_id: str, started: float) -> ToolResult:
    return error_result(
        "timeout",
        f"Tool '{tool.name}' timed out after {tool.timeout:g} seconds.",
        tool_name=tool.name,
        call_id=call_id,
        started_at=started,
    )


async def _run_sync_thread(tool: Tool, kwargs: dict[str, Any], ctx: ToolContext | None) -> Any:
    """Run a sync tool that has a timeout in a dedicated thread that may be abandoned."""
    with tool._abandoned_lock:
        if tool._abandoned >= tool.max_abandoned_threads:
            raise _Refused(
                f"Tool '{tool.name}' is unavailable: {tool._abandoned} earlier calls timed out "
                "and are still running. Try again later."
            )
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    state = {"abandoned": False, "finished": False}
    cv = contextvars.copy_context()

    def settle(ok: bool, payload: Any) -> None:
        if future.done():
            return
        if ok:
            future.set_result(payload)
        else:
            future.set_exception(payload)

    def target() -> None:
        try:
            value = cv.run(tool.fn, **kwargs)
            ok, payload = True, value
        except BaseException as exc:
            ok, payload = False, exc
        with tool._abandoned_lock:
            state["finished"] = True
            if state["abandoned"]:
                tool._abandoned -= 1
                return
        try:
            loop.call_soon_threadsafe(settle, ok, payload)
        except RuntimeError:  # the loop has closed
            pass

    threading.Thread(target=target, name=f"toolpacks:{tool.name}", daemon=True).start()
    try:
        return await future
    except BaseException:
        with tool._abandoned_lock:
            if not state["finished"]:
                state["abandoned"] = True
                tool._abandoned += 1
        if ctx is not None:
            ctx.cancel()
        raise


class _Refused(Exception):
    """A call refused before it ran (internal)."""


async def _call(tool: Tool, kwargs: dict[str, Any], ctx: ToolContext | None) -> Any:
    kind = tool.kind
    if kind == "coroutine":
        return await tool.fn(**kwargs)
    if kind == "function":
        if tool.timeout is not None:
            return await _run_sync_thread(tool, kwargs, ctx)
        loop = asyncio.get_running_loop()
        cv = contextvars.copy_context()
        future = loop.run_in_executor(None, functools.partial(cv.run, tool.fn, **kwargs))
        try:
            return await future
        except asyncio.CancelledError:
            if ctx is not None:
                ctx.cancel()
            raise
    raise AssertionError(kind)  # generators are handled by the callers


async def _guarded(tool: Tool, coro_fn: Callable[[], Any]) -> Any:
    """Apply the tool's lock and timeout around ``coro_fn()`` (the function call only)."""
    lock = tool.lock.get() if tool.lock is not None else None
    if lock is not None:
        async with lock:
            if tool.timeout is None:
                return await coro_fn()
            async with asyncio.timeout(tool.timeout):
                return await coro_fn()
    if tool.timeout is None:
        return await coro_fn()
    async with asyncio.timeout(tool.timeout):
        return await coro_fn()


async def _before_hooks(
    tool: Tool, kwargs: dict[str, Any], ctx: ToolContext | None, options: CallOptions
) -> None:
    public = kwargs
    plan: _Plan = tool._plan
    if plan.context_param is not None or plan.secret_params:
        public = {
            k: ("**********" if k in plan.secret_params else v)
            for k, v in kwargs.items()
            if k != plan.context_param
        }
    for hook in tool.hooks.before:
        await call_hook(hook, **public)
    for hook in options.hooks.before:
        await call_hook(hook, tool=tool, arguments=public, context=ctx)


async def _error_hooks(
    tool: Tool, exc: BaseException, ctx: ToolContext | None, options: CallOptions
) -> None:
    for hook in tool.hooks.error:
        await call_hook(hook, exc=exc)
    for hook in options.hooks.error:
        await call_hook(hook, tool=tool, exc=exc, context=ctx)


async def invoke(
    tool: Tool,
    arguments: Mapping[str, Any] | str | bytes | None,
    context: ToolContext | None,
    options: CallOptions | None,
) -> ToolResult:
    """Run ``tool`` with model-supplied ``arguments``; see ``Tool.invoke``."""
    options = options or DEFAULT_OPTIONS
    started = time.time()
    t0 = time.perf_counter()
    call_id = context.call_id if context is not None and context.call_id else _next_call_id()
    prepared = _prepare(tool, arguments, context, options, call_id, started)
    if type(prepared) is ToolResult:
        return prepared
    kwargs, ctx = prepared  # type: ignore[misc]
    sig = tool.signature
    if sig is not None and sig.skips_first and tool._bound_to is None:
        return error_result(
            "tool_error",
            f"Tool '{tool.name}' is a method; use it through an instance of its class.",
            tool_name=tool.name,
            call_id=call_id,
            started_at=started,
        )
    hooked = bool(tool.hooks) or bool(options.hooks)
    if hooked:
        await _before_hooks(tool, kwargs, ctx, options)
    meta = tool.metadata
    meta.start = started
    try:
        if tool.kind in ("generator", "async_generator"):
            items: list[Any] = []
            async for item in _iterate(tool, kwargs, ctx, options, items):
                pass
            value: Any = items[-1] if items else None
            after_payload: Any = items
        elif tool.lock is None and tool.timeout is None:
            value = await (tool.fn(**kwargs) if tool.kind == "coroutine" else _call(tool, kwargs, ctx))
            after_payload = value
        else:
            value = await _guarded(tool, lambda: _call(tool, kwargs, ctx))
            after_payload = value
    except TimeoutError:
        if ctx is not None:
            ctx.cancel()
        meta.end = time.time()
        return _timeout_result(tool, call_id, started)
    except _Refused as exc:
        meta.end = time.time()
        return error_result("denied", str(exc), tool_name=tool.name, call_id=call_id)
    except Exception as exc:
        meta.end = time.time()
        if hooked:
            await _error_hooks(tool, exc, ctx, options)
        return _failure(tool, exc, options, call_id, started)
    meta.end = time.time()
    if tool.validate_output and tool._output_schema is not None:
        problem = _check_output(tool, value)
        if problem is not None:
            return error_result(
                "output_invalid",
                f"Tool '{tool.name}' returned a value that does not match its declared output "
                f"type: {problem}",
                tool_name=tool.name,
                call_id=call_id,
                started_at=started,
            )
    result = ToolResult(
        value,
        tool_name=tool.name,
        call_id=call_id,
        started_at=started,
        duration=time.perf_counter() - t0,
    )
    if options.max_content_chars:
        _truncate(result, options.max_content_chars)
    if hooked:
        for hook in tool.hooks.after:
            await call_hook(hook, after_payload)
        for hook in options.hooks.after:
            await call_hook(hook, tool=tool, result=result, context=ctx)
    return result


def _truncate(result: ToolResult, limit: int) -> None:
    value = result.value
    if isinstance(value, str) and len(value) <= limit:
        return
    text = result.content
    if len(text) > limit:
        marker = f"\n[... truncated: {len(text) - limit} of {len(text)} characters omitted]"
        result._content = text[:limit] + marker


_OUTPUT_ADAPTERS: dict[int, TypeAdapter[Any]] = {}


def _check_output(tool: Tool, value: Any) -> str | None:
    out_type = tool._output_type
    if out_type in (str, int, float, bool, dict, list):
        if isinstance(value, out_type) and not (out_type in (int, float) and isinstance(value, bool)):
            return None
        if out_type is float and type(value) is int:
            return None
        return f"expected {out_type.__name__}, got {type(value).__name__}"
    adapter = _OUTPUT_ADAPTERS.get(id(tool))
    if adapter is None:
        try:
            adapter = _OUTPUT_ADAPTERS[id(tool)] = TypeAdapter(out_type)
        except Exception:
            return None
    try:
        adapter.validate_python(value, strict=False)
    except ValidationError as exc:
        return "; ".join(e["msg"] for e in exc.errors(include_url=False))[:500]
    return None


async def _iterate(
    tool: Tool,
    kwargs: dict[str, Any],
    ctx: ToolContext | None,
    options: CallOptions,
    items: list[Any],
) -> AsyncIterator[Any]:
    """Iterate a generator tool under its lock and timeout, firing on_yield per item."""
    lock = tool.lock.get() if tool.lock is not None else None
    if lock is not None:
        await lock.acquire()
    deadline = None if tool.timeout is None else time.monotonic() + tool.timeout
    try:
        agen = _items(tool, kwargs)
        try:
            while True:
                try:
                    if deadline is None:
                        item = await agen.__anext__()
                    else:
                        async with asyncio.timeout_at(
                            asyncio.get_running_loop().time() + (deadline - time.monotonic())
                        ):
                            item = await agen.__anext__()
                except StopAsyncIteration:
                    break
                items.append(item)
                for hook in tool.hooks.on_yield:
                    await call_hook(hook, item)
                for hook in options.hooks.on_yield:
                    await call_hook(hook, tool=tool, item=item, context=ctx)
                yield item
        finally:
            await agen.aclose()
    finally:
        if lock is not None:
            lock.release()


async def _items(tool: Tool, kwargs: dict[str, Any]) -> AsyncIterator[Any]:
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
    done = object()
    try:
        while True:
            item = await loop.run_in_executor(None, next, gen, done)
            if item is done:
                return
            yield item
    finally:
        gen.close()


async def stream(
    tool: Tool,
    arguments: Mapping[str, Any] | str | bytes | None,
    context: ToolContext | None,
    options: CallOptions | None,
) -> AsyncIterator[Any]:
    """Yield the items of a generator tool as they are produced; see ``Tool.stream``."""
    if not tool.is_generator:
        raise WrongRunMethodError(
            f"tool {tool.name!r} is not a generator; use `await tool.invoke(...)` instead of "
            "`tool.stream(...)`"
        )
    options = options or DEFAULT_OPTIONS
    started = time.time()
    call_id = context.call_id if context is not None and context.call_id else _next_call_id()
    prepared = _prepare(tool, arguments, context, options, call_id, started)
    if isinstance(prepared, ToolResult):
        raise InvalidArgumentsError(prepared)
    kwargs, ctx = prepared
    await _before_hooks(tool, kwargs, ctx, options)
    items: list[Any] = []
    tool.metadata.start = started
    try:
        async for item in _iterate(tool, kwargs, ctx, options, items):
            yield item
    except GeneratorExit:
        # The consumer stopped early (and closed the stream): after hooks see the partial list.
        tool.metadata.end = time.time()
        await _after_stream(tool, items, call_id, ctx, options)
        raise
    except Exception as exc:
        tool.metadata.end = time.time()
        await _error_hooks(tool, exc, ctx, options)
        raise
    tool.metadata.end = time.time()
    await _after_stream(tool, items, call_id, ctx, options)


async def _after_stream(
    tool: Tool, items: list[Any], call_id: str, ctx: ToolContext | None, options: CallOptions
) -> None:
    for hook in tool.hooks.after:
        await call_hook(hook, items)
    if options.hooks.after:
        result = ToolResult(items[-1] if items else None, tool_name=tool.name, call_id=call_id)
        for hook in options.hooks.after:
            await call_hook(hook, tool=tool, result=result, context=ctx)
