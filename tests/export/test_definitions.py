"""Provider definitions: shape per format, official SDK types, names, descriptions, copies."""

from __future__ import annotations

import copy
import json
import warnings
from enum import StrEnum
from typing import Any, get_type_hints

import pytest
from pydantic import BaseModel, Field, TypeAdapter

from toolpacks import ToolHints
from toolpacks.exceptions import ExportError
from toolpacks.export import (
    FORMATS,
    NAME_RULES,
    ExportWarning,
    definition,
    definitions,
)

from ._fakes import FakeTool


class Unit(StrEnum):
    C = "celsius"
    F = "fahrenheit"


class Location(BaseModel):
    city: str = Field(description="City name")
    country: str | None = None


class Forecast(BaseModel):
    location: Location
    days: int = Field(3, ge=1, le=14, description="How many days")
    unit: Unit = Unit.C
    stations: list[Location] = []
    labels: dict[str, str] = {}


class Report(BaseModel):
    summary: str
    temperatures: list[float]


def forecast_tool(**changes: Any) -> FakeTool:
    base = FakeTool(
        name="forecast",
        description="Get the weather forecast.",
        input_schema=Forecast.model_json_schema(),
        output_schema=Report.model_json_schema(),
        title="Weather forecast",
        instructions="Use metric units unless asked.",
        hints=ToolHints(read_only=True, open_world=True),
    )
    for key, value in changes.items():
        setattr(base, key, value)
    return base


def simple_tool(name: str = "add") -> FakeTool:
    return FakeTool(
        name=name,
        description="Add two numbers.",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
    )


PROVIDERS = ("openai", "openai-responses", "anthropic", "gemini", "bedrock", "mcp")


def allowed_keys(typed_dict: type) -> set[str]:
    return set(get_type_hints(typed_dict))


# -- the protocol --------------------------------------------------------------------------


def test_fake_tool_exports_like_a_real_tool() -> None:
    """The double stands in for ``Tool``: with the same attributes, every format agrees."""
    from toolpacks import tool

    @tool(read_only=True, open_world=True, title="Weather forecast")
    def forecast(city: str, days: int = 3) -> Report:
        """Get the weather forecast."""
        return Report(summary=city, temperatures=[20.0] * days)

    fake = FakeTool(
        name=forecast.name,
        description=forecast.description,
        input_schema=forecast.input_schema,
        output_schema=forecast.output_schema,
        title=forecast.title,
        instructions=forecast.instructions,
        hints=forecast.hints,
    )
    assert fake.output_schema is not None
    assert fake.title == "Weather forecast"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExportWarning)
        for fmt in FORMATS:
            assert definition(fake, fmt) == definition(forecast, fmt), fmt


def test_real_tool_exports_in_every_format() -> None:
    """A tool made with ``@tool`` exports in every format."""
    from toolpacks import tool

    @tool(read_only=True)
    def lookup(query: str, limit: int = 5) -> list[str]:
        """Look things up."""
        return [query] * limit

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExportWarning)
        for fmt in FORMATS:
            assert definition(lookup, fmt)


# -- per format ----------------------------------------------------------------------------


def test_openai_chat_definition_matches_the_sdk_type() -> None:
    """Chat Completions: a function tool the SDK's ``ChatCompletionToolParam`` accepts."""
    from openai.types.chat import ChatCompletionToolParam
    from openai.types.shared_params import FunctionDefinition

    tool = simple_tool()
    d = definition(tool, "openai")
    TypeAdapter(ChatCompletionToolParam).validate_python(d)
    assert d == {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two numbers.",
            "parameters": tool.input_schema,
        },
    }
    assert set(d["function"]) <= allowed_keys(FunctionDefinition)


def test_openai_chat_carries_strict_only_when_asked() -> None:
    """``strict`` appears in a Chat Completions definition only when strict mode was asked."""
    assert "strict" not in definition(simple_tool(), "openai")["function"]
    assert definition(simple_tool(), "openai", strict=True)["function"]["strict"] is True


def test_openai_responses_definition_matches_the_sdk_type() -> None:
    """Responses: a flat function tool with ``strict`` always present (False by default)."""
    from openai.types.responses import FunctionToolParam

    d = definition(simple_tool(), "openai-responses")
    TypeAdapter(FunctionToolParam).validate_python(d)
    assert set(d) <= allowed_keys(FunctionToolParam)
    assert d["type"] == "function"
    assert d["name"] == "add"
    assert d["strict"] is False


def test_anthropic_definition_matches_the_sdk_type() -> None:
    """Anthropic: ``name``, ``description``, ``input_schema`` and nothing else."""
    from anthropic.types import ToolParam

    tool = forecast_tool()
    d = definition(tool, "anthropic")
    TypeAdapter(ToolParam).validate_python(d)
    assert set(d) == {"name", "description", "input_schema"}
    assert d["input_schema"] == tool.input_schema


