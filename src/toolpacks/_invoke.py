"""Running a tool: parse, validate, inject, hooks, lock, timeout, and a ``ToolResult``.

Everything that can be decided once per tool (what to inject, which checks apply) is decided
when the tool is defined; a call does only what that call needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import itertools
import logging
import threading
import time
import traceback
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, TypeAdapter, ValidationError

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
    """Raised by ``Tool.stream`` when the arguments do not validate.

    ``invoke`` returns a result instead; ``result`` is the error result it would have returned.
    """

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.content)
        self.result = result


class _Plan:
    """What a call of one tool needs, computed once, on its first call."""

    __slots__ = (
        "bool_sensitive",
        "closed",
        "context_param",
        "fast",
        "fixed",
        "fixed_calls",
        "out_exact",
        "override_checks",
        "params",
        "secret_params",
        "unbound",
        "validate",
    )

    def __init__(self, tool: Tool) -> None:
        sig = tool.signature
        schema = tool.input_schema
        self.context_param = sig.context_param if sig else _annotated_context(tool.fn)
        self.bool_sensitive = sig.bool_sensitive if sig else _schema_bool_sensitive(schema)
        self.params = frozenset(sig.params if sig else schema.get("properties") or ())
        # Whether undeclared arguments can be dropped when a host asks to ignore them: not for
        # ``**kwargs`` functions, nor for schemas that leave the object open.
        if sig is not None:
            self.closed = not sig.var_keyword
        else:
            extra = schema.get("additionalProperties")
            self.closed = extra is False or (extra is None and bool(self.params))
        self.fixed = dict(tool.fixed_kwargs)
        self.fixed_calls = frozenset(k for k, v in self.fixed.items() if callable(v))
        self.override_checks = _override_checks(tool) if self.fixed else {}
        self.secret_params = _secret_params(tool)
        self.unbound = sig is not None and sig.skips_first and tool._bound_to is None
        # A return value of exactly the declared plain type needs no further output check.
        out = tool._output_type
        self.out_exact = out if out in (str, int, float, bool, dict, list) else None
        # Calls of most tools need nothing but validation and the call itself; ``invoke``
        # takes a short path for them (hooks and options are checked per call).
        self.fast = (
            tool.kind in ("coroutine", "function")
            and tool.lock is None
            and tool.timeout is None
            and not self.fixed
            and self.context_param is None
            and not self.unbound
            and not self.secret_params
        )
        if sig is not None:
            adapter = sig.adapter
            if tool.strict:
                # Strict means JSON's strict mode: no "3" for 3, but an enum value, an ISO
                # date or an array for a tuple are what JSON can send, so they are accepted.
                from pydantic_core import to_json

                def validate_strict(arguments: Any) -> dict[str, Any]:
                    result: dict[str, Any] = adapter.validate_json(to_json(arguments))
                    return result

                self.validate: Callable[[Any], dict[str, Any]] = validate_strict
            else:
                # The core validator itself: TypeAdapter.validate_python adds a Python layer.
                self.validate = adapter.validator.validate_python
        else:
            from toolpacks._schema_validator import schema_validator

            self.validate = schema_validator(schema, tool.extra_args, tool.strict)


_KINDS = {"integer": "number", "number": "number", "boolean": "boolean"}


def _schema_bool_sensitive(schema: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The bool/number confusion checks of a schema-only tool (file, MCP, hand-built).

    Taken from its top-level property types, as a typed tool gets them from its annotations.
    """
    out: list[tuple[str, str]] = []
    for name, prop in (schema.get("properties") or {}).items():
        kind = prop.get("type") if isinstance(prop, Mapping) else None
        if isinstance(kind, list):
            kinds = {_KINDS.get(k) for k in kind if k != "null"}
            kind_name = kinds.pop() if len(kinds) == 1 else None
        else:
            kind_name = _KINDS.get(kind) if isinstance(kind, str) else None
        if kind_name is not None:
            out.append((name, kind_name))
    return tuple(out)


