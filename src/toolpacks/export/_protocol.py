"""What the exporters need from a tool and from a result: structural protocols.

The real ``Tool``, ``ToolHints`` and ``ToolResult`` satisfy these; tests and third parties can
export anything with the same attributes. Members are read-only properties so that plain
attributes, frozen dataclass fields and properties all fit.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["ExportableHints", "ExportableResult", "ExportableTool"]


@runtime_checkable
class ExportableHints(Protocol):
    """Behaviour hints of a tool; ``None`` means "not stated"."""

    @property
    def read_only(self) -> bool | None:
        """The tool does not modify its environment."""

    @property
    def destructive(self) -> bool | None:
        """The tool may perform destructive updates."""

    @property
    def idempotent(self) -> bool | None:
        """Calling it again with the same arguments has no further effect."""

    @property
    def open_world(self) -> bool | None:
        """It interacts with an open world of external entities."""


@runtime_checkable
class ExportableTool(Protocol):
    """A tool as the exporters see it."""

    @property
    def name(self) -> str:
        """The tool's own (short) name; a toolset may expose it under another."""

    @property
    def description(self) -> str:
        """The model-facing description."""

    @property
    def input_schema(self) -> dict[str, Any]:
        """JSON Schema of the arguments (``type: object``; may use ``$defs``/``$ref``)."""

    @property
    def output_schema(self) -> dict[str, Any] | None:
        """JSON Schema of the return value, if declared."""

    @property
    def title(self) -> str | None:
        """A human-readable title, if any."""

    @property
    def instructions(self) -> str | None:
        """Extra usage text for the model (a TOOL.md body), if any."""

    @property
    def hints(self) -> ExportableHints:
        """Behaviour hints (read-only, destructive, idempotent, open-world)."""


@runtime_checkable
class ExportableResult(Protocol):
    """A tool call's result as the renderers see it."""

    @property
    def value(self) -> Any:
        """The raw return value."""

    @property
    def is_error(self) -> bool:
        """Whether the call failed."""

    @property
    def content(self) -> str:
        """The text rendering the model receives (the error message on failure)."""

    @property
    def structured(self) -> dict[str, Any] | None:
        """The value as a JSON object when there is one, else None."""

    @property
    def call_id(self) -> str | None:
        """The provider's tool-call id this result answers."""

    @property
    def tool_name(self) -> str:
        """The (exposed) name the tool was called by."""
