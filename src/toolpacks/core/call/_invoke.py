"""Invoking a tool: the general path and the short one, each ending in a ``ToolResult``.

Everything that can be decided once per tool (what to inject, which checks apply) is decided
by its ``CallPlan``, built by ``plan_of`` on the tool's first call and handed down from there;
a call does only what that call needs. The general path (``invoke``) walks straight: parse →
check → validate (the gate's ``prepare``) → authorize (the gatekeeper) → run (``_run``;
generators are ``_generators``') → outcome (``_outcome``). The short path (``_fast_invoke``)
does the same for a plain tool with no hooks, and hands anything that needs a message to the
general path.

The parts a call needs (the gate, argument checks, results, outcomes, the watchdog, and with
them ``logging`` and ``json``) are imported when the first plan of the process is made, not
when a tool is defined: ``_load_engine`` binds them as this module's globals, and ``plan_of``
runs it before it returns any plan, so every path that holds a plan finds them. A call pays
nothing for this; ``from toolpacks import tool`` saves about 10 ms.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from toolpacks.core._hooks import EMPTY_HOOKS, call_hook
from toolpacks.core._principal import scope_refusal
from toolpacks.core.call._plan import CallPlan, before_first_plan, plan_of
from toolpacks.core.call._run import (
    Refused,
    TimedOut,
    before_hooks,
    call_fn,
    call_ids,
    error_hooks,
    guarded,
    next_call_id,
)

if TYPE_CHECKING:
    import asyncio

    from toolpacks.core._context import ToolContext
    from toolpacks.core._jsonargs import (
        QUICK_TEXT,
        ArgumentLimits,
        ArgumentsParseError,
        check_arguments,
        quick_parse,
    )
    from toolpacks.core._kinds import KindError
    from toolpacks.core._result import ToolResult, error_result
    from toolpacks.core.call._gate import prepare, public_arguments
    from toolpacks.core.call._generators import iterate
    from toolpacks.core.call._options import DEFAULT_OPTIONS, CallOptions
    from toolpacks.core.call._outcome import (
        SIMPLE_VALUES,
        failure_result,
        invalid_output,
        secret_arguments,
        timeout_result,
        unbound_result,
        unsendable_result,
    )
    from toolpacks.core.define._definition import ToolDefinition
else:
    from toolpacks.core.call._run import asyncio  # imported on first use, not with the module

__all__ = ["Gatekeeper", "invoke", "start"]

Gatekeeper = Callable[[dict[str, Any], "ToolContext | None"], Awaitable["ToolResult | None"]]
"""Asked with the validated arguments (secrets masked) before the tool runs; a result refuses."""

_loaded = False
_load_lock = threading.Lock()


def _load_engine() -> None:
    """Import what a call needs and bind it here (once; see the module's docstring)."""
    global _loaded
    with _load_lock:
        if _loaded:
            return
        from toolpacks.core import _jsonargs, _result
        from toolpacks.core._kinds import KindError
        from toolpacks.core.call import _gate, _outcome
        from toolpacks.core.call._generators import iterate
        from toolpacks.core.call._options import DEFAULT_OPTIONS, CallOptions
        from toolpacks.core.call._watchdog import register_call_code

        globals().update(
            prepare=_gate.prepare,
            public_arguments=_gate.public_arguments,
            iterate=iterate,
            QUICK_TEXT=_jsonargs.QUICK_TEXT,
            ArgumentsParseError=_jsonargs.ArgumentsParseError,
            check_arguments=_jsonargs.check_arguments,
            quick_parse=_jsonargs.quick_parse,
            KindError=KindError,
            DEFAULT_OPTIONS=DEFAULT_OPTIONS,
            CallOptions=CallOptions,
            SIMPLE_VALUES=_outcome.SIMPLE_VALUES,
            failure_result=_outcome.failure_result,
            invalid_output=_outcome.invalid_output,
            secret_arguments=_outcome.secret_arguments,
            timeout_result=_outcome.timeout_result,
            unbound_result=_outcome.unbound_result,
            unsendable_result=_outcome.unsendable_result,
            ToolResult=_result.ToolResult,
            error_result=_result.error_result,
        )
        register_call_code(invoke.__code__)
        register_call_code(_fast_invoke.__code__)
        _loaded = True


async def invoke(
    tool: ToolDefinition,
    arguments: Mapping[str, Any] | str | bytes | None,
    context: ToolContext | None,
    options: CallOptions | None,
    gatekeeper: Gatekeeper | None = None,
) -> ToolResult:
    """Run ``tool`` with model-supplied ``arguments``; see ``Tool.invoke``.

    ``gatekeeper`` (a toolset's permissions and approval) is asked once the arguments have
    passed the gate, so a policy or a person never decides on arguments that are invalid.
    """
    plan = tool._plan or plan_of(tool)  # built once, on the first call (the engine loads then)
    options = options or DEFAULT_OPTIONS
    started = time.time()
    t0 = time.perf_counter()
    call_id = context.call_id if context is not None and context.call_id else next_call_id()
    if tool.scopes:  # fail closed, before the arguments are even read
        who = context.principal if context is not None else None
        why = scope_refusal(who, tool.scopes, f"Tool '{tool.name}'")
        if why is not None:
            return error_result("denied", why, tool_name=tool.name, call_id=call_id)
    # parse → check → validate
    prepared = prepare(tool, plan, arguments, context, options, call_id, started)
    if type(prepared) is ToolResult:
        return prepared
    kwargs, ctx = prepared  # type: ignore[misc]
    if plan.unbound:
        return unbound_result(tool, call_id, started)
    # authorize: permissions and approval, on validated arguments with secrets masked
    if gatekeeper is not None:
        refusal = await gatekeeper(public_arguments(plan, kwargs), ctx)
        if refusal is not None:
            return refusal
    if tool._loop_blocks >= tool.max_abandoned_threads and tool.kind in (
        "coroutine",
        "async_generator",
    ):
        return error_result(
            "tool_error",
            f"Tool '{tool.name}' is unavailable: it blocked the event loop "
            f"{tool._loop_blocks} times. Do not retry it.",
            tool_name=tool.name,
            call_id=call_id,
            started_at=started,
        )
    # run: hooks around the function, under its lock and timeout
    hooked = bool(tool.hooks) or bool(options.hooks)
    if hooked:
        await before_hooks(tool, plan, kwargs, ctx, options)
    meta = tool.metadata
    meta.start = started
    hook_errors: list[BaseException] | None = None
    try:
        try:
            if tool.kind in ("generator", "async_generator"):
                items: list[Any] = []
                hook_errors = []
                async with contextlib.aclosing(
                    iterate(tool, kwargs, ctx, options, items, hook_errors)
                ) as iterator:
                    async for _ in iterator:
                        pass
                value: Any = items[-1] if items else None
                after_payload: Any = items
                produced = bool(items)  # an empty generator has no item to check
            elif tool.lock is None and tool.timeout is None:
                value = await (
                    tool.fn(**kwargs) if tool.kind == "coroutine" else call_fn(tool, kwargs, ctx)
                )
                after_payload = value
                produced = True
            else:
                value = await guarded(tool, lambda: call_fn(tool, kwargs, ctx))
                after_payload = value
                produced = True
        finally:
            meta.end = time.time()
    except TimedOut:
        if ctx is not None:
            ctx.cancel()
        return timeout_result(tool, call_id, started, t0)
    except Refused as exc:
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
    except BaseException as exc:  # SystemExit, KeyboardInterrupt... from a tool: a result
        if hook_errors and exc is hook_errors[0]:
            raise  # an on_yield hook failed: hook exceptions are not swallowed
        if hooked:
            await error_hooks(tool, exc, ctx, options)
        secrets = secret_arguments(plan, kwargs) if plan.secret_params else ()
        return failure_result(tool, exc, options, call_id, started, t0, secrets)
    # outcome: a timeout that could not interrupt, an invalid output, a value JSON cannot hold
    if tool.timeout is not None and time.perf_counter() - t0 > tool.timeout:
        # An async tool that blocked the loop past its timeout could not be interrupted.
        return timeout_result(tool, call_id, started, t0)
    if tool.validate_output and tool._output_schema is not None and produced:
        invalid = invalid_output(tool, value, call_id, started, time.perf_counter() - t0)
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
    if type(value) not in SIMPLE_VALUES:
        unsendable = unsendable_result(tool, result)
        if unsendable is not None:
            return unsendable
    if hooked:
        for hook in tool.hooks.after:
            await call_hook(hook, after_payload)
        for hook in options.hooks.after:
            await call_hook(hook, tool=tool, result=result, context=ctx)
    return result


def start(
    tool: ToolDefinition,
    arguments: Mapping[str, Any] | str | bytes | None = None,
    context: ToolContext | None = None,
    *,
    options: CallOptions | None = None,
) -> Coroutine[Any, Any, ToolResult]:
    """Validate ``arguments`` (a dict or JSON text), run the tool and return a result.

    Never raises for bad arguments or a failing tool: the result says what went wrong in a
    form a model can act on. Exceptions raised by hooks, and cancellation, propagate.

    Args:
        tool: The tool (``Tool.invoke`` is this function, so ``self``).
        arguments: The arguments as a mapping or a JSON object text.
        context: Who is calling; injected into a ``ToolContext`` parameter.
        options: Call options from a host or toolset (hooks, limits, error exposure).
    """
    # ``Tool.invoke`` is this function. It takes the short path when nothing but the gate,
    # validation and the call itself is needed (no hooks, lock, timeout, fixed or injected
    # arguments); else the general one.
    plan = tool._plan or plan_of(tool)
    hooks = tool.hooks
    if (
        plan.fast
        and (type(arguments) is dict or type(arguments) is str)
        and (options is None or (options.hooks is EMPTY_HOOKS and options.extra_args is None))
        and not (hooks.before or hooks.after or hooks.error or hooks.on_yield)
    ):
        return _fast_invoke(tool, plan, arguments, context, options or DEFAULT_OPTIONS)
    return invoke(tool, arguments, context, options)


async def _fast_invoke(
    tool: ToolDefinition,
    plan: CallPlan,
    arguments: dict[str, Any] | str,
    context: ToolContext | None,
    options: CallOptions,
) -> ToolResult:
    """The short path: check, validate, call, wrap.

    Arguments that need a message go to the general path, which produces the error result
    (bad arguments never reach the tool here).
    """
    limits = options.limits
    raw = arguments  # what the general path gets when it must word an error
    if isinstance(arguments, str):
        parsed = quick_parse(arguments, limits)  # caps and duplicate keys, from the text
        if parsed is None:
            return await invoke(tool, raw, context, options)
        arguments = parsed
    # Every check compiled into the validator (``_gate_compiled``): nothing to walk here.
    # Else one pass over the values: the caps for scalars (the full walk for anything else)
    # and, for a tool of scalar parameters, booleans and numbers where the schema wants them.
    # Keys need no look here: a closed tool's validator refuses any key it does not declare.
    validate = plan.gate if limits is plan.gate_limits else plan.gate_for(limits)
    if validate is not None:
        pass
    elif not plan.inline_checks or len(arguments) > limits._quick_items:
        if not _passes(plan, arguments, limits):
            return await invoke(tool, raw, context, options)
    else:
        numbers = plan.number_params
        booleans = plan.bool_params
        low, high = limits._int_range
        for key, item in arguments.items():
            kind = type(item)
            if kind is int:
                if key not in booleans and low < item < high:
                    continue
            elif kind is str:
                if (
                    len(item) <= QUICK_TEXT
                    and item.isascii()
                    and key not in numbers  # type: ignore[operator]
                    and key not in booleans
                ):
                    continue
            elif kind is bool:
                if key not in numbers:  # type: ignore[operator]
                    continue
            elif kind is float:
                if item - item == 0.0 and key not in booleans:  # finite
                    continue
            elif item is None:
                continue
            # Anything else (text with non-ASCII, long text, containers, a doubtful kind):
            # the full checks; the general path words the error when there is one.
            if not _passes(plan, arguments, limits):
                return await invoke(tool, raw, context, options)
            break
    try:
        kwargs = (validate or plan.validate)(arguments)
    except ValueError:
        return await invoke(tool, raw, context, options)
    started = time.time()
    t0 = time.perf_counter()
    call_id = (
        context.call_id if context is not None and context.call_id else f"call_{next(call_ids)}"
    )
    meta = tool.metadata
    meta.start = started
    try:
        if tool.kind == "coroutine":
            value = await tool.fn(**kwargs)
        else:
            value = await call_fn(tool, kwargs, None)
    except asyncio.CancelledError:
        raise
    except BaseException as exc:  # SystemExit, KeyboardInterrupt... from a tool: a result
        return failure_result(tool, exc, options, call_id, started, t0)
    finally:
        duration = time.perf_counter() - t0
        meta.end = started + duration
    checked = type(value) is plan.out_simple  # the declared scalar type: nothing to check
    if not checked and tool.validate_output and tool._output_schema is not None:
        invalid = invalid_output(tool, value, call_id, started, duration)
        if invalid is not None:
            return invalid
    result = new_result(ToolResult)
    result.value = value
    result.is_error = False
    result.error = None
    result.tool_name = tool.name
    result.call_id = call_id
    result.started_at = started
    result.duration = duration
    result._content = None
    result._max_chars = options.max_content_chars
    if not checked and type(value) not in SIMPLE_VALUES:
        return unsendable_result(tool, result) or result
    return result


def _passes(plan: CallPlan, arguments: dict[str, Any], limits: ArgumentLimits) -> bool:
    """Whether ``arguments`` pass the full gate checks (caps, then kinds at any depth)."""
    try:
        check_arguments(arguments, limits)
        if plan.kinds is not None:
            plan.kinds(arguments)
    except (ArgumentsParseError, KindError):
        return False
    return True


new_result = object.__new__


# Registered last: once a plan exists (one made directly, before ``Tool.invoke`` was read)
# the loader runs at once, and it registers the functions defined above.
before_first_plan(_load_engine)