def _override_checks(tool: Tool) -> dict[str, Callable[[Any], Any]]:
    """Validators for call-time values overriding fixed kwargs, from the parameters' types."""
    from toolpacks._schema import type_hints

    try:
        hints = type_hints(tool.fn)
    except Exception:
        return {}
    checks: dict[str, Callable[[Any], Any]] = {}
    for name in tool.fixed_kwargs:
        annotation = hints.get(name)
        if annotation is None or annotation is Any:
            continue
        for config in (None, ConfigDict(arbitrary_types_allowed=True)):
            try:
                checks[name] = TypeAdapter(annotation, config=config).validate_python
                break
            except Exception:  # a type pydantic cannot validate: the value goes through as is
                continue
    return checks


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
                [
                    ArgumentError(
                        "", f"arguments must be a JSON object, got {type(arguments).__name__}"
                    )
                ],
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
    if extra == "ignore" and tool.extra_args == "reject" and plan.closed:
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
        retried = _without_strict_nulls(tool, plan, arguments)
        if retried is None:
            allowed = sorted(plan.params)
            return _invalid(tool, _argument_errors(exc, plan, allowed), call_id, started)
        kwargs = retried
    except ValueError as exc:  # schema-only validators raise plain ValueError subclasses
        details = getattr(exc, "details", None) or [ArgumentError("", str(exc))]
        return _invalid(tool, list(details), call_id, started)
    if plan.fixed:
        calls = plan.fixed_calls
        for key, value in plan.fixed.items():
            kwargs[key] = value() if key in calls else value
        if overrides:
            problems = _check_overrides(plan, overrides)
            if problems:
                return _invalid(tool, problems, call_id, started)
            kwargs.update(overrides)
    ctx = None
    if plan.context_param is not None or options.hooks or tool.require_approval:
        if context is None:
            ctx = ToolContext(call_id=call_id, tool_name=tool.name)
        else:
            # Each call gets its own cancellation signal: a timeout of one call must not
            # leave a context the application reuses marked as cancelled.
            ctx = replace(
                context, call_id=call_id, tool_name=tool.name, cancel_event=threading.Event()
            )
        if plan.context_param is not None:
            kwargs[plan.context_param] = ctx
    return kwargs, ctx


def _without_strict_nulls(
    tool: Tool, plan: _Plan, arguments: dict[str, Any]
) -> dict[str, Any] | None:
    """Validate again without the ``null`` values strict mode sends for omitted parameters.

    OpenAI strict schemas make every property required and nullable, so a model sends
    ``null`` for an optional parameter it leaves out. Returns None if dropping them does not
    help. Only reached when validation failed, so it costs valid calls nothing.
    """
    if None not in arguments.values():
        return None
    from toolpacks._export import drop_strict_nulls

    cleaned = drop_strict_nulls(arguments, tool.input_schema)
    if cleaned == arguments:
        return None
    try:
        return plan.validate(cleaned)
    except (ValidationError, ValueError):
        return None


def _check_overrides(plan: _Plan, overrides: dict[str, Any]) -> list[ArgumentError]:
    """Validate call-time values that override fixed kwargs, in place; return the problems."""
    problems: list[ArgumentError] = []
    for key, value in overrides.items():
        check = plan.override_checks.get(key)
        if check is None:
            continue
        try:
            overrides[key] = check(value)
        except ValidationError as exc:
            message = "; ".join(e["msg"] for e in exc.errors(include_url=False))
            problems.append(ArgumentError(key, f"{message} (got {_short(value)})"))
    return problems


def _failure(
    tool: Tool,
    exc: BaseException,
    options: CallOptions,
    call_id: str,
    started: float,
    t0: float,
    secrets: tuple[str, ...] = (),
) -> ToolResult:
    exc_type = type(exc).__qualname__
    if isinstance(exc, ToolError):
        message = f"Tool '{tool.name}' failed: {exc}"
    elif options.expose_errors:
        message = f"Tool '{tool.name}' failed: {exc_type}: {exc}"
    else:
        message = f"Tool '{tool.name}' failed with {exc_type}."
    hidden = tuple(s for s in (*options.redact, *secrets) if s)
    if not isinstance(exc, ToolError):
        trace = "".join(traceback.format_exception(exc))
        logger.error(
            "tool %r (call %s) raised %s\n%s", tool.name, call_id, exc_type, _scrub(trace, hidden)
        )
    return error_result(
        "tool_error",
        _scrub(message, hidden),
        tool_name=tool.name,
        call_id=call_id,
        exception_type=exc_type,
        started_at=started,
        duration=time.perf_counter() - t0,
    )


