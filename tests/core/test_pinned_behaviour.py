"""Pinned core behaviours: default call options, bool/int confusion, ``cls``, registry, redaction.

Each of these could change today without any other test failing; the values are asserted
exactly so that a change is a deliberate, visible decision.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any, Optional

import pytest

from toolpacks import ArgumentLimits, CallOptions, Registry, Tool, tool
from toolpacks.core._secrets import REDACTED, redact

Run = Callable[[Coroutine[Any, Any, Any]], Any]


# -- 1. the defaults a direct Tool.invoke runs with ---------------------------------------------


def test_call_options_defaults() -> None:
    """``CallOptions()``: errors masked, 1 MiB / depth 64 caps, 100_000 chars, no overrides."""
    options = CallOptions()
    assert options.expose_errors is False
    assert options.limits.max_bytes == 1024 * 1024
    assert options.limits.max_depth == 64
    assert options.max_content_chars == 100_000
    assert options.extra_args is None
    assert options.redact == ()


def test_argument_limits_defaults() -> None:
    """``ArgumentLimits()`` caps JSON text at 1 MiB and nesting at 64 levels."""
    limits = ArgumentLimits()
    assert limits.max_bytes == 1_048_576
    assert limits.max_depth == 64


# -- 2. bool/int confusion for optional parameters ----------------------------------------------


def _described(value: object) -> str:
    return f"{type(value).__name__}:{value!r}"


@tool
def opt_int(n: Optional[int] = None) -> str:  # noqa: UP045 - the typing.Optional form is the point
    """Describe ``n``."""
    return _described(n)


@tool
def union_int(n: int | None = None) -> str:
    """Describe ``n``."""
    return _described(n)


@tool
def opt_bool(flag: Optional[bool] = None) -> str:  # noqa: UP045 - the typing.Optional form
    """Describe ``flag``."""
    return _described(flag)


@tool
def union_bool(flag: bool | None = None) -> str:
    """Describe ``flag``."""
    return _described(flag)


INT_TOOLS = [pytest.param(opt_int, id="Optional[int]"), pytest.param(union_int, id="int|None")]
BOOL_TOOLS = [
    pytest.param(opt_bool, id="Optional[bool]"),
    pytest.param(union_bool, id="bool|None"),
]
MODES = ["dict", "json"]


def _arguments(mode: str, arguments: dict[str, Any]) -> dict[str, Any] | str:
    return arguments if mode == "dict" else json.dumps(arguments)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("value", [True, False])
@pytest.mark.parametrize("t", INT_TOOLS)
def test_boolean_for_optional_int_is_refused(t: Tool, value: bool, mode: str, run: Run) -> None:
    """``true``/``false`` for an optional integer is invalid_arguments naming the parameter."""
    result = run(t.invoke(_arguments(mode, {"n": value})))
    assert result.is_error is True
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert [d.argument for d in result.error.details] == ["n"]
    assert "boolean" in result.error.details[0].message
    assert result.value is None


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("value", [1, 0])
@pytest.mark.parametrize("t", BOOL_TOOLS)
def test_number_for_optional_bool_is_refused(t: Tool, value: int, mode: str, run: Run) -> None:
    """``1``/``0`` for an optional boolean is invalid_arguments naming the parameter."""
    result = run(t.invoke(_arguments(mode, {"flag": value})))
    assert result.is_error is True
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert [d.argument for d in result.error.details] == ["flag"]
    assert "number" in result.error.details[0].message
    assert result.value is None


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("value", "described"), [(None, "NoneType:None"), (0, "int:0"), (7, "int:7"), (-3, "int:-3")]
)
@pytest.mark.parametrize("t", INT_TOOLS)
def test_optional_int_accepts_null_and_integers(
    t: Tool, value: int | None, described: str, mode: str, run: Run
) -> None:
    """``null`` and integers reach an optional integer parameter as None and int."""
    result = run(t.invoke(_arguments(mode, {"n": value})))
    assert result.is_error is False
    assert result.value == described


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("value", "described"),
    [(None, "NoneType:None"), (True, "bool:True"), (False, "bool:False")],
)
@pytest.mark.parametrize("t", BOOL_TOOLS)
def test_optional_bool_accepts_null_and_booleans(
    t: Tool, value: bool | None, described: str, mode: str, run: Run
) -> None:
    """``null``, ``true`` and ``false`` reach an optional boolean parameter as None and bool."""
    result = run(t.invoke(_arguments(mode, {"flag": value})))
    assert result.is_error is False
    assert result.value == described


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("t", [*INT_TOOLS, *BOOL_TOOLS])
def test_optional_parameter_may_be_omitted(t: Tool, mode: str, run: Run) -> None:
    """An omitted optional parameter gets its default, None."""
    result = run(t.invoke(_arguments(mode, {})))
    assert result.is_error is False
    assert result.value == "NoneType:None"


# -- 3. the registry takes Tool objects only ----------------------------------------------------


def _plain(x: int) -> int:
    """A typed function that was never made a tool."""
    return x


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


@pytest.mark.parametrize(
    ("item", "type_name"),
    [(_plain, "function"), ("ping", "str"), (None, "NoneType")],
    ids=["function", "str", "None"],
)
def test_registry_add_refuses_what_is_not_a_tool(
    registry: Registry, item: Any, type_name: str
) -> None:
    """``Registry.add`` raises TypeError naming the type, and the registry stays unchanged."""
    registry.add(ping)
    with pytest.raises(TypeError, match=f"^Expected Tool object, got {type_name}: "):
        registry.add(item)
    assert [t.name for t in registry.all()] == ["ping"]


def test_registry_constructor_refuses_what_is_not_a_tool() -> None:
    """``Registry([...])`` with a plain function in it raises TypeError."""
    with pytest.raises(TypeError, match=r"^Expected Tool object, got function: "):
        Registry([ping, _plain])  # type: ignore[list-item]


def test_registry_add_returns_the_tool(registry: Registry) -> None:
    """``Registry.add`` returns the very tool it was given."""
    assert registry.add(ping) is ping
    assert registry.get("ping") is ping


# -- 4. an annotated first parameter named cls or self is an ordinary parameter ----------------


@tool
def scale(cls: int, factor: int = 2) -> int:
    """Multiply ``cls`` by ``factor``."""
    return cls * factor


@tool
def greet(self: str) -> str:
    """Greet ``self``."""
    return f"hello {self}"


def test_annotated_cls_first_parameter_stays_in_the_schema() -> None:
    """A plain function's annotated ``cls`` parameter is a required integer in the schema."""
    schema = scale.input_schema
    assert list(schema["properties"]) == ["cls", "factor"]
    assert schema["properties"]["cls"]["type"] == "integer"
    assert schema["required"] == ["cls"]


