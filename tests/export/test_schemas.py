"""Schema transforms: OpenAI strict mode, Gemini's schema subset, and strict-mode nulls."""

from __future__ import annotations

import json
import warnings
from datetime import datetime
from typing import Any, Literal

import pytest
from google.genai import types as genai  # the test extra installs it: the official shapes
from pydantic import AnyUrl, BaseModel, Field

from toolpacks.core.call._strict_nulls import drop_strict_nulls
from toolpacks.export import ExportWarning, definition

from ._fakes import FakeTool


def tool_for(model: type[BaseModel], name: str = "t") -> FakeTool:
    return FakeTool(name, f"{model.__name__} tool.", model.model_json_schema())


class Address(BaseModel):
    street: str
    zip_code: str | None = None
    kind: Literal["home", "work"] = "home"


class Person(BaseModel):
    name: str = Field(description="Full name")
    age: int = 30
    nickname: str | None = None
    address: Address = Field(description="Where they live")
    previous: list[Address] = []
    employer: Address | None = None


class Node(BaseModel):
    label: str
    children: list[Node] = []


class WithOpenDict(BaseModel):
    query: str
    filters: dict[str, str] = {}


class WithAny(BaseModel):
    payload: Any


class WithMinLength(BaseModel):
    code: str = Field(min_length=3)


class WithUrl(BaseModel):
    url: AnyUrl


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class Pets(BaseModel):
    pet: Cat | Dog = Field(discriminator="kind")
    seen: datetime
    score: float = Field(gt=0, multiple_of=0.5)
    tags: set[str] = set()


def strict_params(
    tool: FakeTool, fmt: str = "openai", mode: bool | str = True
) -> tuple[dict[str, Any], bool]:
    d = definition(tool, fmt, strict=mode)  # type: ignore[arg-type]
    fn = d["function"] if fmt == "openai" else d
    return fn["parameters"], fn["strict"]


def walk(node: Any) -> list[dict[str, Any]]:
    """Every schema object in ``node``, depth first."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        found.append(node)
        for value in node.values():
            found.extend(walk(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(walk(value))
    return found


def assert_strict_shape(schema: dict[str, Any]) -> None:
    """OpenAI's documented strict rules: closed objects, every property required, no default."""
    for node in walk(schema):
        if "properties" in node and isinstance(node.get("required"), list):
            assert node["additionalProperties"] is False, node
            assert node["required"] == list(node["properties"]), node
        assert "default" not in node or not isinstance(node.get("default"), (str, int, list)), node
    assert "anyOf" not in schema
    assert schema["type"] == "object"


# -- OpenAI strict mode --------------------------------------------------------------------


