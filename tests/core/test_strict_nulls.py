"""OpenAI strict mode round trip: nulls for omitted optional parameters mean "use the default"."""

from __future__ import annotations

import asyncio
import json

from toolpacks import Toolset, tool


@tool
def search(query: str, limit: int = 5, note: str | None = None) -> str:
    """Search."""
    return f"{query} {limit} {note}"


def test_strict_definition_makes_every_property_required() -> None:
    """The strict export requires every property, so a model must send something for each."""
    (definition,) = Toolset([search]).definitions("openai", strict=True)
    parameters = definition["function"]["parameters"]
    assert sorted(parameters["required"]) == ["limit", "note", "query"]


def test_null_for_an_omitted_optional_parameter_uses_its_default() -> None:
    """`{"limit": null}` from a strict-mode model runs with limit's default, not an error."""
    message = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "call_9",
                "type": "function",
                "function": {
                    "name": "search",
                    "arguments": json.dumps({"query": "x", "limit": None, "note": None}),
                },
            }
        ],
    }
    (reply,) = asyncio.run(Toolset([search]).execute(message, "openai"))
    assert reply["content"] == "x 5 None"


def test_null_for_a_required_parameter_is_still_an_error() -> None:
    """Dropping nulls never invents a value for a required parameter."""
    result = asyncio.run(search.invoke({"query": None, "limit": None}))
    assert result.is_error
    assert "query" in result.content