def test_bedrock_definition_is_a_valid_converse_tool() -> None:
    """Bedrock: ``toolSpec`` with ``inputSchema.json``, valid for botocore's Converse model."""
    tool = forecast_tool()
    d = definition(tool, "bedrock")
    assert d == {
        "toolSpec": {
            "name": "forecast",
            "description": "Get the weather forecast.\n\nUse metric units unless asked.",
            "inputSchema": {"json": tool.input_schema},
        }
    }
    validate_converse({"toolConfig": {"tools": [d]}})


def test_bedrock_leaves_out_an_empty_description() -> None:
    """Converse requires a non-empty description when one is given, so none is sent."""
    d = definition(FakeTool("x", "", simple_tool().input_schema), "bedrock")
    assert "description" not in d["toolSpec"]
    validate_converse({"toolConfig": {"tools": [d]}})


def validate_converse(extra: dict[str, Any]) -> None:
    from botocore import session as botocore_session
    from botocore.validate import ParamValidator  # type: ignore[import-untyped]

    model = botocore_session.get_session().get_service_model("bedrock-runtime")
    shape = model.operation_model("Converse").input_shape
    params = {"modelId": "m", "messages": [{"role": "user", "content": [{"text": "hi"}]}]}
    report = ParamValidator().validate({**params, **extra}, shape)
    assert not report.has_errors(), report.generate_report()


def test_gemini_definition_is_a_valid_function_declaration() -> None:
    """Gemini: a ``FunctionDeclaration`` the google-genai SDK accepts (extra fields forbidden)."""
    from google.genai import types as genai
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExportWarning)  # nothing of this schema is lost
        d = definition(forecast_tool(), "gemini")
    genai.FunctionDeclaration.model_validate(d)
    assert set(d) == {"name", "description", "parameters"}
    assert "$defs" not in json.dumps(d)
    labels = d["parameters"]["properties"]["labels"]
    assert labels["additionalProperties"] == {"type": "string"}


def test_gemini_leaves_out_parameters_of_a_tool_without_any() -> None:
    """A tool without parameters has no ``parameters`` (Gemini documents leaving it unset)."""
    d = definition(FakeTool("now", "Time.", {"type": "object", "properties": {}}), "gemini")
    assert d == {"name": "now", "description": "Time."}


def test_mcp_definition_is_a_valid_mcp_tool() -> None:
    """MCP: name, title, description, both schemas and annotations from the hints."""
    import mcp_types

    tool = forecast_tool()
    d = definition(tool, "mcp")
    parsed = mcp_types.Tool.model_validate(d)
    assert parsed.output_schema == tool.output_schema
    assert d["title"] == "Weather forecast"
    assert d["inputSchema"] == tool.input_schema
    assert d["annotations"] == {
        "title": "Weather forecast",
        "readOnlyHint": True,
        "openWorldHint": True,
    }


def test_mcp_definition_omits_unset_hints_and_output_schema() -> None:
    """Hints that are None and a missing output schema leave no keys behind."""
    d = definition(simple_tool(), "mcp")
    assert set(d) == {"name", "description", "inputSchema"}


def test_mcp_annotations_keep_false_hints() -> None:
    """A hint stated as False is sent (it differs from the protocol default)."""
    tool = simple_tool()
    tool.hints = ToolHints(destructive=False, idempotent=True)
    d = definition(tool, "mcp")
    assert d["annotations"] == {"destructiveHint": False, "idempotentHint": True}


def test_neutral_definition_has_every_key() -> None:
    """``neutral`` carries name, title, description, both schemas and all four hints."""
    d = definition(forecast_tool(), "neutral")
    assert d["hints"] == {
        "read_only": True,
        "destructive": None,
        "idempotent": None,
        "open_world": True,
    }
    assert d["output_schema"] == Report.model_json_schema()
    assert set(d) == {"name", "title", "description", "input_schema", "output_schema", "hints"}