def test_strict_makes_every_property_required_and_closes_every_object() -> None:
    """Nested models and $defs: all required, ``additionalProperties: false`` everywhere."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExportWarning)
        params, strict = strict_params(tool_for(Person))
    assert strict is True
    assert_strict_shape(params)
    assert_strict_shape(params["$defs"]["Address"])
    assert params["$defs"]["Address"]["required"] == ["street", "zip_code", "kind"]


def test_strict_makes_optional_properties_nullable() -> None:
    """Optional properties accept null; required ones do not gain it."""
    params, _ = strict_params(tool_for(Person))
    props = params["properties"]
    assert props["age"]["type"] == ["integer", "null"]
    assert props["name"]["type"] == "string"
    assert {"type": "null"} in props["nickname"]["anyOf"]  # already nullable, kept
    kind = params["$defs"]["Address"]["properties"]["kind"]
    assert kind["anyOf"][1] == {"type": "null"}  # an enum is wrapped, not given a type list
    assert kind["anyOf"][0]["enum"] == ["home", "work"]


def test_strict_moves_defaults_into_descriptions() -> None:
    """``default`` is unsupported: it is removed and its value noted; null defaults vanish."""
    params, _ = strict_params(tool_for(Person))
    text = json.dumps(params)
    assert '"default"' not in text
    assert params["properties"]["age"]["description"] == "Default: 30."
    kind = params["$defs"]["Address"]["properties"]["kind"]
    assert kind["description"] == 'Default: "home".'
    assert "description" not in params["$defs"]["Address"]["properties"]["zip_code"]


def test_strict_inlines_refs_with_sibling_keywords() -> None:
    """``{"$ref", "description"}`` is inlined (strict mode refuses siblings); bare refs stay."""
    params, _ = strict_params(tool_for(Person))
    address = params["properties"]["address"]
    assert "$ref" not in address
    assert address["description"] == "Where they live"
    assert address["additionalProperties"] is False
    assert params["properties"]["previous"]["items"] == {"$ref": "#/$defs/Address"}


def test_strict_output_accepts_what_the_model_sends_and_the_tool_accepts_it() -> None:
    """A strict-shaped answer validates against the strict schema and, cleaned, the model."""
    import jsonschema
    params, _ = strict_params(tool_for(Person))
    answer = {
        "name": "Ada",
        "age": None,
        "nickname": None,
        "address": {"street": "Main", "zip_code": None, "kind": None},
        "previous": None,
        "employer": {"street": "Lab", "zip_code": "1", "kind": "work"},
    }
    jsonschema.validate(answer, params)
    person = Person.model_validate(drop_strict_nulls(answer, Person.model_json_schema()))
    assert person.age == 30
    assert person.address.kind == "home"
    assert person.employer is not None
    assert person.employer.kind == "work"


def test_strict_keeps_recursive_models() -> None:
    """Recursive $defs are supported by strict mode: refs stay, the def is made strict."""
    params, strict = strict_params(tool_for(Node))
    assert strict is True
    assert params["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert params["$defs"]["Node"]["required"] == ["label", "children"]
    assert params["$defs"]["Node"]["additionalProperties"] is False


def test_strict_responses_format_gets_the_same_rewrite() -> None:
    """``openai-responses`` strict definitions carry the same rewritten schema."""
    chat, _ = strict_params(tool_for(Person))
    responses, strict = strict_params(tool_for(Person), "openai-responses")
    assert strict is True
    assert responses == chat


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        (WithOpenDict, "open object (additionalProperties) at 'filters"),
        (WithAny, "a value of any type (no 'type') at 'payload'"),
        (WithMinLength, "unsupported keyword 'minLength' at 'code'"),
        (WithUrl, "unsupported format 'uri' at 'url'"),
        (Pets, "unsupported keyword 'oneOf' at 'pet'"),
    ],
)
def test_strict_best_effort_falls_back_to_non_strict_with_a_warning(
    model: type[BaseModel], reason: str
) -> None:
    """With ``"best_effort"``, what strict mode cannot express exports non-strict, unchanged."""
    tool = tool_for(model, name="finder")
    for fmt in ("openai", "openai-responses"):
        with pytest.warns(ExportWarning) as record:
            params, strict = strict_params(tool, fmt, "best_effort")
        assert strict is False
        assert params == tool.input_schema
        assert len(record) == 1
        message = str(record[0].message)
        assert "'finder'" in message
        assert fmt in message
        assert reason in message


def test_strict_warning_lists_every_reason_once() -> None:
    """Several problems are all named in the one warning, each once."""
    with pytest.warns(ExportWarning) as record:
        strict_params(tool_for(Pets), mode="best_effort")
    message = str(record[0].message)
    assert "uniqueItems" in message
    assert "exclusiveMinimum" not in message  # supported in strict mode
    assert message.count("'oneOf'") == 1


def test_non_strict_export_never_warns() -> None:
    """Without ``strict=True`` the schema goes out as it is, silently."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = definition(tool_for(WithOpenDict), "openai")
    assert d["function"]["parameters"] == WithOpenDict.model_json_schema()


def test_strict_mode_of_a_tool_without_parameters() -> None:
    """An empty parameter object is valid strict: no properties, closed."""
    params, strict = strict_params(FakeTool("now", "Time.", {"type": "object", "properties": {}}))
    assert strict is True
    assert params == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


# -- drop_strict_nulls ---------------------------------------------------------------------


def test_drop_strict_nulls_removes_nulls_only_where_null_is_invalid() -> None:
    """Optional non-nullable keys lose their null; nullable or required ones keep it."""
    schema = Person.model_json_schema()
    args = {"name": None, "age": None, "nickname": None, "address": {"street": "x", "kind": None}}
    assert drop_strict_nulls(args, schema) == {
        "name": None,
        "nickname": None,
        "address": {"street": "x"},
    }
    assert args["age"] is None  # the input is not modified


def test_drop_strict_nulls_follows_refs_arrays_and_optional_models() -> None:
    """Items of arrays and ``Optional[Model]`` members are cleaned too."""
    schema = Person.model_json_schema()
    args = {
        "previous": [{"street": "a", "kind": None}],
        "employer": {"street": "b", "kind": None, "zip_code": None},
    }
    assert drop_strict_nulls(args, schema) == {
        "previous": [{"street": "a"}],
        "employer": {"street": "b", "zip_code": None},
    }