@pytest.mark.parametrize("mode", MODES)
def test_annotated_cls_first_parameter_is_passed_through(mode: str, run: Run) -> None:
    """``invoke`` passes ``cls`` to the function, from a dict or from JSON text."""
    result = run(scale.invoke(_arguments(mode, {"cls": 21})))
    assert result.is_error is False
    assert result.value == 42
    result = run(scale.invoke(_arguments(mode, {"cls": 5, "factor": 3})))
    assert result.value == 15


def test_missing_annotated_cls_is_a_missing_argument(run: Run) -> None:
    """Leaving out ``cls`` is an invalid_arguments result naming ``cls``."""
    result = run(scale.invoke({"factor": 3}))
    assert result.is_error is True
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert [d.argument for d in result.error.details] == ["cls"]


def test_annotated_self_first_parameter_is_kept_too(run: Run) -> None:
    """The same holds for an annotated ``self``: in the schema and passed through."""
    assert list(greet.input_schema["properties"]) == ["self"]
    assert greet.input_schema["required"] == ["self"]
    assert run(greet.invoke({"self": "ada"})).value == "hello ada"
    assert scale(4) == 8


# -- 6. redaction -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    ["authorization", "Authorization", "AUTHORIZATION", "proxy_authorization", "X-Authorization"],
)
def test_redact_hides_values_under_an_authorization_key(key: str) -> None:
    """A value under any spelling of an ``authorization`` key is shown as ``****``."""
    value = {key: "opaque-value-123", "region": "opaque-value-123"}
    assert redact(value) == {key: REDACTED, "region": "opaque-value-123"}
    assert REDACTED == "****"
    assert value[key] == "opaque-value-123"


def test_redact_hides_authorization_in_nested_tables_and_lists() -> None:
    """Authorization keys are found in nested tables and in tables inside lists."""
    value = {"servers": [{"name": "a", "headers": {"Authorization": "opaque"}}]}
    assert redact(value) == {"servers": [{"name": "a", "headers": {"Authorization": "****"}}]}


@pytest.mark.parametrize("key", ["api_key", "token", "db_password", "Authorization", "secret"])
def test_redact_hides_the_default_of_a_secret_env_reference(key: str) -> None:
    """An env reference under a secret-looking key keeps its variable name, hides its default."""
    value = {key: {"env": "SOME_VAR", "default": "dev-fallback-value"}}
    assert redact(value) == {key: {"env": "SOME_VAR", "default": "****"}}


def test_redact_keeps_the_default_of_an_ordinary_env_reference() -> None:
    """An env reference under an ordinary key is shown as it is, default included."""
    value = {"region": {"env": "REGION", "default": "eu-west-1"}, "api_key": {"env": "K"}}
    assert redact(value) == {
        "region": {"env": "REGION", "default": "eu-west-1"},
        "api_key": {"env": "K"},
    }
