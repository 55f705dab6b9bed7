"""Strict mode for every provider that has one: fail closed, best effort, and the official SDKs.

``strict=True`` either gives a definition the provider can enforce or an ``ExportError`` naming
the tool and every reason; ``strict="best_effort"`` exports what cannot be strict non-strict,
with a warning. Anthropic and Bedrock get ``strict`` and their own subset.
"""

from __future__ import annotations

import asyncio
import copy
import json
import warnings
from typing import Annotated, Any, Literal

import httpx
import pytest
from pydantic import BaseModel, Field, TypeAdapter

from toolpacks import Toolset, tool
from toolpacks.exceptions import ExportError
from toolpacks.export import ExportWarning, definition, definitions

from ._fakes import FakeTool

STRICT_FORMATS = ("openai", "openai-responses", "anthropic", "bedrock")


class Address(BaseModel):
    street: str
    zip_code: str | None = None
    kind: Literal["home", "work"] = "home"


class Person(BaseModel):
    name: str = Field(description="Full name")
    age: int = Field(30, ge=0, le=150)
    nickname: str | None = None
    address: Address = Field(description="Where they live")
    previous: list[Address] = []


class WithOpenDict(BaseModel):
    query: str
    filters: dict[str, str] = {}


class Node(BaseModel):
    label: str
    children: list[Node] = []


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class Pet(BaseModel):
    pet: Cat | Dog = Field(discriminator="kind")


def tool_for(model: type[BaseModel], name: str = "t") -> FakeTool:
    return FakeTool(name, f"{model.__name__} tool.", model.model_json_schema())


def body(d: dict[str, Any], fmt: str) -> dict[str, Any]:
    """The part of a definition that holds ``strict`` and the schema, per format."""
    if fmt == "openai":
        return {"strict": d["function"].get("strict"), "schema": d["function"]["parameters"]}
    if fmt == "openai-responses":
        return {"strict": d.get("strict"), "schema": d["parameters"]}
    if fmt == "anthropic":
        return {"strict": d.get("strict"), "schema": d["input_schema"]}
    spec = d["toolSpec"]
    return {"strict": spec.get("strict"), "schema": spec["inputSchema"]["json"]}


def nodes(schema: Any) -> list[dict[str, Any]]:
    """Every dict in ``schema``, depth first."""
    found: list[dict[str, Any]] = []
    if isinstance(schema, dict):
        found.append(schema)
        for value in schema.values():
            found.extend(nodes(value))
    elif isinstance(schema, list):
        for value in schema:
            found.extend(nodes(value))
    return found


