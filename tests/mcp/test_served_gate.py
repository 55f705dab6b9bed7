"""Hostile arguments and oversized results over a real ``toolpacks serve`` subprocess.

Arguments are sent as raw JSON text, so what a client can put on the wire (duplicate keys,
``NaN``, huge numbers, lone surrogate escapes) reaches the server as written. Each must give
a tool error result: not a crash, not a protocol error; and the server must go on answering.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from .conftest import RawServer, result_text

DEEP = "[" * 100 + "1" + "]" * 100

HOSTILE: list[tuple[str, str, str]] = [
    ("add", '{"a": 1, "a": 2, "b": 3}', "duplicate keys"),
    ("depth", '{"data": {"k": [{"x": 1, "x": 1}]}}', "a nested duplicate key"),
    ("ratio", '{"x": NaN}', "a NaN literal"),
    ("ratio", '{"x": Infinity}', "an Infinity literal"),
    ("ratio", '{"x": -Infinity}', "a -Infinity literal"),
    ("ratio", '{"x": 1e999}', "a float literal that overflows"),
    ("ratio", '{"x": "nan"}', "the string nan for a float"),
    ("ratio", '{"x": "Infinity"}', "the string Infinity for a float"),
    ("ratio", '{"x": "1e999"}', "the string 1e999 for a float"),
    ("count", '{"n": ' + "7" * 4000 + "}", "a 4,000-digit integer"),
    ("size", json.dumps({"text": "s" * 2_000_000}), "a 2 MB string"),
    ("total", '{"items": [' + ",".join(["1"] * 1_000_000) + "]}", "a 10^6-element array"),
    ("depth", '{"data": ' + DEEP + "}", "depth-100 nesting"),
    ("total", '{"items": [true, false]}', "booleans in a list of integers"),
    ("flag", '{"on": "true"}', "the string true for a bool"),
    ("flag", '{"on": 1}', "the number 1 for a bool"),
    ("size", '{"text": "\\ud800"}', "a lone surrogate escape"),
]


def _still_answers(raw: RawServer) -> None:
    result = raw.call("add", {"a": 2, "b": 3})
    assert result["isError"] is False
    assert result["structuredContent"] == {"result": 5}


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [(tool, arguments) for tool, arguments, _ in HOSTILE],
    ids=[what for _, _, what in HOSTILE],
)
def test_hostile_arguments_are_error_results(raw: RawServer, tool: str, arguments: str) -> None:
    """Each hostile input gets isError (no protocol error, no crash); serving goes on."""
    answer = raw.call_text(tool, arguments)
    assert "error" not in answer, answer
    result: dict[str, Any] = answer["result"]
    assert result["isError"] is True, result
    assert "structuredContent" not in result
    assert f"tool '{tool}'" in result_text(result)
    _still_answers(raw)


def test_duplicate_key_wording_matches_the_gate(raw: RawServer) -> None:
    """The transport's answer to duplicate keys has the in-process gate's wording."""
    result = raw.call_text("add", '{"a": 1, "b": 2, "a": 3}')["result"]
    assert result["isError"] is True
    assert result_text(result) == (
        "Invalid arguments for tool 'add':\n"
        "- (arguments): duplicate key 'a' in arguments; send each key once\n"
        "Fix the arguments and call the tool again."
    )


def test_duplicate_key_for_an_unknown_tool_is_the_unknown_tool_error(raw: RawServer) -> None:
    """An unknown tool name stays a protocol error, duplicate keys or not."""
    answer = raw.call_text("nope", '{"a": 1, "a": 2}')
    assert answer["error"]["code"] == -32602
    assert "Unknown tool: nope" in answer["error"]["message"]


def test_duplicate_key_outside_the_arguments_is_an_invalid_request(raw: RawServer) -> None:
    """A key repeated in the envelope or the params is -32600, with the id echoed."""
    request_id = raw.new_id()
    raw.send(
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
        '"params": {"name": "add", "name": "add", "arguments": {"a": 1, "b": 2}}}'
    )
    answer = raw.response(request_id)
    assert answer["error"]["code"] == -32600
    assert "duplicate key 'name'" in answer["error"]["message"]
    _still_answers(raw)


def test_escaped_quotes_before_colons_are_not_mistaken_for_duplicates(raw: RawServer) -> None:
    """A string holding ``":`` makes the key count differ, yet nothing is refused."""
    result = raw.call_text("size", '{"text": "a\\": b\\":"}')["result"]
    assert result["isError"] is False
    assert result["structuredContent"] == {"result": 7}


# -- results ----------------------------------------------------------------------------------


def test_huge_result_gets_a_bounded_reply_quickly(raw: RawServer) -> None:
    """A 20 MB string result: a truncated error reply, no structured content, in seconds."""
    request_id = raw.new_id()
    started = time.monotonic()
    raw.send(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "big", "arguments": {"chars": 20_000_000}},
        }
    )
    line = raw.receive_line()
    elapsed = time.monotonic() - started
    assert elapsed < 5, f"the reply took {elapsed:.1f} s"
    assert len(line) < 200_000
    answer = json.loads(line)
    assert answer["id"] == request_id
    result = answer["result"]
    assert result["isError"] is True
    assert "structuredContent" not in result
    text = result_text(result)
    assert text.startswith("x" * 1000)
    assert "truncated" in text
    assert "larger than this server's limit of 100000 characters" in text
    assert "structured form was omitted" in text
    _still_answers(raw)


def test_structured_object_over_the_limit_is_omitted(raw: RawServer) -> None:
    """An object result whose JSON is over the limit is an error result, not structuredContent."""
    result = raw.call("big_object", {"chars": 150_000})
    assert result["isError"] is True
    assert "structuredContent" not in result
    assert "structured form was omitted" in result_text(result)


def test_result_under_the_limit_keeps_its_structured_content(raw: RawServer) -> None:
    """A result within the limit is sent whole, text and structured content."""
    result = raw.call("big_object", {"chars": 50_000})
    assert result["isError"] is False
    assert result["structuredContent"] == {"text": "y" * 50_000}
