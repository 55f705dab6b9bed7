"""Hidden characters in parameter descriptions are refused, as in tool descriptions (issue 37).

Zero-width spaces, bidirectional overrides and isolates, and tag characters in a parameter's
description (or title) hide instructions from a reviewer exactly as in the tool's own
description. They are refused when the tool is defined, for typed tools (docstrings,
``Field(description=...)``, nested models) and for tools known only by a schema (a mounted
MCP server's, a TOOL.md's, a hand-built one), naming where in the schema they are.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from toolpacks import Tool, tool
from toolpacks.exceptions import ToolDefinitionError

HIDDEN = ["\u202e", "\u2066", "\u200b", "\u2060", "\ufeff", "\U000e0041"]


@pytest.mark.parametrize("char", HIDDEN)
def test_a_docstring_parameter_description_with_hidden_characters_is_refused(char: str) -> None:
    def search(query: str) -> str:
        return query

    search.__doc__ = f"Search.\n\nArgs:\n    query: what to look{char} for.\n"
    with pytest.raises(ToolDefinitionError, match=r"properties\.query\.description"):
        tool(search)


@pytest.mark.parametrize("char", HIDDEN)
def test_a_nested_field_description_with_hidden_characters_is_refused(char: str) -> None:
    class Filter(BaseModel):
        field: str = Field(description=f"the field{char}")

    def find(where: Filter, limit: Annotated[int, Field(description="how many")] = 5) -> str:
        """Find rows."""
        return "x"

    with pytest.raises(ToolDefinitionError, match=r"invisible or bidirectional"):
        tool(find)


@pytest.mark.parametrize("char", HIDDEN)
def test_a_schema_only_tools_parameter_description_is_refused(char: str) -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "q": {"type": "string", "description": "ok"},
            "items": {"type": "array", "items": {"type": "string", "title": f"x{char}"}},
        },
    }

    def handler(**kwargs: Any) -> str:
        return "x"

    with pytest.raises(ToolDefinitionError, match=r"properties\.items\.items\.title"):
        Tool(handler, name="remote", description="A remote tool.", input_schema=schema)


def test_plain_text_newlines_and_tabs_still_pass() -> None:
    text = "line one\n\tline two, caf\u00e9 \u2603"

    @tool
    def ok(query: Annotated[str, Field(description=text)]) -> str:
        """Fine."""
        return query

    assert "caf\u00e9" in ok.input_schema["properties"]["query"]["description"]