# -- fail closed -----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", STRICT_FORMATS)
def test_strict_true_refuses_a_tool_that_cannot_be_strict(fmt: str) -> None:
    """An open dict under ``strict=True`` is an ``ExportError`` naming tool, format, reason, fix."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an error, not a warning and a weaker export
        with pytest.raises(ExportError) as info:
            definition(tool_for(WithOpenDict, "finder"), fmt, name="x_finder", strict=True)  # type: ignore[arg-type]
    message = str(info.value)
    assert "tool 'finder' (exposed as 'x_finder')" in message
    assert f"for {fmt}" in message
    assert "an open object (additionalProperties) at 'filters'" in message
    assert "strict='best_effort'" in message


def test_definitions_name_every_tool_that_cannot_be_strict() -> None:
    """One error lists every failing tool; the strict-able one does not appear."""
    pairs = [
        ("a_open", tool_for(WithOpenDict, "open")),
        ("b_person", tool_for(Person, "person")),
        ("c_tree", tool_for(Node, "tree")),
    ]
    with pytest.raises(ExportError) as info:
        definitions(pairs, "anthropic", strict=True)
    message = str(info.value)
    assert message.startswith("2 tools cannot be exported with strict=True")
    assert "tool 'open' (exposed as 'a_open')" in message
    assert "tool 'tree' (exposed as 'c_tree')" in message
    assert "a recursive reference '#/$defs/Node'" in message
    assert "person" not in message


@pytest.mark.parametrize("bad", [1, 0, "yes", "best-effort", None, "true"])
def test_strict_accepts_only_true_false_and_best_effort(bad: object) -> None:
    """Any other ``strict`` value is an ``ExportError`` naming the valid ones, in every format."""
    for fmt in ("openai", "gemini"):
        with pytest.raises(ExportError, match="strict must be True, False or 'best_effort'"):
            definition(tool_for(Person), fmt, strict=bad)  # type: ignore[arg-type]
        with pytest.raises(ExportError, match=repr(bad).replace("'", ".")):
            definitions([("t", tool_for(Person))], fmt, strict=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("fmt", STRICT_FORMATS)
def test_best_effort_exports_non_strict_with_a_warning(fmt: str) -> None:
    """``"best_effort"``: strict where possible; the rest unchanged, ``strict: false``, warned."""
    open_dict, person = tool_for(WithOpenDict, "finder"), tool_for(Person, "person")
    with pytest.warns(ExportWarning) as record:
        loose, tight = definitions(
            [("finder", open_dict), ("person", person)],
            fmt,  # type: ignore[arg-type]
            strict="best_effort",
        )
    assert len(record) == 1
    assert "'finder'" in str(record[0].message)
    assert body(loose, fmt) == {"strict": False, "schema": open_dict.input_schema}
    assert body(tight, fmt)["strict"] is True


@pytest.mark.parametrize("fmt", ["gemini", "mcp", "neutral"])
def test_formats_without_strict_mode_ignore_it(fmt: str) -> None:
    """Gemini, MCP and ``neutral`` have no strict mode: the option changes nothing there."""
    tools = [("finder", tool_for(WithOpenDict, "finder"))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExportWarning)
        plain = definitions(tools, fmt)  # type: ignore[arg-type]
        assert definitions(tools, fmt, strict=True) == plain  # type: ignore[arg-type]
        assert definitions(tools, fmt, strict="best_effort") == plain  # type: ignore[arg-type]


@pytest.mark.parametrize("fmt", STRICT_FORMATS)
def test_strict_export_leaves_the_source_schema_alone(fmt: str) -> None:
    """The strict rewrite works on a copy."""
    person = tool_for(Person)
    before = copy.deepcopy(person.input_schema)
    out = body(definition(person, fmt, strict=True), fmt)  # type: ignore[arg-type]
    assert out["strict"] is True
    assert out["schema"] != before
    assert person.input_schema == before


# -- OpenAI, through the official client -----------------------------------------------------


def openai_client(answers: list[dict[str, Any]]) -> Any:
    """The real OpenAI client, with a transport that answers one canned completion per request."""
    import openai

    def handle(request: httpx.Request) -> httpx.Response:
        answers.append(json.loads(request.content))
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "person", "arguments": '{"name": "Ada"}'},
                }
            ],
        }
        completion = {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-test",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
        }
        return httpx.Response(200, json=completion)

    transport = httpx.MockTransport(handle)
    return openai.OpenAI(api_key="test", http_client=httpx.Client(transport=transport))


def test_openai_parse_accepts_strict_definitions() -> None:
    """``chat.completions.parse`` takes ``strict=True`` definitions and sends them as they are."""
    sent: list[dict[str, Any]] = []
    tools = definitions([("person", tool_for(Person))], "openai", strict=True)
    completion = openai_client(sent).chat.completions.parse(
        model="gpt-test", messages=[{"role": "user", "content": "hi"}], tools=tools
    )
    call = completion.choices[0].message.tool_calls[0]
    assert call.function.parsed_arguments == {"name": "Ada"}
    assert sent[0]["tools"] == tools


def test_openai_parse_rejects_what_best_effort_left_non_strict() -> None:
    """Why ``strict=True`` fails closed: the SDK refuses the whole request for one loose tool."""
    pairs = [("person", tool_for(Person)), ("finder", tool_for(WithOpenDict))]
    with pytest.raises(ExportError, match="'finder'"):
        definitions(pairs, "openai", strict=True)
    with pytest.warns(ExportWarning):
        tools = definitions(pairs, "openai", strict="best_effort")
    sent: list[dict[str, Any]] = []
    with pytest.raises(ValueError, match="`finder` is not strict"):
        openai_client(sent).chat.completions.parse(
            model="gpt-test", messages=[{"role": "user", "content": "hi"}], tools=tools
        )
    assert sent == []


# -- Anthropic -------------------------------------------------------------------------------


def test_anthropic_strict_definition_matches_the_sdk_type() -> None:
    """``strict: true`` and a closed schema that keeps ``required`` as declared."""
    from anthropic.types import ToolParam

    d = definition(tool_for(Person, "person"), "anthropic", strict=True)
    TypeAdapter(ToolParam).validate_python(d)
    assert d["strict"] is True
    schema = d["input_schema"]
    assert schema["required"] == ["name", "address"]  # optional stays optional: no nulls
    nickname = Person.model_json_schema()["properties"]["nickname"]
    assert schema["properties"]["nickname"] == {k: v for k, v in nickname.items() if k != "default"}
    for node in nodes(schema):
        if node.get("type") == "object":
            assert node["additionalProperties"] is False, node
        assert "default" not in node or node["default"] is None, node


def descriptions(schema: Any) -> list[str]:
    return sorted(n["description"] for n in nodes(schema) if isinstance(n.get("description"), str))


def test_anthropic_sdk_transform_finds_nothing_left_to_move() -> None:
    """The SDK's own ``transform_schema`` adds nothing to our descriptions: all is supported."""
    import anthropic
    schema = definition(tool_for(Person), "anthropic", strict=True)["input_schema"]
    assert descriptions(anthropic.transform_schema(copy.deepcopy(schema))) == descriptions(schema)
    # The check is not vacuous: the tool's own schema has keywords the SDK would move.
    raw = Person.model_json_schema()
    assert descriptions(anthropic.transform_schema(copy.deepcopy(raw))) != descriptions(raw)
    assert schema["properties"]["age"] == {
        "title": "Age",
        "type": "integer",
        "description": "Default: 30. (constraints: maximum 150, minimum 0)",
    }