def _scrub(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        text = text.replace(secret, "**********")
    return text


def _secret_values(plan: _Plan, kwargs: dict[str, Any]) -> tuple[str, ...]:
    """The values of this call's secret arguments (``SecretStr``), to scrub from messages."""
    out: list[str] = []
    for name in plan.secret_params:
        value = kwargs.get(name)
        reveal = getattr(value, "get_secret_value", None)
        if reveal is not None:
            secret = reveal()
            if isinstance(secret, str | bytes) and secret:
                out.append(secret if isinstance(secret, str) else secret.decode(errors="replace"))
    return tuple(out)


def _timeout_result(tool: Tool, call_id: str, started: float, t0: float = 0.0) -> ToolResult:
    return error_result(
        "timeout",
        f"Tool '{tool.name}' timed out after {tool.timeout:g} seconds.",
        tool_name=tool.name,
        call_id=call_id,
        started_at=started,
        duration=time.perf_counter() - t0 if t0 else 0.0,
    )


class _TimedOut(Exception):
    """The tool's own ``timeout`` expired (internal).

    A ``TimeoutError`` raised by the tool's code is an ordinary failure, not a timeout result.
    """


class _Refused(Exception):
    """A call refused before it ran (internal)."""


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
        with contextlib.suppress(RuntimeError):  # the loop may have closed
            loop.call_soon_threadsafe(settle, ok, payload)

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


async def _call(tool: Tool, kwargs: dict[str, Any], ctx: ToolContext | None) -> Any:
    kind = tool.kind
    if kind == "coroutine":
        return await tool.fn(**kwargs)
    if kind == "function":
        if tool.timeout is not None:
            return await _run_sync_thread(tool, kwargs, ctx)
        loop = asyncio.get_running_loop()
        cv = contextvars.copy_context()
        return await loop.run_in_executor(None, functools.partial(cv.run, tool.fn, **kwargs))
    raise AssertionError(kind)  # generators are handled by the callers


async def _timed(tool: Tool, coro_fn: Callable[[], Any]) -> Any:
    """Await ``coro_fn()`` under the tool's timeout; its expiry raises ``_TimedOut``."""
    if tool.timeout is None:
        return await coro_fn()
    scope = asyncio.timeout(tool.timeout)
    try:
        async with scope:
            return await coro_fn()
    except TimeoutError:
        if scope.expired():
            raise _TimedOut from None
        raise


async def _guarded(tool: Tool, coro_fn: Callable[[], Any]) -> Any:
    """Apply the tool's lock and timeout around ``coro_fn()`` (the function call only)."""
    if tool.lock is not None:
        async with tool.lock.get():
            return await _timed(tool, coro_fn)
    return await _timed(tool, coro_fn)


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


def _unbound_result(tool: Tool, call_id: str, started: float) -> ToolResult:
    return error_result(
        "tool_error",
        f"Tool '{tool.name}' is a method; use it through an instance of its class.",
        tool_name=tool.name,
        call_id=call_id,
        started_at=started,
    )


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
    if tool._plan.unbound:
        return _unbound_result(tool, call_id, started)
    hooked = bool(tool.hooks) or bool(options.hooks)
    if hooked:
        await _before_hooks(tool, kwargs, ctx, options)
    meta = tool.metadata
    meta.start = started
    hook_errors: list[BaseException] | None = None
    try:
        try:
            if tool.kind in ("generator", "async_generator"):
                items: list[Any] = []
                hook_errors = []
                async with contextlib.aclosing(
                    _iterate(tool, kwargs, ctx, options, items, hook_errors)
                ) as iterator:
                    async for _ in iterator:
                        pass
                value: Any = items[-1] if items else None
                after_payload: Any = items
                produced = bool(items)  # an empty generator has no item to check
            elif tool.lock is None and tool.timeout is None:
                value = await (
                    tool.fn(**kwargs) if tool.kind == "coroutine" else _call(tool, kwargs, ctx)
                )
                after_payload = value
                produced = True
            else:
                value = await _guarded(tool, lambda: _call(tool, kwargs, ctx))
                after_payload = value
                produced = True
        finally:
            meta.end = time.time()
    except _TimedOut:
        if ctx is not None:
            ctx.cancel()
        return _timeout_result(tool, call_id, started, t0)
    except _Refused as exc:
        return error_result(
            "denied",
            str(exc),
            tool_name=tool.name,
            call_id=call_id,
            started_at=started,
            duration=time.perf_counter() - t0,
        )
    except asyncio.CancelledError:
        if ctx is not None:
            ctx.cancel()
        raise
    except Exception as exc:
        if hook_errors and exc is hook_errors[0]:
            raise  # an on_yield hook failed: hook exceptions are not swallowed
        if hooked:
            await _error_hooks(tool, exc, ctx, options)
        secrets = _secret_values(tool._plan, kwargs) if tool._plan.secret_params else ()
        return _failure(tool, exc, options, call_id, started, t0, secrets)
    if tool.validate_output and tool._output_schema is not None and produced:
        invalid = _invalid_output(tool, value, call_id, started, time.perf_counter() - t0)
        if invalid is not None:
            return invalid
    result = ToolResult(
        value,
        tool_name=tool.name,
        call_id=call_id,
        started_at=started,
        duration=time.perf_counter() - t0,
        max_chars=options.max_content_chars,
    )
    if hooked:
        for hook in tool.hooks.after:
            await call_hook(hook, after_payload)
        for hook in options.hooks.after:
            await call_hook(hook, tool=tool, result=result, context=ctx)
    return result


def start(
    tool: Tool,
    arguments: Mapping[str, Any] | str | bytes | None,
    context: ToolContext | None,
    options: CallOptions | None,
) -> Coroutine[Any, Any, ToolResult]:
    """The coroutine that runs one call.

    The short path when nothing but validation and the call itself is needed (no hooks,
    lock, timeout, fixed or injected arguments); else the general one.
    """
    plan = tool._plan or _plan(tool)
    hooks = tool.hooks
    if (
        plan.fast
        and type(arguments) is dict
        and (options is None or (options.hooks is EMPTY_HOOKS and options.extra_args is None))
        and not (hooks.before or hooks.after or hooks.error or hooks.on_yield)
    ):
        return _fast_invoke(tool, plan, arguments, context, options or DEFAULT_OPTIONS)
    return invoke(tool, arguments, context, options)


async def _fast_invoke(
    tool: Tool,
    plan: _Plan,
    arguments: dict[str, Any],
    context: ToolContext | None,
    options: CallOptions,
) -> ToolResult:
    """The short path: validate, call, wrap.

    Arguments that need a message go to the general path, which produces the error result
    (bad arguments never reach the tool here).
    """
    for name, kind in plan.bool_sensitive:
        value = arguments.get(name)
        if value is True or value is False:
            if kind == "number":
                return await invoke(tool, arguments, context, options)
        elif kind == "boolean" and type(value) is int:
            return await invoke(tool, arguments, context, options)
    try:
        kwargs = plan.validate(arguments)
    except ValueError:
        return await invoke(tool, arguments, context, options)
    started = time.time()
    t0 = time.perf_counter()
    call_id = context.call_id if context is not None and context.call_id else f"call_{next(_ids)}"
    meta = tool.metadata
    meta.start = started
    try:
        if tool.kind == "coroutine":
            value = await tool.fn(**kwargs)
        else:
            value = await _call(tool, kwargs, None)
    except Exception as exc:
        return _failure(tool, exc, options, call_id, started, t0)
    finally:
        duration = time.perf_counter() - t0
        meta.end = started + duration
    if (
        type(value) is not plan.out_exact
        and tool.validate_output
        and tool._output_schema is not None
    ):
        invalid = _invalid_output(tool, value, call_id, started, duration)
        if invalid is not None:
            return invalid
    result = _new_result(ToolResult)
    result.value = value
    result.is_error = False
    result.error = None
    result.tool_name = tool.name
    result.call_id = call_id
    result.started_at = started
    result.duration = duration
    result._content = None
    result._max_chars = options.max_content_chars
    return result


def _invalid_output(
    tool: Tool, value: Any, call_id: str, started: float, duration: float
) -> ToolResult | None:
    """The error result for a value that breaks the declared output type, or None."""
    problem = _check_output(tool, value)
    if problem is None:
        return None
    return error_result(
        "output_invalid",
        f"Tool '{tool.name}' returned a value that does not match its declared output "
        f"type: {problem}",
        tool_name=tool.name,
        call_id=call_id,
        started_at=started,
        duration=duration,
    )


_new_result = object.__new__
_PLAIN_OUTPUTS = (str, int, float, bool, dict, list)


def _check_output(tool: Tool, value: Any) -> str | None:
    """Why ``value`` breaks the tool's declared output type, or None when it does not."""
    out_type = tool._output_type
    if out_type in _PLAIN_OUTPUTS:
        if isinstance(value, out_type) and not (
            out_type in (int, float) and isinstance(value, bool)
        ):
            return None
        if out_type is float and type(value) is int:
            return None
        return f"expected {out_type.__name__}, got {type(value).__name__}"
    adapter = tool._output_adapter
    if adapter is None:
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
    hook_errors: list[BaseException],
) -> AsyncGenerator[Any, None]:
    """Iterate a generator tool under its lock and timeout, firing on_yield per item.

    The lock covers the iteration and the on_yield hooks. An exception raised by a hook is
    recorded in ``hook_errors`` before it propagates, so callers can tell it from a failure
    of the tool. The timeout bounds the whole iteration; its expiry raises ``_TimedOut``.
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
                                raise _TimedOut from None
                            raise
                except StopAsyncIteration:
                    break
                items.append(item)
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


async def _items(tool: Tool, kwargs: dict[str, Any]) -> AsyncGenerator[Any, None]:
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

    try:
        while True:
            item = await loop.run_in_executor(None, step)
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
    tool: Tool,
    arguments: Mapping[str, Any] | str | bytes | None,
    context: ToolContext | None,
    options: CallOptions | None,
) -> AsyncIterator[Any]:
    """Yield the items of a generator tool as they are produced; see ``Tool.stream``."""
    if not tool.is_generator:
        raise _wrong_run_method(tool)
    options = options or DEFAULT_OPTIONS
    started = time.time()
    t0 = time.perf_counter()
    call_id = context.call_id if context is not None and context.call_id else _next_call_id()
    prepared = _prepare(tool, arguments, context, options, call_id, started)
    if isinstance(prepared, ToolResult):
        raise InvalidArgumentsError(prepared)
    if tool._plan.unbound:
        raise InvalidArgumentsError(_unbound_result(tool, call_id, started))
    kwargs, ctx = prepared
    await _before_hooks(tool, kwargs, ctx, options)
    items: list[Any] = []
    hook_errors: list[BaseException] = []
    meta = tool.metadata
    meta.start = started
    try:
        try:
            async with contextlib.aclosing(
                _iterate(tool, kwargs, ctx, options, items, hook_errors)
            ) as iterator:
                async for item in iterator:
                    yield item
        finally:
            meta.end = time.time()
    except GeneratorExit:
        # The consumer stopped early (and closed the stream): after hooks see the partial list.
        await _after_stream(tool, items, call_id, ctx, options, started, t0)
        raise
    except _TimedOut:
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
            await _error_hooks(tool, exc, ctx, options)
        raise
    await _after_stream(tool, items, call_id, ctx, options, started, t0)


def _wrong_run_method(tool: Tool) -> WrongRunMethodError:
    return WrongRunMethodError(
        f"tool {tool.name!r} is not a generator; use `await tool.invoke(...)` instead of "
        "`tool.stream(...)`"
    )


async def _after_stream(
    tool: Tool,
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
        result = ToolResult(
            items[-1] if items else None,
            tool_name=tool.name,
            call_id=call_id,
            started_at=started,
            duration=time.perf_counter() - t0,
        )
        for hook in options.hooks.after:
            await call_hook(hook, tool=tool, result=result, context=ctx)
