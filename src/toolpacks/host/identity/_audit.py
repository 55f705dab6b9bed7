"""One audit record per call, on the ``toolpacks.audit`` logger.

Each record says when, which agent, for whom (the principal's subject or null), which tool
(its exposed name), the decision (``allowed``, or ``refused`` with a reason code), the
outcome and the duration. Never argument values, results or tokens. The record carries the
fields as a dict (``record.audit``) and its message is the same as one JSON line, so a
plain ``FileHandler`` writes JSON lines. Nothing is built when no handler wants the record.
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolpacks.core._result import ToolResult

__all__ = ["AUDIT_LOGGER", "audit_call", "audit_refusal", "decision_of"]

AUDIT_LOGGER = "toolpacks.audit"
"""The name of the logger audit records go to."""
_log = logging.getLogger(AUDIT_LOGGER)

REASONS = (
    "unknown_tool",
    "missing_scope",
    "agent_scope",
    "agent_not_allowed",
    "approval_denied",
    "policy_denied",
    "invalid_arguments",
    "credentials",
    "unauthenticated",
    "forbidden",
)
"""Reason codes of refusals (the HTTP half adds ``unauthenticated`` and ``forbidden``)."""


def decision_of(result: ToolResult) -> tuple[str, str | None, str]:
    """``(decision, reason, outcome)`` of a call's result."""
    error = result.error
    if error is None:
        return "allowed", None, "ok"
    kind = error.kind
    if kind == "not_found":
        return "refused", "unknown_tool", "error"
    if kind == "invalid_arguments":
        return "refused", "invalid_arguments", "error"
    if kind == "denied":
        message = error.message
        if "missing scope" in message or "no principal" in message:
            return "refused", "missing_scope", "error"
        if "approval" in message:
            return "refused", "approval_denied", "error"
        if "not available to agent" in message:
            return "refused", "agent_not_allowed", "error"
        return "refused", "policy_denied", "error"
    return "allowed", None, kind  # it ran: tool_error, timeout, cancelled, output_invalid


def _emit(record: dict[str, Any]) -> None:
    _log.info(json.dumps(record, separators=(",", ":")), extra={"audit": record})


def audit_call(
    agent: str | None,
    subject: str | None,
    tool: str,
    result: ToolResult,
    duration: float,
    *,
    reason: str | None = None,
) -> None:
    """Log the record of one call through a toolset (``reason`` overrides the derived one)."""
    if not _log.isEnabledFor(logging.INFO):
        return
    decision, derived, outcome = decision_of(result)
    if reason is not None:
        decision, derived = "refused", reason
    _emit(
        {
            "time": time.time(),
            "agent": agent,
            "subject": subject,
            "tool": tool,
            "decision": decision,
            "reason": derived,
            "outcome": outcome,
            "duration_ms": round(duration * 1000, 3),
        }
    )


def audit_refusal(
    agent: str | None,
    subject: str | None,
    reason: str,
    *,
    tool: str | None = None,
    road: str | None = None,
) -> None:
    """Log a refusal that never reached a toolset (a 401 or 403 over HTTP).

    Args:
        agent: The agent asked for.
        subject: The principal's subject, or None (no valid token).
        reason: A code from ``REASONS`` (``unauthenticated``, ``forbidden``, ...).
        tool: The tool named by the request, if any.
        road: Where it happened (``"http"``), if useful.
    """
    if not _log.isEnabledFor(logging.INFO):
        return
    record: dict[str, Any] = {
        "time": time.time(),
        "agent": agent,
        "subject": subject,
        "tool": tool,
        "decision": "refused",
        "reason": reason,
        "outcome": "error",
        "duration_ms": 0.0,
    }
    if road is not None:
        record["road"] = road
    _emit(record)