def test_anthropic_constraints_moved_to_the_description_still_hold() -> None:
    """The gate validates against the tool's own schema, so ``ge``/``le`` are still enforced."""

    @tool
    def schedule(days: Annotated[int, Field(ge=1, le=14)] = 3) -> str:
        """Schedule something."""
        return f"in {days} days"

    toolset = Toolset([schedule])
    (d,) = toolset.definitions("anthropic", strict=True)
    assert not [n for n in nodes(d) if "minimum" in n or "maximum" in n]
    assert (
        "constraints: maximum 14, minimum 1"
        in d["input_schema"]["properties"]["days"]["description"]
    )
    refused = asyncio.run(toolset.call("schedule", {"days": 40}))
    assert refused.is_error
    assert "days" in refused.content
    assert asyncio.run(toolset.call("schedule", {"days": 4})).content == "in 4 days"


def test_anthropic_keeps_what_it_enforces_and_notes_the_rest() -> None:
    """``minItems`` 0 or 1 and ``uri`` stay; a larger ``minItems`` and other formats are noted."""
    schema = {
        "type": "object",
        "properties": {
            "one": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "two": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "url": {"type": "string", "format": "uri"},
            "path": {"type": "string", "format": "path", "description": "A file"},
        },
        "required": ["one"],
    }
    props = definition(FakeTool("t", "d", schema), "anthropic", strict=True)["input_schema"][
        "properties"
    ]
    assert props["one"]["minItems"] == 1
    assert "minItems" not in props["two"]
    assert props["two"]["description"] == "Constraints: minItems 2."
    assert props["url"]["format"] == "uri"
    assert props["path"] == {"type": "string", "description": 'A file (constraints: format "path")'}
    with pytest.raises(ExportError, match="unsupported format 'path' at 'path'"):
        definition(FakeTool("t", "d", schema), "openai", strict=True)


