"""The outcome of a tool call: a value or an error a model can act on."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_core import to_json, to_jsonable_python

from toolpacks.core._content import BadContent, has_content, resolve, stand_in

__all__ = [
    "ArgumentError",
    "ErrorKind",
    "ToolErrorInfo",
    "ToolResult",
    "Unsendable",
    "render_value",
]

ErrorKind = Literal[
    "invalid_arguments",
    "tool_error",
    "timeout",
    "cancelled",
    "not_found",
    "denied",
    "output_invalid",
]
"""Why a call failed: bad arguments, the tool raised, it timed out or was cancelled, no such
tool, the call was not allowed or not approved, or its return value broke its output type."""


@dataclass(frozen=True, slots=True)
class ArgumentError:
    """What is wrong with one argument of a call."""

    argument: str
    """The argument's path (``"b"``, ``"items.0.name"``); empty for the arguments as a whole."""
    message: str
    """What is wrong, in words a model can act on."""


@dataclass(frozen=True, slots=True)
class ToolErrorInfo:
    """A structured description of a failed call."""

    kind: ErrorKind
    """The category of failure."""
    message: str
    """The message shown to the model (masked when error details are hidden)."""
    details: tuple[ArgumentError, ...] = ()
    """Per-argument problems, for ``invalid_arguments``."""
    exception_type: str | None = None
    """The qualified name of the exception the tool raised, if it raised one."""


logger = logging.getLogger("toolpacks")

_SURROGATE = re.compile("[\ud800-\udfff]")


class Unsendable(TypeError):
    """A return value that cannot be rendered for a model (internal)."""


def render_value(value: Any) -> str:
    """Render a tool's return value as text for a model.

    Strings are returned as they are (a lone surrogate, which no encoder accepts, becomes
    U+FFFD); anything else as compact JSON (pydantic models, dataclasses, dates and sets
    included; non-finite floats as ``null``). A value JSON cannot hold is rendered with
    ``str()`` when its class defines ``__str__`` or ``__repr__``. Content (``Image``,
    ``Audio``, resources, or a list holding them) is its text stand-in (``_content``).

    Raises:
        BadContent: The value is content in a shape that cannot be sent.
        Unsendable: The value is not JSON and its class has only ``object``'s ``repr``,
            which would show a memory address and nothing a model can use.
    """
    if isinstance(value, str):
        if value.isascii() or not _SURROGATE.search(value):
            return value
        return _SURROGATE.sub("\ufffd", value)
    if has_content(value):
        return stand_in(resolve(value, render_value))
    try:
        return to_json(value, serialize_unknown=False, inf_nan_mode="null").decode()
    except Exception as exc:
        kind: Any = type(value)
        own_text = kind.__str__ is not object.__str__ or kind.__repr__ is not object.__repr__
        if own_text and not isinstance(value, dict | list | tuple | set | frozenset):
            return render_value(str(value))
        raise Unsendable(_unknown_type(exc, kind)) from None


def _unknown_type(exc: Exception, kind: type) -> str:
    """The name of the type JSON could not hold: inside a container, the inner one."""
    found = re.search(r"unknown type: <class '([^']+)'>", str(exc))
    return found.group(1).rsplit(".", 1)[-1] if found else kind.__qualname__


