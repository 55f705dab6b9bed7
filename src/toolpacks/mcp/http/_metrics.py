"""What the HTTP server tells its operators: one access-log record per call, and counters.

Each ``tools/call`` logs one record on the ``toolpacks.mcp.access`` logger (INFO): the agent,
the tool, the outcome and the duration, never an argument value. The record's message reads
``call agent=A tool=T outcome=O duration_ms=D``, and the same values are attributes of the
record (``agent``, ``tool``, ``outcome``, ``duration``) for structured formatters.

Outcomes: ``ok``; ``error`` (an error result: bad arguments, a failing tool, a refusal);
``unknown_tool`` (the protocol error for a name the server does not list; its tool label is
empty, so clients cannot grow the metrics with names of their choosing); ``cancelled`` (the
client went away, or the server stopped before the call finished).

The counters are kept per process: with ``--workers N`` each worker counts the requests it
served, and ``/metrics`` answers with the counters of the worker that took the scrape.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

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


def _label(value: str) -> str:
    """A Prometheus label value, escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class CallMetrics:
    """Counters of one server process: calls by agent, tool and outcome, and refusals."""

    def __init__(self) -> None:
        self.calls: defaultdict[tuple[str, str, str], int] = defaultdict(int)
        """Calls answered, by (agent, tool, outcome)."""
        self.seconds: defaultdict[tuple[str, str], float] = defaultdict(float)
        """Seconds spent in calls, by (agent, tool)."""
        self.in_flight: defaultdict[str, int] = defaultdict(int)
        """Calls running now, by agent."""
        self.refused: defaultdict[str, int] = defaultdict(int)
        """Requests refused before the MCP layer, by reason (``unauthorized``, ``origin``,
        ``host``, ``too_large``, ``method``)."""
        self.cancelled: list[str] = []
        """Calls cancelled so far (``agent/tool``): abandoned when the server stopped."""

    def record(self, agent: str, tool: str, outcome: str, seconds: float) -> None:
        """Count one answered call and write its access record."""
        self.calls[(agent, tool, outcome)] += 1
        self.seconds[(agent, tool)] += seconds
        access_log.info(
            "call agent=%s tool=%s outcome=%s duration_ms=%.1f",
            agent,
            tool,
            outcome,
            seconds * 1000,
            extra={"agent": agent, "tool": tool, "outcome": outcome, "duration": seconds},
        )

    def render(self) -> str:
        """The counters in the Prometheus text exposition format (version 0.0.4)."""
        lines = [
            "# HELP toolpacks_mcp_calls_total MCP tool calls answered, by agent, tool, outcome.",
            "# TYPE toolpacks_mcp_calls_total counter",
        ]
        for (agent, tool, outcome), count in sorted(self.calls.items()):
            labels = f'agent="{_label(agent)}",tool="{_label(tool)}",outcome="{outcome}"'
            lines.append(f"toolpacks_mcp_calls_total{{{labels}}} {count}")
        lines += [
            "# HELP toolpacks_mcp_call_duration_seconds Time spent answering tool calls.",
            "# TYPE toolpacks_mcp_call_duration_seconds summary",
        ]
        counts: defaultdict[tuple[str, str], int] = defaultdict(int)
        for (agent, tool, _), count in self.calls.items():
            counts[(agent, tool)] += count
        for (agent, tool), total in sorted(self.seconds.items()):
            labels = f'agent="{_label(agent)}",tool="{_label(tool)}"'
            lines.append(f"toolpacks_mcp_call_duration_seconds_sum{{{labels}}} {total:.6f}")
            lines.append(
                f"toolpacks_mcp_call_duration_seconds_count{{{labels}}} {counts[(agent, tool)]}"
            )
        lines += [
            "# HELP toolpacks_mcp_calls_in_flight MCP tool calls running now, by agent.",
            "# TYPE toolpacks_mcp_calls_in_flight gauge",
        ]
        for agent, running in sorted(self.in_flight.items()):
            lines.append(f'toolpacks_mcp_calls_in_flight{{agent="{_label(agent)}"}} {running}')
        lines += [
            "# HELP toolpacks_mcp_refused_requests_total HTTP requests refused, by reason.",
            "# TYPE toolpacks_mcp_refused_requests_total counter",
        ]
        for reason, count in sorted(self.refused.items()):
            lines.append(f'toolpacks_mcp_refused_requests_total{{reason="{reason}"}} {count}')
        return "\n".join(lines) + "\n"


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
        started = time.perf_counter()
        metrics.in_flight[agent] += 1
        outcome = "failed"
        try:
            result = await handler(ctx, params)
            outcome = "error" if result.is_error else "ok"
            return result
        except MCPError:
            outcome = "unknown_tool" if not tool else "failed"
            raise
        except asyncio.CancelledError:
            outcome = "cancelled"
            metrics.cancelled.append(f"{agent}/{name}" if tool else agent)
            raise
        finally:
            metrics.in_flight[agent] -= 1
            metrics.record(agent, tool, outcome, time.perf_counter() - started)

    return call_tool
