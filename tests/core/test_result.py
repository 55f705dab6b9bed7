"""``ToolResult``: the value, its text rendering, truncation, errors and timing."""

from __future__ import annotations

import dataclasses
import datetime
import time
from typing import Any

import pytest
from pydantic import BaseModel

from toolpacks import CallOptions, ToolErrorInfo, ToolResult, tool
from toolpacks.core._result import error_result, render_value


class Hit(BaseModel):
    """A search hit."""

    title: str
    score: float


@dataclasses.dataclass
class Pair:
    """Two numbers."""

    a: int
    b: int


class Opaque:
    """Something JSON cannot express."""

    def __str__(self) -> str:
        return "<opaque>"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("plain text", "plain text"),
        ('{"already": "json"}', '{"already": "json"}'),
        (42, "42"),
        (1.5, "1.5"),
        (True, "true"),
        (None, "null"),
        ({"a": [1, 2]}, '{"a":[1,2]}'),
        ([Hit(title="t", score=0.5)], '[{"title":"t","score":0.5}]'),
        (Pair(1, 2), '{"a":1,"b":2}'),
        (datetime.date(2024, 1, 31), '"2024-01-31"'),
        (Opaque(), "<opaque>"),
    ],
)
def test_render_value(value: Any, text: str) -> None:
    """Strings as they are; other values as compact JSON; str() as the fallback."""
    assert render_value(value) == text


def test_success_result_carries_the_raw_value(run: Any) -> None:
    """``value`` is the object the tool returned, ``content`` its rendering."""
    hit = Hit(title="t", score=1.0)

    @tool
    def search() -> Hit:
        """Search."""
        return hit

    result = run(search.invoke({}))
    assert result.value is hit
    assert result.content == '{"title":"t","score":1.0}'
    assert result.structured == {"title": "t", "score": 1.0}
    assert result.ok


def test_structured_is_none_for_non_objects_and_errors() -> None:
    """``structured`` is a dict only for object-like values of successful results."""
    assert ToolResult([1, 2]).structured is None
    failed = error_result("tool_error", "no", tool_name="t", call_id="c")
    assert failed.structured is None
    assert not failed.ok


def test_error_result_content_is_its_message() -> None:
    """An error result's text is the error message; its value is None."""
    failed = error_result("denied", "Not allowed.", tool_name="t", call_id="c")
    assert (failed.content, failed.value, failed.is_error) == ("Not allowed.", None, True)
    assert failed.error == ToolErrorInfo("denied", "Not allowed.")


def test_long_content_is_truncated_with_a_marker(run: Any) -> None:
    """Text over ``max_content_chars`` is cut and marked; the raw value is kept whole."""

    @tool
    def big() -> str:
        """Big."""
        return "x" * 50

    result = run(big.invoke({}, options=CallOptions(max_content_chars=10)))
    assert result.content == "x" * 10 + "\n[... truncated: 40 of 50 characters omitted]"
    assert result.value == "x" * 50


def test_rendered_json_is_truncated_too(run: Any) -> None:
    """Non-string values are truncated after rendering."""

    @tool
    def numbers() -> list[int]:
        """Numbers."""
        return list(range(10))

    result = run(numbers.invoke({}, options=CallOptions(max_content_chars=5)))
    assert result.content == "[0,1,\n[... truncated: 16 of 21 characters omitted]"


def test_short_content_and_zero_limit_are_not_truncated(run: Any) -> None:
    """Text within the limit, or a limit of 0, leaves the content whole."""

    @tool
    def small() -> str:
        """Small."""
        return "abc"

    assert run(small.invoke({}, options=CallOptions(max_content_chars=3))).content == "abc"
    assert run(small.invoke({}, options=CallOptions(max_content_chars=0))).content == "abc"


def test_result_carries_name_call_id_and_timing(run: Any) -> None:
    """A result names its tool and call, and says when it started and how long it took."""

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    before = time.time()
    result = run(ping.invoke({}))
    assert result.tool_name == "ping"
    assert result.call_id.startswith("call_")
    assert before <= result.started_at <= time.time()
    assert 0 <= result.duration < 5


def test_failure_result_has_a_sane_duration(run: Any) -> None:
    """A failing call's duration is measured from its own start (not from the epoch)."""

    @tool
    def fail() -> int:
        """Fail."""
        raise ValueError

    result = run(fail.invoke({}))
    assert 0 <= result.duration < 5
    assert result.started_at > 0


def test_to_dict_summarises_a_result() -> None:
    """``to_dict`` is JSON-able: tool, call id, status, content, error details and timing."""
    from toolpacks import ArgumentError

    failed = error_result(
        "invalid_arguments",
        "Bad.",
        tool_name="t",
        call_id="c",
        details=(ArgumentError("a", "missing required argument"),),
    )
    assert failed.to_dict() == {
        "tool": "t",
        "call_id": "c",
        "is_error": True,
        "content": "Bad.",
        "duration": 0.0,
        "error": {
            "kind": "invalid_arguments",
            "message": "Bad.",
            "details": [{"argument": "a", "message": "missing required argument"}],
        },
    }
    assert ToolResult(3, tool_name="t", call_id="c").to_dict()["content"] == "3"


def test_results_compare_by_value_and_identity_fields() -> None:
    """Two results are equal when value, status, error, tool and call id match."""
    assert ToolResult(1, tool_name="t", call_id="c") == ToolResult(1, tool_name="t", call_id="c")
    assert ToolResult(1, tool_name="t", call_id="c") != ToolResult(2, tool_name="t", call_id="c")
    assert repr(ToolResult(1, tool_name="t", call_id="c")) == (
        "ToolResult(tool_name='t', call_id='c', value=1)"
    )
