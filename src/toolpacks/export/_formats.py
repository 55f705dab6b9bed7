"""The export formats, their name rules, and the export warning and parse error types."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

from toolpacks.exceptions import ExportError

__all__ = [
    "FORMATS",
    "NAME_RULES",
    "ExportFormat",
    "ExportWarning",
    "NameRule",
    "StrictMode",
    "ToolCallParseError",
    "check_format",
    "check_name",
    "check_strict",
]

ExportFormat = Literal[
    "neutral", "openai", "openai-responses", "anthropic", "gemini", "bedrock", "mcp"
]
"""A provider format: OpenAI Chat Completions (``openai``), OpenAI Responses
(``openai-responses``), Anthropic Messages, Gemini, Amazon Bedrock Converse, MCP, or
``neutral`` (toolpacks' own, provider-independent shape)."""

FORMATS: tuple[ExportFormat, ...] = get_args(ExportFormat)
"""Every valid format, in documentation order."""

StrictMode = bool | Literal["best_effort"]
"""The ``strict`` option of an export: ``False`` (plain schemas), ``True`` (strict mode, or an
``ExportError`` for a tool that cannot be strict), or ``"best_effort"`` (strict where possible,
the others exported non-strict with an ``ExportWarning``)."""


class ExportWarning(UserWarning):
    """An export had to change or weaken a definition (named tool, format and reason).

    Emitted, for example, when OpenAI strict mode cannot be applied without losing meaning
    (the tool is then exported non-strict), or when Gemini's schema subset forces keywords
    to be removed.
    """


class ToolCallParseError(ExportError):
    """A provider payload does not contain tool calls in the expected shape."""


@dataclass(frozen=True, slots=True)
class NameRule:
    """What a provider accepts as a tool name."""

    pattern: re.Pattern[str]
    """The full-match pattern."""
    text: str
    """The rule in words, for error messages."""


_OPENAI_LIKE = NameRule(
    re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "1 to 64 characters from a-z, A-Z, 0-9, '_' and '-'",
)

NAME_RULES: dict[ExportFormat, NameRule] = {
    "neutral": NameRule(re.compile(r".{1,128}", re.DOTALL), "1 to 128 characters"),
    "openai": _OPENAI_LIKE,
    "openai-responses": _OPENAI_LIKE,
    "anthropic": _OPENAI_LIKE,
    "bedrock": _OPENAI_LIKE,
    # Google documents several variants (some allow '.' and ':', or 128 characters); this
    # is the strictest one: it must start with a letter or '_', then letters, digits, '_', '-'.
    "gemini": NameRule(
        re.compile(r"[a-zA-Z_][a-zA-Z0-9_-]{0,63}"),
        "1 to 64 characters from a-z, A-Z, 0-9, '_' and '-', starting with a letter or '_'",
    ),
    "mcp": NameRule(
        re.compile(r"[A-Za-z0-9_.-]{1,128}"),
        "1 to 128 characters from A-Z, a-z, 0-9, '_', '-' and '.'",
    ),
}
"""The tool name rule of each format."""


def check_format(format: str) -> ExportFormat:
    """Return ``format`` as an ``ExportFormat``, or raise ``ExportError`` listing the valid ones."""
    for valid in FORMATS:
        if format == valid:
            return valid
    raise ExportError(f"unknown export format {format!r}; valid formats: {', '.join(FORMATS)}")


def check_strict(strict: object) -> StrictMode:
    """Return ``strict`` when it is ``True``, ``False`` or ``"best_effort"``, else raise.

    Raises:
        ExportError: Any other value (``1``, ``"yes"``, ``None``…), naming the valid ones.
    """
    if isinstance(strict, bool):
        return strict
    if strict == "best_effort":
        return "best_effort"
    raise ExportError(f"strict must be True, False or 'best_effort', got {strict!r}")


def check_name(name: str, format: ExportFormat, tool_name: str) -> None:
    """Raise ``ExportError`` if ``name`` breaks ``format``'s name rule (never rewrite it).

    Args:
        name: The exposed name.
        format: The target format.
        tool_name: The tool's own name, for the message.
    """
    rule = NAME_RULES[format]
    if rule.pattern.fullmatch(name) is None:
        which = f"tool {tool_name!r}" if name == tool_name else f"tool {tool_name!r} ({name!r})"
        raise ExportError(
            f"cannot export {which} to {format}: the name {name!r} must be {rule.text}. "
            "Rename the tool, or let the toolset expose it under a provider-safe name."
        )