@pytest.mark.parametrize("fmt", ["openai", "openai-responses", "anthropic", "gemini", "bedrock"])
def test_only_mcp_and_neutral_carry_an_output_schema(fmt: str) -> None:
    """Providers without a place for an output schema never receive one."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExportWarning)
        text = json.dumps(definition(forecast_tool(), fmt))  # type: ignore[arg-type]
    assert "temperatures" not in text


# -- descriptions --------------------------------------------------------------------------


def test_instructions_follow_the_description_after_a_blank_line() -> None:
    """``include_instructions`` (the default) appends the instructions after a blank line."""
    d = definition(forecast_tool(), "anthropic")
    assert d["description"] == "Get the weather forecast.\n\nUse metric units unless asked."


def test_instructions_can_be_left_out() -> None:
    """``include_instructions=False`` sends the description alone."""
    d = definition(forecast_tool(), "anthropic", include_instructions=False)
    assert d["description"] == "Get the weather forecast."


def test_instructions_alone_become_the_description() -> None:
    """A tool with instructions but no description gets the instructions, without a gap."""
    d = definition(forecast_tool(description=""), "mcp")
    assert d["description"] == "Use metric units unless asked."


# -- names ---------------------------------------------------------------------------------


def test_exposed_name_replaces_the_tool_name() -> None:
    """``name=`` is what the model sees; the tool keeps its own."""
    tool = simple_tool()
    assert definition(tool, "anthropic", name="math_add")["name"] == "math_add"
    assert tool.name == "add"


@pytest.mark.parametrize("fmt", ["openai", "openai-responses", "anthropic", "bedrock", "gemini"])
@pytest.mark.parametrize("bad", ["files.read", "a b", "x" * 65, "", "ünïcode", "a/b"])
def test_provider_name_rules_refuse_bad_names(fmt: str, bad: str) -> None:
    """Names outside ``[a-zA-Z0-9_-]{1,64}`` are refused, naming tool, format and rule."""
    with pytest.raises(ExportError) as info:
        definition(simple_tool(), fmt, name=bad)  # type: ignore[arg-type]
    message = str(info.value)
    assert "'add'" in message
    assert fmt in message
    assert NAME_RULES[fmt].text in message  # type: ignore[index]


def test_gemini_names_must_start_with_a_letter_or_underscore() -> None:
    """Gemini's strictest documented rule: first character a letter or '_'."""
    assert definition(simple_tool(), "gemini", name="_add-2")["name"] == "_add-2"
    with pytest.raises(ExportError, match="starting with a letter"):
        definition(simple_tool(), "gemini", name="2add")
    assert definition(simple_tool(), "openai", name="2add")


def test_mcp_names_allow_dots_and_128_characters() -> None:
    """MCP accepts '.' and up to 128 characters, and still refuses '/' and spaces."""
    assert definition(simple_tool(), "mcp", name="files.read")["name"] == "files.read"
    assert definition(simple_tool(), "mcp", name="a" * 128)
    for bad in ("a" * 129, "a/b", "a b"):
        with pytest.raises(ExportError, match="mcp"):
            definition(simple_tool(), "mcp", name=bad)


def test_names_are_never_rewritten() -> None:
    """A valid name comes out exactly as it went in."""
    for fmt in PROVIDERS:
        assert "Add-2_x" in json.dumps(definition(simple_tool(), fmt, name="Add-2_x"))  # type: ignore[arg-type]


# -- errors and the definitions list -------------------------------------------------------


def test_unknown_format_lists_the_valid_ones() -> None:
    """An unknown format is an ``ExportError`` (a ``ValueError``) naming every valid format."""
    with pytest.raises(ExportError) as info:
        definition(simple_tool(), "cohere")  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)
    for fmt in FORMATS:
        assert fmt in str(info.value)
    with pytest.raises(ExportError, match="valid formats"):
        definitions([], "cohere")  # type: ignore[arg-type]


def test_non_object_input_schema_is_refused() -> None:
    """Every provider wants an object at the root: anything else is an ``ExportError``."""
    with pytest.raises(ExportError, match="type 'object'"):
        definition(FakeTool("x", "d", {"type": "string"}), "anthropic")


def test_definitions_use_the_exposed_names_in_order() -> None:
    """``definitions`` exports each pair under its exposed name, in the given order."""
    out = definitions([("b_add", simple_tool()), ("a_add", simple_tool())], "anthropic")
    assert [d["name"] for d in out] == ["b_add", "a_add"]


def test_definitions_refuse_duplicate_exposed_names() -> None:
    """Two tools under one exposed name is an error, never last-wins."""
    with pytest.raises(ExportError, match="'same'"):
        definitions([("same", simple_tool("a")), ("same", simple_tool("b"))], "openai")


def test_definitions_pass_options_through() -> None:
    """``strict`` and ``include_instructions`` reach every definition."""
    out = definitions(
        [("forecast", forecast_tool())], "openai-responses", include_instructions=False
    )
    assert out[0]["description"] == "Get the weather forecast."


# -- the source is never modified ----------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("strict", [False, "best_effort"])
def test_source_schemas_are_not_mutated(fmt: str, strict: bool | str) -> None:
    """Exporting (and then editing the export) leaves the tool's schemas untouched."""
    tool = forecast_tool()
    before = copy.deepcopy((tool.input_schema, tool.output_schema))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExportWarning)
        d = definition(tool, fmt, strict=strict)  # type: ignore[arg-type]
    assert (tool.input_schema, tool.output_schema) == before

    def scribble(node: Any) -> None:
        if isinstance(node, dict):
            for value in node.values():
                scribble(value)
            node["scribbled"] = True
        elif isinstance(node, list):
            for value in node:
                scribble(value)

    scribble(d)
    assert (tool.input_schema, tool.output_schema) == before
