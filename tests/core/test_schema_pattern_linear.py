"""Schema ``pattern`` checks of schema-only tools run on RE2, never on backtracking ``re``.

A 30-character argument against ``^(a+)+$`` held the GIL for seconds per call under Python's
``re`` (a worker, and every other call, stalled). Now it is answered at once; a pattern RE2
cannot run has every call refused, naming the pattern. pytest-timeout bounds each test.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolpacks import Tool, ToolResult, Toolset

BAD = "a" * 30 + "!"


def _handler(**arguments):  # type: ignore[no-untyped-def]  # untyped: a schema-only tool
    return "ran"


def _tool(schema: dict[str, Any]) -> Tool:
    full = {"type": "object", **schema}
    return Tool(_handler, name="remote", description="A remote tool.", input_schema=full)


WORD = {"properties": {"word": {"type": "string", "pattern": "^(a+)+$"}}, "required": ["word"]}
KEYS = {
    "properties": {
        "counts": {
            "type": "object",
            "patternProperties": {"^(a+)+$": {"type": "integer"}},
            "additionalProperties": False,
        }
    }
}
NESTED = {
    "properties": {
        "items": {"type": "array", "items": {"type": "string", "pattern": "^(a|a)*$"}}
    }
}


def _invoke(t: Tool, arguments: dict[str, Any]) -> ToolResult:
    return asyncio.run(t.invoke(arguments))


def _text(result: ToolResult) -> str:
    return result.error.message if result.error else str(result.value)


@pytest.mark.parametrize("road", ["invoke", "toolset"])
def test_a_backtracking_pattern_answers_both_ways(road: str) -> None:
    t = _tool(WORD)

    def call(arguments: dict[str, Any]) -> ToolResult:
        if road == "invoke":
            return _invoke(t, arguments)
        return asyncio.run(Toolset([t]).call("remote", arguments))

    refused = call({"word": BAD})
    assert refused.is_error
    assert "should match pattern '^(a+)+$'" in _text(refused)
    accepted = call({"word": "a" * 30})
    assert not accepted.is_error
    assert accepted.value == "ran"


def test_pattern_properties_and_nested_patterns_run_on_re2() -> None:
    keys = _tool(KEYS)
    assert _invoke(keys, {"counts": {"a" * 30: 1}}).value == "ran"
    assert _invoke(keys, {"counts": {"a" * 30: "x"}}).is_error  # its subschema applies
    refused = _invoke(keys, {"counts": {BAD: 1}})
    assert refused.is_error
    assert "unexpected field" in _text(refused)
    nested = _tool(NESTED)
    assert _invoke(nested, {"items": ["a" * 30]}).value == "ran"
    assert _invoke(nested, {"items": ["a" * 29, BAD]}).is_error


@pytest.mark.parametrize(
    ("pattern", "what"),
    [("^(?=(a+)+$)", "lookaheads"), (r"^(a+)\1$", "backreferences"), ("(?<!b)a", "lookbehinds")],
)
def test_a_pattern_re2_cannot_run_refuses_every_call_naming_it(pattern: str, what: str) -> None:
    t = _tool({"properties": {"word": {"type": "string", "pattern": pattern}}})
    for arguments in ({"word": BAD}, {"word": "aaa"}, {}):
        result = _invoke(t, arguments)
        assert result.is_error, arguments
        assert f"{what} are not supported" in _text(result)
        assert repr(pattern) in _text(result)
