"""The argument gate: what every call's arguments pass before any tool code runs.

Parsing JSON text under caps, the bool/number checks, validation against the tool's
parameters, strict-mode nulls, fixed-argument overrides, and the context to inject. Failures
become an ``invalid_arguments`` result that names each argument and says how to fix it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from toolpacks.core._context import CancelEvent, ToolContext
from toolpacks.core._jsonargs import (
    ArgumentsParseError,
    check_arguments,
    parse_arguments,
    quick_parse,
)
from toolpacks.core._kinds import KindError
from toolpacks.core._result import ArgumentError, ToolResult, error_result
from toolpacks.core.call._options import CallOptions
from toolpacks.core.call._plan import CallPlan

if TYPE_CHECKING:
    from toolpacks.core.define._definition import ToolDefinition

__all__ = ["invalid_arguments", "prepare", "public_arguments"]

logger = logging.getLogger("toolpacks")
_EMPTY: dict[str, Any] = {}


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _argument_errors(
    exc: ValidationError, plan: CallPlan, allowed: list[str], schema: Any = None
) -> list[ArgumentError]:
    details: list[ArgumentError] = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(part) for part in err["loc"])
        kind = err["type"]
        if kind == "extra_forbidden" and len(err["loc"]) > 1:
            message = _unexpected_field(schema, err["loc"][:-1])
        elif kind == "extra_forbidden":
            message = f"unexpected argument; allowed arguments are: {', '.join(allowed) or 'none'}"
        elif kind == "missing":
            message = "missing required argument"
        elif err["loc"] and err["loc"][0] in plan.secret_params:
            message = f"{err['msg']} (value redacted)"
        else:
            message = f"{err['msg']} (got {_short(err.get('input'))})"
        details.append(ArgumentError(loc, message))
    return details


def _unexpected_field(schema: Any, where: tuple[str | int, ...]) -> str:
    """The message for an unknown field of a nested object: the fields it takes."""
    from toolpacks.core.define._nested_extra import fields_at

    taken = fields_at(schema, where) if isinstance(schema, dict) else None
    return "unexpected field" + (
        f"; this object takes: {', '.join(taken) or 'no fields'}" if taken is not None else ""
    )


def invalid_arguments(
    tool: ToolDefinition, details: list[ArgumentError], call_id: str, started: float
) -> ToolResult:
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


def prepare(
    tool: ToolDefinition,
    plan: CallPlan,
    arguments: Mapping[str, Any] | str | bytes | None,
    context: ToolContext | None,
    options: CallOptions,
    call_id: str,
    started: float,
) -> tuple[dict[str, Any], ToolContext | None] | ToolResult:
    """Parse, check and validate; return the keyword arguments and context, or an error result.

    ``plan`` is the tool's ``CallPlan`` (``plan_of(tool)``), built before the call reaches here.
    A tool whose checks are compiled into a validator (``plan.gate``) is checked by it first;
    what it refuses gets the checks below, which word the error (or accept a lax value).
    """
    limits = options.limits
    gate = plan.gate if limits is plan.gate_limits else plan.gate_for(limits)
    if plan.fixed:
        gate = None  # call-time overrides of fixed arguments are checked on their own
    # parse: JSON text under the caps, duplicate keys refused in the text
    checked = False
    if arguments is None:
        arguments = _EMPTY
    elif isinstance(arguments, str | bytes | bytearray):
        parsed = (
            quick_parse(arguments, limits) if gate is not None and type(arguments) is str else None
        )
        if parsed is not None:
            arguments = parsed  # its values are the gate's to check
        else:
            try:
                arguments = parse_arguments(arguments, limits)
            except ArgumentsParseError as exc:
                return invalid_arguments(
                    tool, [ArgumentError(exc.argument, str(exc))], call_id, started
                )
            checked = True
    if type(arguments) is not dict:
        if not isinstance(arguments, Mapping):
            return invalid_arguments(
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
    kwargs: dict[str, Any] | None = None
    if gate is not None:
        try:
            kwargs = gate(arguments)
        except ValueError:
            kwargs = None
    if kwargs is None:
        checked_kwargs = _check_and_validate(
            tool, plan, arguments, checked, options, call_id, started
        )
        if type(checked_kwargs) is not dict:
            return checked_kwargs  # type: ignore[return-value]
        kwargs = checked_kwargs
    ctx = None
    streams = context is not None and context.channel is not None and tool.is_generator
    if plan.context_param is not None or options.hooks or tool.require_approval or streams:
        if context is None:
            ctx = ToolContext(call_id=call_id, tool_name=tool.name)
        else:
            # Each call gets its own cancellation signal: a timeout of one call must not
            # leave a context the application reuses marked as cancelled.
            ctx = replace(context, call_id=call_id, tool_name=tool.name, cancel_event=CancelEvent())
        if plan.context_param is not None:
            kwargs[plan.context_param] = ctx
    return kwargs, ctx


def _check_and_validate(
    tool: ToolDefinition,
    plan: CallPlan,
    arguments: dict[str, Any],
    checked: bool,
    options: CallOptions,
    call_id: str,
    started: float,
) -> dict[str, Any] | ToolResult:
    """The checks in Python, then validation: the keyword arguments, or an error result.

    ``checked``: the caps were applied as the text was parsed.
    """
    # check: the caps on parsed values, then booleans and numbers where the schema wants them
    if not checked:
        try:
            check_arguments(arguments, options.limits)
        except ArgumentsParseError as exc:
            return invalid_arguments(
                tool, [ArgumentError(exc.argument, str(exc))], call_id, started
            )
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
        if tool.signature is not None:  # and nested ones, which the plan would refuse
            from toolpacks.core.define._nested_extra import without_unknown_fields

            arguments = without_unknown_fields(tool.signature.input_schema, arguments)
    if plan.kinds is not None:
        try:
            plan.kinds(arguments)
        except KindError as exc:
            return invalid_arguments(
                tool, [ArgumentError(exc.where, exc.message)], call_id, started
            )
    # validate: the tool's own validator, then fixed arguments
    try:
        kwargs = plan.validate(arguments)
    except ValidationError as exc:
        retried = _without_strict_nulls(tool, plan, arguments)
        if retried is None:
            allowed = sorted(plan.params)
            details = _argument_errors(exc, plan, allowed, tool.input_schema)
            return invalid_arguments(tool, details, call_id, started)
        kwargs = retried
    except ValueError as exc:  # schema-only validators raise plain ValueError subclasses
        retried = _without_strict_nulls(tool, plan, arguments)
        if retried is None:
            details = getattr(exc, "details", None) or [ArgumentError("", str(exc))]
            return invalid_arguments(tool, list(details), call_id, started)
        kwargs = retried
    if plan.fixed:
        calls = plan.fixed_calls
        for key, value in plan.fixed.items():
            kwargs[key] = value() if key in calls else value
        if overrides:
            problems = _check_overrides(plan, overrides)
            if problems:
                return invalid_arguments(tool, problems, call_id, started)
            kwargs.update(overrides)
    return kwargs


def public_arguments(plan: CallPlan, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The validated arguments as hooks see them: secret values masked, no context."""
    if plan.context_param is None and not plan.secret_params:
        return kwargs
    from toolpacks.core._secrets import MASK

    return {
        k: (MASK if k in plan.secret_params else v)
        for k, v in kwargs.items()
        if k != plan.context_param
    }


def _without_strict_nulls(
    tool: ToolDefinition, plan: CallPlan, arguments: dict[str, Any]
) -> dict[str, Any] | None:
    """Validate again without the ``null`` values strict mode sends for omitted parameters.

    OpenAI strict schemas make every property required and nullable, so a model sends
    ``null`` for an optional parameter it leaves out. Returns None if dropping them does not
    help. Only reached when validation failed, so it costs valid calls nothing. Nested
    objects' optional fields are made nullable too, so a ``null`` at any depth is looked at.
    """
    if not _has_null(arguments):
        return None
    from toolpacks.core.call._strict_nulls import drop_strict_nulls

    cleaned = drop_strict_nulls(arguments, tool.input_schema)
    if cleaned == arguments:
        return None
    try:
        return plan.validate(cleaned)
    except (ValidationError, ValueError):
        return None


def _has_null(value: Any, depth: int = 0) -> bool:
    if value is None:
        return True
    if depth > 64:
        return False
    if isinstance(value, dict):
        return any(_has_null(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_has_null(v, depth + 1) for v in value)
    return False


def _check_overrides(plan: CallPlan, overrides: dict[str, Any]) -> list[ArgumentError]:
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