# -- Gemini --------------------------------------------------------------------------------


def gemini_params(tool: FakeTool) -> tuple[dict[str, Any], list[str]]:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        d = definition(tool, "gemini")
    messages = [str(w.message) for w in record if issubclass(w.category, ExportWarning)]
    genai.FunctionDeclaration.model_validate(d)  # the SDK forbids unknown fields
    return d.get("parameters", {}), messages


def test_gemini_inlines_defs_and_marks_nullable() -> None:
    """No $ref/$defs survive; ``X | None`` becomes X with ``nullable: true``."""
    params, _ = gemini_params(tool_for(Person))
    text = json.dumps(params)
    assert "$ref" not in text
    assert "$defs" not in text
    props = params["properties"]
    assert props["nickname"] == {
        "default": None,
        "title": "Nickname",
        "nullable": True,
        "type": "string",
    }
    employer = props["employer"]
    assert employer["nullable"] is True
    assert employer["type"] == "object"
    assert employer["properties"]["street"] == {"title": "Street", "type": "string"}
    assert props["address"]["description"] == "Where they live"
    assert props["previous"]["items"]["required"] == ["street"]


def test_gemini_clean_schema_gives_no_warning() -> None:
    """``additionalProperties: false`` and $defs vanish silently: nothing is lost."""
    params, messages = gemini_params(tool_for(Person))
    assert messages == []
    assert "additionalProperties" not in json.dumps(params)


def test_gemini_warns_once_per_tool_listing_removed_keywords() -> None:
    """One warning names the tool and every keyword that had to go."""
    params, messages = gemini_params(tool_for(Pets, name="pets"))
    assert len(messages) == 1
    message = messages[0]
    assert "'pets'" in message
    assert "gemini" in message
    for keyword in ("oneOf (replaced by anyOf)", "exclusiveMinimum", "multipleOf", "uniqueItems"):
        assert keyword in message
    assert "format" not in message  # date-time is a documented Gemini format
    assert params["properties"]["seen"]["format"] == "date-time"
    assert len(params["properties"]["pet"]["anyOf"]) == 2


def test_gemini_keeps_open_dicts_and_removes_unknown_formats() -> None:
    """A dict keeps its value type (``additionalProperties``); ``format: uri`` is reported."""
    params, messages = gemini_params(tool_for(WithOpenDict))
    assert params["properties"]["filters"] == {
        "default": {},
        "title": "Filters",
        "type": "object",
        "additionalProperties": {"type": "string"},
    }
    assert messages == []
    params, messages = gemini_params(tool_for(WithUrl))
    assert "format" not in params["properties"]["url"]
    assert "format" in messages[0]


def test_gemini_cuts_recursive_references_with_a_warning() -> None:
    """A recursive model is inlined one level deep and the cut is reported."""
    params, messages = gemini_params(tool_for(Node, name="tree"))
    inner = params["properties"]["children"]["items"]
    assert inner["properties"]["label"]["type"] == "string"
    cut = inner["properties"]["children"]["items"]
    assert cut["type"] == "object"
    assert cut["description"] == "Recursive: the same structure as the enclosing Node."
    assert len(messages) == 1
    assert "#/$defs/Node" in messages[0]


def test_gemini_rewrites_const_type_lists_and_non_string_enums() -> None:
    """String const → enum; ``[T, "null"]`` → nullable T; numeric enums → description."""
    schema = {
        "type": "object",
        "properties": {
            "mode": {"const": "fast"},
            "limit": {"type": ["integer", "null"]},
            "level": {"type": "integer", "enum": [1, 2, 3], "description": "Level"},
            "pick": {"type": "string", "enum": ["a", "b", None]},
        },
        "required": ["mode", "missing"],
    }
    params, messages = gemini_params(FakeTool("t", "d", schema))
    props = params["properties"]
    assert props["mode"] == {"enum": ["fast"], "format": "enum"}
    assert props["limit"] == {"type": "integer", "nullable": True}
    assert props["level"] == {"type": "integer", "description": "Level (allowed values: 1, 2, 3)"}
    assert props["pick"]["nullable"] is True
    assert props["pick"]["enum"] == ["a", "b"]
    assert params["required"] == ["mode"]
    assert "enum (values that are not strings)" in messages[0]
