"""What the HTTP server tells its operators: one access-log record per call, and counters.

Each ``tools/call`` logs one record on the ``toolpacks.mcp.access`` logger (INFO): the agent,
the tool, the outcome and the duration, never an argument value. The record's message reads
``call agent=A tool=T outcome=O duration_ms=D``, and the same values are attributes of the
record (``agent``, ``tool``, ``outcome``, ``duration``) for structured formatters.

Outcomes: ``ok``; ``error`` (an error result: bad arguments, a failing tool, a refusal);
``unknown_tool`` (the protocol error for a name the server does not list; its tool label is
empty, so clients cannot grow the metrics with names of their choosing); ``cancelled`` (the
client went away, or the server stopped before the call finished).

With ``--workers N`` the workers share their values through ``prometheus_client``'s
multiprocess mode, so ``/metrics`` answers with the whole server's counts whichever worker
takes the scrape.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import mcp_types
    from mcp.server.context import ServerRequestContext

__all__ = ["ACCESS_LOGGER", "CallMetrics", "CallToolHandler", "observed"]

ACCESS_LOGGER = "toolpacks.mcp.access"
"""The logger of the per-call access records."""

access_log = logging.getLogger(ACCESS_LOGGER)

CallToolHandler = Callable[
    ["ServerRequestContext[Any]", "mcp_types.CallToolRequestParams"],
    Awaitable["mcp_types.CallToolResult"],
]
"""The SDK's ``tools/call`` handler signature."""


MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
"""Where ``prometheus_client`` keeps the values of every worker (set by the supervisor)."""
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
"""Upper bounds (seconds) of the call-latency histogram's buckets."""


class CallMetrics:
    """Counters of the server: calls by agent, tool and outcome, their latency, and refusals.

    Kept by ``prometheus_client`` (imported when the first app is built). In one process they
    live in this object's own registry. Under the worker supervisor, ``PROMETHEUS_MULTIPROC_DIR``
    is set in every worker, each writes its values there, and ``render`` sums them all, so a
    scrape answered by any worker shows the whole server and never goes backwards.
    """

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.multiprocess = bool(os.environ.get(MULTIPROC_ENV))
        """Whether the values are shared with the other workers (through files)."""
        self.registry = CollectorRegistry(auto_describe=True)
        """What ``render`` reads: these metrics, or every worker's when ``multiprocess``."""
        own = None if self.multiprocess else self.registry
        if self.multiprocess:
            from prometheus_client.multiprocess import MultiProcessCollector

            MultiProcessCollector(self.registry)  # type: ignore[no-untyped-call]
        self.calls = Counter(
            "toolpacks_mcp_calls",
            "MCP tool calls answered, by agent, tool, outcome.",
            ["agent", "tool", "outcome"],
            registry=own,
        )
        """Calls answered, by (agent, tool, outcome)."""
        self.seconds = Histogram(
            "toolpacks_mcp_call_duration_seconds",
            "Time spent answering tool calls.",
            ["agent", "tool"],
            buckets=BUCKETS,
            registry=own,
        )
        """Seconds spent in calls, by (agent, tool)."""
        self.in_flight = Gauge(
            "toolpacks_mcp_calls_in_flight",
            "MCP tool calls running now, by agent.",
            ["agent"],
            registry=own,
            multiprocess_mode="livesum",
        )
        """Calls running now, by agent (summed over the live workers)."""
        self.refused = Counter(
            "toolpacks_mcp_refused_requests",
            "HTTP requests refused, by reason.",
            ["reason"],
            registry=own,
        )
        """Requests refused before the MCP layer, by reason (``unauthorized``, ``origin``,
        ``host``, ``too_large``, ``method``; ``busy``, ``header_timeout``, ``body_timeout``
        for connections)."""
        self.cancelled: list[str] = []
        """Calls cancelled so far (``agent/tool``): abandoned when the server stopped."""

    def refuse(self, reason: str) -> None:
        """Count one request (or connection) refused before the MCP layer."""
        self.refused.labels(reason).inc()

    def record(self, agent: str, tool: str, outcome: str, seconds: float) -> None:
        """Count one answered call and write its access record."""
        self.calls.labels(agent, tool, outcome).inc()
        self.seconds.labels(agent, tool).observe(seconds)
        access_log.info(
            "call agent=%s tool=%s outcome=%s duration_ms=%.1f",
            agent,
            tool,
            outcome,
            seconds * 1000,
            extra={"agent": agent, "tool": tool, "outcome": outcome, "duration": seconds},
        )

    def render(self) -> str:
        """The metrics in the Prometheus text exposition format (version 0.0.4).

        Written here rather than by ``prometheus_client.generate_latest``: labels keep the
        order documented (agent, tool, outcome), counts print as integers, and the
        ``_created`` series (one per label set, of no use to ``rate()``) are left out.
        """
        lines: list[str] = []
        for family in self.registry.collect():
            exposed = family.name + ("_total" if family.type == "counter" else "")
            lines.append(f"# HELP {exposed} {family.documentation}")
            lines.append(f"# TYPE {exposed} {family.type}")
            for sample in family.samples:
                if sample.name.endswith("_created"):
                    continue
                ordered = sorted(sample.labels.items(), key=lambda kv: _LABEL_ORDER.get(kv[0], 9))
                labels = ",".join(f'{key}="{_label(value)}"' for key, value in ordered)
                lines.append(f"{sample.name}{{{labels}}} {_number(sample.value)}")
        return "\n".join(lines) + "\n"


_LABEL_ORDER = {"agent": 0, "tool": 1, "outcome": 2, "reason": 3, "le": 4}


def _label(value: str) -> str:
    """A Prometheus label value, escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


T = TypeVar("T")


def _number(value: float) -> str:
    if value == int(value) and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


async def counted(
    metrics: CallMetrics,
    agent: str,
    name: str,
    tool: str,
    gauge: Any,
    run: Awaitable[T],
    is_error: Callable[[T], bool],
    unknown: type[BaseException],
) -> T:
    """Await ``run`` (one call of ``name``), timed, logged and counted under ``agent``.

    ``tool`` is ``name`` when the agent has such a tool, else "" (so that unknown names do
    not become labels); ``gauge`` is the agent's in-flight gauge; ``unknown`` is what ``run``
    raises for a tool it does not know. Every road that answers ``tools/call`` counts here.
    """
    started = time.perf_counter()
    gauge.inc()
    outcome = "failed"
    try:
        result = await run
        outcome = "error" if is_error(result) else "ok"
        return result
    except unknown:
        outcome = "unknown_tool" if not tool else "failed"
        raise
    except asyncio.CancelledError:
        outcome = "cancelled"
        metrics.cancelled.append(f"{agent}/{name}" if tool else agent)
        raise
    finally:
        gauge.dec()
        metrics.record(agent, tool, outcome, time.perf_counter() - started)


def observed(
    agent: str, names: frozenset[str], handler: CallToolHandler, metrics: CallMetrics
) -> CallToolHandler:
    """``handler`` (the toolset server's ``call_tool``), timed, logged and counted."""
    from mcp import MCPError

    async def call_tool(
        ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        name = params.name
        tool = name if name in names else ""
        gauge = metrics.in_flight.labels(agent)
        run = handler(ctx, params)
        failed = lambda r: bool(getattr(r, "is_error", False))  # noqa: E731  # input_required: no
        return await counted(metrics, agent, name, tool, gauge, run, failed, MCPError)

    return call_tool
