"""What a toolset reads of a call and writes of its result, whatever shape it came in.

A call is a ``(name, arguments)`` pair, a mapping or a ``ToolCall``; a result's error names
the tool by its exposed name, which a rename made different from the tool's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # results are imported by the first call, not with Toolset
    from toolpacks.core._result import ToolResult

__all__ = ["normalize_call", "renamed_error"]


def renamed_error(result: ToolResult, own: str, exposed: str) -> ToolResult:
    """``result`` with its error message naming ``exposed`` instead of ``own``."""
    from toolpacks.core._result import error_result

    error = result.error
    assert error is not None
    message = error.message.replace(f"'{own}'", f"'{exposed}'", 1)
    return error_result(
        error.kind,
        message,
        tool_name=exposed,
        call_id=result.call_id,
        details=error.details,
        exception_type=error.exception_type,
        started_at=result.started_at,
        duration=result.duration,
    )


def normalize_call(call: Any) -> tuple[str, Any, str | None]:
    """``(name, arguments, id)`` of a call given as a pair, a mapping or a ``ToolCall``."""
    if isinstance(call, tuple | list) and len(call) == 2:
        return str(call[0]), call[1], None
    if isinstance(call, Mapping):
        return str(call.get("name", "")), call.get("arguments"), call.get("id")
    name = getattr(call, "name", None)
    if isinstance(name, str):
        return name, getattr(call, "arguments", None), getattr(call, "id", None)
    raise TypeError(
        f"cannot read a tool call from {type(call).__name__}; pass (name, arguments) pairs, "
        "mappings with 'name' and 'arguments', or ToolCall objects"
    )
