"""Provider formats: tool definitions, result rendering and tool-call parsing.

One module per format (``_openai``, ``_anthropic``, ``_gemini``, ``_bedrock``, ``_mcp``,
``_neutral``) and the shared schema transforms (``_strict`` for the OpenAI and
Anthropic/Bedrock strict modes, ``_gemini_schema`` for Gemini's schema subset). Everything
is a pure function of its arguments: no network, and the tools' schemas are deep-copied,
never modified.
"""

from toolpacks.export._api import definition, definitions, parse_tool_calls, render_result
from toolpacks.export._calls import ToolCall
from toolpacks.export._formats import (
    FORMATS,
    NAME_RULES,
    ExportFormat,
    ExportWarning,
    NameRule,
    StrictMode,
    ToolCallParseError,
)
from toolpacks.export._protocol import ExportableHints, ExportableResult, ExportableTool

__all__ = [
    "FORMATS",
    "NAME_RULES",
    "ExportFormat",
    "ExportWarning",
    "ExportableHints",
    "ExportableResult",
    "ExportableTool",
    "NameRule",
    "StrictMode",
    "ToolCall",
    "ToolCallParseError",
    "definition",
    "definitions",
    "parse_tool_calls",
    "render_result",
]