@pytest.mark.parametrize("fmt", STRICT_FORMATS)
def test_strict_refuses_enum_values_that_are_not_primitive(fmt: str) -> None:
    """An enum of objects is not something a strict grammar can hold."""
    schema = {"type": "object", "properties": {"p": {"enum": [{"a": 1}, "b"]}}, "required": ["p"]}
    with pytest.raises(ExportError, match="an enum or const value that is not a primitive at 'p'"):
        definition(FakeTool("t", "d", schema), fmt, strict=True)  # type: ignore[arg-type]


def test_anthropic_strict_refuses_recursion_that_openai_accepts() -> None:
    """Anthropic's strict mode has no recursive schemas; OpenAI's has."""
    tree = tool_for(Node, "tree")
    assert definition(tree, "openai", strict=True)["function"]["strict"] is True
    for fmt in ("anthropic", "bedrock"):
        with pytest.raises(ExportError, match="a recursive reference '#/\\$defs/Node'"):
            definition(tree, fmt, strict=True)  # type: ignore[arg-type]


def test_anthropic_strict_turns_one_of_into_any_of() -> None:
    """A discriminated union is strict for Anthropic (``anyOf``), not for OpenAI (``oneOf``)."""
    d = definition(tool_for(Pet), "anthropic", strict=True)
    pet = d["input_schema"]["properties"]["pet"]
    assert "oneOf" not in pet
    assert "discriminator" not in pet
    assert [m["$ref"] for m in pet["anyOf"]] == ["#/$defs/Cat", "#/$defs/Dog"]
    with pytest.raises(ExportError, match="unsupported keyword 'oneOf' at 'pet'"):
        definition(tool_for(Pet), "openai", strict=True)


def test_anthropic_client_sends_strict() -> None:
    """The official client sends ``strict`` with the tool, as we exported it."""
    import anthropic
    import httpx2
    sent: list[dict[str, Any]] = []

    def handle(request: Any) -> Any:
        sent.append(json.loads(request.content))
        message = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "person", "input": {}}],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        return httpx2.Response(200, json=message)

    client = anthropic.Anthropic(
        api_key="test", http_client=httpx2.Client(transport=httpx2.MockTransport(handle))
    )
    tools = definitions([("person", tool_for(Person))], "anthropic", strict=True)
    client.messages.create(
        model="claude-test",
        max_tokens=10,
        messages=[{"role": "user", "content": "hi"}],
        tools=tools,  # type: ignore[arg-type]
    )
    assert sent[0]["tools"] == tools
    assert sent[0]["tools"][0]["strict"] is True


# -- Bedrock ---------------------------------------------------------------------------------


def validate_converse(tools: list[dict[str, Any]]) -> None:
    from botocore import session as botocore_session
    from botocore.validate import ParamValidator  # type: ignore[import-untyped]

    model = botocore_session.get_session().get_service_model("bedrock-runtime")
    shape = model.operation_model("Converse").input_shape
    params = {
        "modelId": "m",
        "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        "toolConfig": {"tools": tools},
    }
    report = ParamValidator().validate(params, shape)
    assert not report.has_errors(), report.generate_report()


def test_bedrock_strict_definition_is_a_valid_converse_tool() -> None:
    """``toolSpec.strict`` is a member of botocore's ``ToolSpecification`` shape."""
    d = definition(tool_for(Person, "person"), "bedrock", strict=True)
    assert d["toolSpec"]["strict"] is True
    anthropic = definition(tool_for(Person, "person"), "anthropic", strict=True)
    assert d["toolSpec"]["inputSchema"]["json"] == anthropic["input_schema"]
    validate_converse([d])
    with pytest.raises(AssertionError, match="Unknown parameter"):  # the check is not vacuous
        validate_converse([{"toolSpec": {**d["toolSpec"], "strictness": True}}])
