"""Result caps bound every rendering: text and structured values alike.

``max_content_chars`` truncates the text with a marker; a structured value whose JSON is
longer is left out of every provider rendering that would carry it, so the text (which says
it was truncated) is all that is sent. The MCP server's own rendering is tested over a real
``toolpacks serve`` in ``tests/mcp/test_served_gate.py``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from toolpacks import CallOptions, Toolset, tool
from toolpacks.export import render_result


@tool
def big() -> dict[str, Any]:
    """Return a large object."""
    return {"rows": ["x" * 100 for _ in range(1000)]}


@tool
def small() -> dict[str, Any]:
    """Return a small object."""
    return {"ok": True, "nan": float("nan")}


def _call(t: Any, limit: int) -> Any:
    return asyncio.run(t.invoke({}, options=CallOptions(max_content_chars=limit)))


def test_text_is_truncated_with_a_marker() -> None:
    """The text says how much was left out."""
    result = _call(big, 1000)
    assert len(result.content) < 1100
    assert "[... truncated:" in result.content
    assert "characters omitted]" in result.content


@pytest.mark.parametrize("format", ["mcp", "bedrock", "gemini", "neutral"])
def test_structured_values_over_the_cap_are_not_rendered(format: str) -> None:
    """No rendering carries a structured value bigger than the cap."""
    result = _call(big, 1000)
    assert result.structured is None
    rendered = json.dumps(render_result(result, format))  # type: ignore[arg-type]
    assert len(rendered) < 2000
    assert "truncated" in rendered


@pytest.mark.parametrize("format", ["mcp", "bedrock", "gemini", "neutral"])
def test_structured_values_under_the_cap_are_rendered_as_json(format: str) -> None:
    """Under the cap the structured value is sent, and non-finite numbers become null."""
    result = _call(small, 1000)
    assert result.structured == {"ok": True, "nan": None}
    rendered = json.dumps(render_result(result, format), allow_nan=False)  # type: ignore[arg-type]
    assert "NaN" not in rendered


def test_the_default_cap_applies_through_a_toolset() -> None:
    """A toolset's calls get the default cap (100,000 characters): ~104 kB is over it."""
    result = asyncio.run(Toolset([big]).call("big", {}))
    assert result.structured is None
    assert "[... truncated:" in result.content
    assert len(result.content) < 100_200
