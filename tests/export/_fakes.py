"""A stand-in for ``Tool`` that satisfies the export protocol, for the export tests.

The exporters are written against a protocol, not against ``Tool``: these tests feed them
schemas a typed function could never produce (open dicts, recursive refs) to prove it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolpacks import ToolHints


@dataclass
class FakeTool:
    """Just the attributes an exporter reads."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    title: str | None = None
    instructions: str | None = None
    hints: ToolHints = field(default_factory=ToolHints)
