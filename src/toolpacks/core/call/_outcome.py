"""What a finished call becomes when it is not a plain success.

A failure (masked unless exposed, secrets scrubbed, the traceback logged), a timeout, an
unbound method, or a return value that breaks the declared output type.
"""

from __future__ import annotations

import logging
import time
import traceback
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from toolpacks.core._content import BadContent
from toolpacks.core._result import ToolResult, Unsendable, error_result
from toolpacks.core._secrets import scrub
from toolpacks.core.call._options import CallOptions
from toolpacks.core.call._plan import CallPlan
from toolpacks.exceptions import ToolError

if TYPE_CHECKING:
    from toolpacks.core.define._definition import ToolDefinition

__all__ = [
    "SIMPLE_VALUES",
    "failure_result",
    "invalid_output",
    "secret_arguments",
    "timeout_result",
    "unbound_result",
    "unsendable_result",
]

SIMPLE_VALUES = frozenset({str, int, float, bool, type(None), dict, list})
"""Return value types not checked at call time: scalars always render; a dict or list is
rendered when its text is first read, and one holding a value JSON cannot hold renders as a
note naming the type (``ToolResult.content``), so a call pays for no rendering it skips."""

logger = logging.getLogger("toolpacks")


def failure_result(
    tool: ToolDefinition,
    exc: BaseException,
    options: CallOptions,
    call_id: str,
    started: float,
    t0: float,
    secrets: tuple[str, ...] = (),
) -> ToolResult:
    exc_type = type(exc).__qualname__
    if isinstance(exc, ToolError):
        message = f"Tool '{tool.name}' failed: {exception_text(exc)}"
    elif options.expose_errors:
        message = f"Tool '{tool.name}' failed: {exc_type}: {exception_text(exc)}"
    else:
        message = f"Tool '{tool.name}' failed with {exc_type}."
    hidden = tuple(s for s in (*options.redact, *secrets) if s)
    if not isinstance(exc, ToolError):
        trace = "".join(traceback.format_exception(exc))
        logger.error(
            "tool %r (call %s) raised %s\n%s", tool.name, call_id, exc_type, scrub(trace, hidden)
        )
    return error_result(
        "tool_error",
        scrub(message, hidden),
        tool_name=tool.name,
        call_id=call_id,
        exception_type=exc_type,
        started_at=started,
        duration=time.perf_counter() - t0,
    )


def exception_text(exc: BaseException) -> str:
    """``str(exc)``, or a note when the exception's own ``__str__`` fails."""
    try:
        return str(exc)
    except BaseException:  # the tool's code again: its failure must still become a result
        return f"<the text of {type(exc).__qualname__} could not be made>"


def secret_arguments(plan: CallPlan, kwargs: dict[str, Any]) -> tuple[str, ...]:
    """The values of this call's secret arguments, to scrub from messages.

    ``SecretStr`` values, and plain text a schema marks secret (``writeOnly``).
    """
    out: list[str] = []
    for name in plan.secret_params:
        value = kwargs.get(name)
        reveal = getattr(value, "get_secret_value", None)
        secret = reveal() if reveal is not None else value
        if isinstance(secret, str | bytes) and secret:
            out.append(secret if isinstance(secret, str) else secret.decode(errors="replace"))
    return tuple(out)


def timeout_result(
    tool: ToolDefinition, call_id: str, started: float, t0: float = 0.0
) -> ToolResult:
    return error_result(
        "timeout",
        f"Tool '{tool.name}' timed out after {tool.timeout:g} seconds.",
        tool_name=tool.name,
        call_id=call_id,
        started_at=started,
        duration=time.perf_counter() - t0 if t0 else 0.0,
    )


def unbound_result(tool: ToolDefinition, call_id: str, started: float) -> ToolResult:
    return error_result(
        "tool_error",
        f"Tool '{tool.name}' is a method; use it through an instance of its class.",
        tool_name=tool.name,
        call_id=call_id,
        started_at=started,
    )


def invalid_output(
    tool: ToolDefinition, value: Any, call_id: str, started: float, duration: float
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


_PLAIN_OUTPUTS = (str, int, float, bool, dict, list)


def _check_output(tool: ToolDefinition, value: Any) -> str | None:
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


def unsendable_result(tool: ToolDefinition, result: ToolResult) -> ToolResult | None:
    """Render ``result`` now; the error result when its value cannot be sent as JSON."""
    try:
        result.render()
    except BadContent as exc:
        return error_result(
            "output_invalid",
            f"Tool '{tool.name}' {exc}.",
            tool_name=tool.name,
            call_id=result.call_id,
            started_at=result.started_at,
            duration=result.duration,
        )
    except Unsendable as exc:
        return error_result(
            "output_invalid",
            f"Tool '{tool.name}' returned a value of type {exc}, which cannot be sent as "
            "JSON. Return a str, a number, a dict, a list, a pydantic model or a dataclass.",
            tool_name=tool.name,
            call_id=result.call_id,
            started_at=result.started_at,
            duration=result.duration,
        )
    return None
