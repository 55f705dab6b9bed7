"""OpenTelemetry tracing of tool calls: ``instrument()`` makes a span of every ``Toolset.call``.

Tracing is opt-in, so that ``import toolpacks`` never loads OpenTelemetry and a process that
happens to have it installed (many frameworks depend on ``opentelemetry-api``) traces nothing
it did not ask for. ``instrument()`` traces every toolset of the process, those built
before and after it: in-process calls through the framework adapters and calls served over
MCP alike. ``instrument(toolset)`` traces one toolset (and the copies the adapters make of
it for one call).

One span per call, named ``execute_tool <exposed name>`` after OpenTelemetry's generative-AI
conventions, started when ``Toolset.call`` is, so it also covers calls the gate refuses
(invalid arguments, an unknown tool, a denied call, one waiting for approval). It is a child
of the caller's current span, and what the tool traces nests under it. Its attributes:

- ``gen_ai.operation.name``: ``"execute_tool"``; ``gen_ai.tool.name``: the exposed name;
  ``gen_ai.tool.call.id``: the call id;
- ``toolpacks.tool.qualified_name``, ``toolpacks.pack``, ``toolpacks.agent`` (when known);
- ``toolpacks.outcome``: ``"ok"`` or the error kind (``invalid_arguments``, ``denied``,
  ``tool_error``, ``timeout``...); for an error, ``error.type`` (the kind, or the type of an
  exception that escaped the call) and the span's status is ERROR with that same text;
- ``toolpacks.duration_ms``: the call's wall time.

Argument values, results and error messages are never put in a span: they may hold
secrets or personal data, and error messages can quote arguments.

Requires the ``otel`` extra: ``pip install 'toolpacks[otel]'`` (``opentelemetry-api``;
export spans with the OpenTelemetry SDK of your choice).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from toolpacks._version import __version__
from toolpacks.core._context import ToolContext
from toolpacks.core._result import ToolResult
from toolpacks.exceptions import ToolNotFoundError
from toolpacks.host._toolset import Toolset
from toolpacks.integrations._common import framework_missing

try:
    from opentelemetry import trace
    from opentelemetry.trace import Status, StatusCode
except ImportError as exc:  # pragma: no cover - the extra is installed where tests run
    raise framework_missing("OpenTelemetry", "otel", exc) from exc

__all__ = ["instrument", "uninstrument"]

SCOPE = "toolpacks"
"""The instrumentation scope (tracer name) of toolpacks' spans."""


class _Tracer:
    """``Toolset.tracer``: runs a call inside a span that says what happened, not with what.

    An object rather than a function, so that set on the ``Toolset`` class it is not bound
    as a method.
    """

    __slots__ = ("tracer",)

    def __init__(self, tracer: trace.Tracer) -> None:
        self.tracer = tracer

    async def __call__(
        self,
        toolset: Toolset,
        name: str,
        context: ToolContext,
        run: Callable[[], Awaitable[ToolResult]],
    ) -> ToolResult:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.call.id": context.call_id,
        }
        try:
            entry = toolset.entry(name)
        except ToolNotFoundError:
            exposed = name
        else:
            exposed = entry.exposed
            attributes["toolpacks.tool.qualified_name"] = entry.qualified
            attributes["toolpacks.pack"] = entry.pack
        attributes["gen_ai.tool.name"] = exposed
        if context.agent_id is not None:
            attributes["toolpacks.agent"] = context.agent_id
        with self.tracer.start_as_current_span(
            f"execute_tool {exposed}",
            kind=trace.SpanKind.INTERNAL,
            attributes=attributes,
            record_exception=False,  # an exception's text may quote argument values
            set_status_on_exception=False,
        ) as span:
            started = time.perf_counter()
            try:
                result = await run()
            except BaseException as exc:
                _end(span, started, "exception", type(exc).__qualname__)
                raise
            if result.error is None:
                _end(span, started, "ok", None)
            else:
                _end(span, started, result.error.kind, result.error.kind)
            return result


def _end(span: trace.Span, started: float, outcome: str, error: str | None) -> None:
    span.set_attribute("toolpacks.outcome", outcome)
    span.set_attribute("toolpacks.duration_ms", (time.perf_counter() - started) * 1000.0)
    if error is not None:
        span.set_attribute("error.type", error)
        span.set_status(Status(StatusCode.ERROR, error))


def instrument(
    toolset: Toolset | None = None, *, tracer_provider: trace.TracerProvider | None = None
) -> None:
    """Make a span of every call of ``toolset``, or of every toolset when it is None.

    Args:
        toolset: The toolset to trace; None traces every toolset of this process (those
            already built too), served ones included.
        tracer_provider: Where spans go; None uses the global provider
            (``opentelemetry.trace.set_tracer_provider``), even one set later.

    Raises:
        TypeError: ``toolset`` is not a toolpacks ``Toolset``.

    Example:
        >>> from toolpacks import Toolset, tool
        >>> @tool
        ... def ping() -> str:
        ...     '''Ping.'''
        ...     return "pong"
        >>> toolset = Toolset([ping])
        >>> instrument(toolset)
        >>> toolset.call_sync("ping").value
        'pong'
        >>> uninstrument(toolset)
    """
    tracer = _Tracer(trace.get_tracer(SCOPE, __version__, tracer_provider=tracer_provider))
    if toolset is None:
        Toolset.tracer = tracer
        return
    _check(toolset)
    toolset.tracer = tracer


def uninstrument(toolset: Toolset | None = None) -> None:
    """Stop tracing ``toolset`` (what ``instrument(toolset)`` started), or every toolset.

    Args:
        toolset: The toolset; None ends what ``instrument()`` started for every toolset
            (a toolset instrumented on its own stays traced).
    """
    if toolset is None:
        Toolset.tracer = None
        return
    _check(toolset)
    toolset.__dict__.pop("tracer", None)


def _check(toolset: object) -> None:
    if not isinstance(toolset, Toolset):
        raise TypeError(
            f"instrument() takes a toolpacks Toolset (or nothing, for every toolset), "
            f"got {type(toolset).__name__}"
        )