class ToolResult:
    """The result of ``Tool.invoke`` or ``Toolset.call``: never an exception.

    Treat it as a value: do not modify it. ``content`` is the text a model receives; ``value``
    is the raw return value for the application.
    """

    __slots__ = (
        "_content",
        "_max_chars",
        "call_id",
        "duration",
        "error",
        "is_error",
        "started_at",
        "tool_name",
        "value",
    )

    value: Any
    """The raw return value (for generator tools, the last item); None on error."""
    is_error: bool
    """Whether the call failed."""
    error: ToolErrorInfo | None
    """What went wrong, when ``is_error``."""
    tool_name: str
    """The name the tool was called by."""
    call_id: str
    """The call's id (from the context, or generated)."""
    started_at: float
    """When the call started (seconds since the epoch)."""
    duration: float
    """How long the call took, in seconds (this call alone, whatever ran concurrently)."""

    def __init__(
        self,
        value: Any = None,
        *,
        is_error: bool = False,
        error: ToolErrorInfo | None = None,
        tool_name: str = "",
        call_id: str = "",
        started_at: float = 0.0,
        duration: float = 0.0,
        content: str | None = None,
        max_chars: int = 0,
    ) -> None:
        self.value = value
        self.is_error = is_error
        self.error = error
        self.tool_name = tool_name
        self.call_id = call_id
        self.started_at = started_at
        self.duration = duration
        self._content = content
        self._max_chars = max_chars

    @property
    def content(self) -> str:
        """The text a model receives: the rendered value, or the error message.

        Rendered on first access (a call whose text is never read pays nothing for it) and
        truncated with a marker when longer than the call's ``max_content_chars``.
        """
        if self._content is None:
            try:
                self.render()
            except BadContent as exc:  # in a list (a single content value is checked earlier)
                logger.error("tool %r %s", self.tool_name, exc)
                self._content = f"[the result cannot be sent: the tool {exc}]"
            except Unsendable as exc:
                # A dict or list holding such a value (checked when the text is read; other
                # values are checked when the call ends and give an error result instead).
                logger.error(
                    "tool %r returned a value holding a %s, which cannot be sent as JSON",
                    self.tool_name,
                    exc,
                )
                self._content = (
                    f"[the result holds a value of type {exc}, which cannot be sent as JSON]"
                )
        return self._content  # type: ignore[return-value]

    def render(self) -> None:
        """Render ``content`` now (internal: the call path checks that the value can be sent).

        Raises:
            Unsendable: The value is neither JSON nor has a ``str()`` of its own.
        """
        text = self.error.message if self.error is not None else render_value(self.value)
        limit = self._max_chars
        if limit and len(text) > limit:
            omitted = len(text) - limit
            marker = f"[... truncated: {omitted} of {len(text)} characters omitted]"
            text = f"{text[:limit]}\n{marker}"
        self._content = text

    @property
    def structured(self) -> dict[str, Any] | None:
        """The value as a JSON object when it is one (a dict, model or dataclass), else None.

        None as well when its JSON is longer than the call's ``max_content_chars``: every
        rendering that carries a structured value (MCP, Bedrock, Gemini, neutral) then
        carries ``content``, which is truncated with a marker that says so.
        """
        if self.is_error or has_content(self.value):
            return None
        try:
            jsonable = to_jsonable_python(self.value, inf_nan_mode="null")
        except Exception:
            return None
        if not isinstance(jsonable, dict):
            return None
        limit = self._max_chars
        if limit and len(to_json(jsonable)) > limit:  # bytes: an upper bound on characters
            return None
        return jsonable

    @property
    def ok(self) -> bool:
        """Whether the call succeeded."""
        return not self.is_error

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able summary: tool, call id, status, content, error and timing."""
        out: dict[str, Any] = {
            "tool": self.tool_name,
            "call_id": self.call_id,
            "is_error": self.is_error,
            "content": self.content,
            "duration": self.duration,
        }
        if self.error is not None:
            out["error"] = {
                "kind": self.error.kind,
                "message": self.error.message,
                "details": [
                    {"argument": d.argument, "message": d.message} for d in self.error.details
                ],
            }
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolResult):
            return NotImplemented
        return (self.value, self.is_error, self.error, self.tool_name, self.call_id) == (
            other.value,
            other.is_error,
            other.error,
            other.tool_name,
            other.call_id,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        status = f"error={self.error!r}" if self.is_error else f"value={self.value!r}"
        return f"ToolResult(tool_name={self.tool_name!r}, call_id={self.call_id!r}, {status})"


def error_result(
    kind: ErrorKind,
    message: str,
    *,
    tool_name: str,
    call_id: str,
    details: tuple[ArgumentError, ...] = (),
    exception_type: str | None = None,
    started_at: float = 0.0,
    duration: float = 0.0,
) -> ToolResult:
    """Build an error ``ToolResult`` (internal helper)."""
    return ToolResult(
        is_error=True,
        error=ToolErrorInfo(kind, message, details, exception_type),
        tool_name=tool_name,
        call_id=call_id,
        started_at=started_at,
        duration=duration,
    )
