"""Parsing JSON argument text defensively: size, depth, duplicates, odd numbers."""

from __future__ import annotations

from typing import Any

import pytest

from toolpacks import ArgumentLimits, CallOptions, Tool
from toolpacks.core._jsonargs import ArgumentsParseError, parse_arguments


def test_parses_an_object() -> None:
    """Valid JSON parses to Python values."""
    assert parse_arguments('{"a": [1, 2.5, "x", true, null]}') == {"a": [1, 2.5, "x", True, None]}


def test_parses_utf8_bytes() -> None:
    """Bytes are decoded as UTF-8."""
    assert parse_arguments('{"city": "Zürich"}'.encode()) == {"city": "Zürich"}


def test_invalid_utf8_is_refused() -> None:
    """Bytes that are not UTF-8 give a parse error."""
    with pytest.raises(ArgumentsParseError, match="not valid UTF-8"):
        parse_arguments(b'{"a": "\xff"}')


def test_malformed_json_says_where() -> None:
    """A syntax error names the problem, line and column."""
    with pytest.raises(ArgumentsParseError) as caught:
        parse_arguments('{"a": }')
    assert str(caught.value) == "arguments are not valid JSON: Expecting value at line 1 column 7"


def test_parse_error_is_a_value_error() -> None:
    """``ArgumentsParseError`` subclasses ValueError."""
    assert issubclass(ArgumentsParseError, ValueError)


def test_duplicate_keys_are_refused() -> None:
    """A key sent twice is an error instead of last-wins."""
    with pytest.raises(ArgumentsParseError, match="duplicate key 'a'"):
        parse_arguments('{"a": 1, "a": 2}')


@pytest.mark.parametrize("text", ['{"x": NaN}', '{"x": Infinity}', '{"x": -Infinity}'])
def test_non_finite_constants_are_refused(text: str) -> None:
    """NaN and Infinity are not JSON numbers a tool expects."""
    with pytest.raises(ArgumentsParseError, match="not a valid JSON number"):
        parse_arguments(text)


def test_overflowing_float_is_refused() -> None:
    """A float literal that overflows to infinity is refused."""
    with pytest.raises(ArgumentsParseError, match="out of range"):
        parse_arguments('{"x": 1e999}')


def test_long_integers_are_refused() -> None:
    """An integer literal with more digits than the limit is refused."""
    limits = ArgumentLimits(max_int_digits=5)
    assert parse_arguments('{"x": -12345}', limits) == {"x": -12345}
    with pytest.raises(ArgumentsParseError, match="integer with 6 digits is too long"):
        parse_arguments('{"x": 123456}', limits)


def test_deep_nesting_is_refused() -> None:
    """Nesting beyond ``max_depth`` is refused before parsing."""
    limits = ArgumentLimits(max_depth=3)
    assert parse_arguments('{"a": [[1]]}', limits) == {"a": [[1]]}
    with pytest.raises(ArgumentsParseError, match="nested more than 3 levels deep"):
        parse_arguments('{"a": [[[1]]]}', limits)


def test_brackets_inside_strings_do_not_count_as_depth() -> None:
    """Brackets in string values are text, not nesting."""
    limits = ArgumentLimits(max_depth=1)
    assert parse_arguments('{"q": "[[[{{{"}', limits) == {"q": "[[[{{{"}


def test_oversized_text_is_refused() -> None:
    """Text over ``max_bytes`` is refused, as str or bytes."""
    limits = ArgumentLimits(max_bytes=16)
    text = '{"q": "' + "x" * 20 + '"}'
    with pytest.raises(ArgumentsParseError, match="limit of 16 bytes"):
        parse_arguments(text, limits)
    with pytest.raises(ArgumentsParseError, match="the limit is 16"):
        parse_arguments(text.encode(), limits)


def test_non_object_json_parses_and_is_left_to_the_caller() -> None:
    """The parser returns any JSON value; the invoke layer insists on an object."""
    assert parse_arguments("[1]") == [1]


def test_limits_from_call_options_apply_to_invoke(run: Any, add: Tool) -> None:
    """``CallOptions(limits=...)`` caps what ``invoke`` accepts, as an error result."""
    options = CallOptions(limits=ArgumentLimits(max_int_digits=3))
    result = run(add.invoke('{"a": 12345}', options=options))
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "integer with 5 digits is too long (limit 3)" in result.content


def test_duplicate_keys_through_invoke(run: Any, add: Tool) -> None:
    """A duplicate key in a model's JSON is an invalid-arguments result."""
    result = run(add.invoke('{"a": 1, "a": 2}'))
    assert "duplicate key 'a' in arguments; send each key once" in result.content


def test_long_negative_integer_counts_digits_only() -> None:
    """The message counts digits, not the minus sign."""
    with pytest.raises(ArgumentsParseError, match="integer with 6 digits is too long"):
        parse_arguments('{"x": -123456}', ArgumentLimits(max_int_digits=5))
