"""Input and output JSON Schemas generated from signatures."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from toolpacks import Tool, ToolContext, tool


class Color(enum.Enum):
    """A colour."""

    RED = "red"
    BLUE = "blue"


class Point(TypedDict):
    """A point."""

    x: int
    y: int


@dataclasses.dataclass
class Window:
    """A window."""

    width: int
    title: str = "untitled"


class Query(BaseModel):
    """A query."""

    text: str
    limit: int = 10


def _all_keys(schema: Any) -> set[str]:
    """Every key used anywhere in a JSON value (property names included)."""
    if isinstance(schema, dict):
        keys = set(schema)
        for value in schema.values():
            keys |= _all_keys(value)
        return keys
    if isinstance(schema, list):
        return set().union(*(_all_keys(v) for v in schema)) if schema else set()
    return set()


def _schema_nodes(schema: Any) -> list[dict[str, Any]]:
    """Every sub-schema (not property-name mappings) of a schema."""
    from toolpacks.core.define._jsonschema import walk_schemas

    nodes: list[dict[str, Any]] = []
    walk_schemas(schema, nodes.append)
    return nodes


def test_bare_types_map_to_json_types() -> None:
    """str, int, float and bool become string, integer, number and boolean."""

    @tool
    def f(s: str, i: int, n: float, b: bool) -> str:
        """F."""
        return ""

    props = f.input_schema["properties"]
    assert {name: props[name]["type"] for name in props} == {
        "s": "string",
        "i": "integer",
        "n": "number",
        "b": "boolean",
    }
    assert f.input_schema["type"] == "object"


def test_required_are_the_parameters_without_default_and_defaults_are_emitted() -> None:
    """``required`` lists parameters without defaults; defaults appear in the schema."""

    @tool
    def f(query: str, limit: int = 5, exact: bool = False) -> str:
        """F."""
        return ""

    assert f.input_schema["required"] == ["query"]
    assert f.input_schema["properties"]["limit"]["default"] == 5
    assert f.input_schema["properties"]["exact"]["default"] is False
    assert "default" not in f.input_schema["properties"]["query"]


def test_no_required_key_when_everything_is_optional() -> None:
    """A tool without required parameters has no ``required`` list at all."""

    @tool
    def f(limit: int = 5) -> str:
        """F."""
        return ""

    assert "required" not in f.input_schema


def test_no_title_anywhere_but_a_parameter_named_title_survives() -> None:
    """No ``title`` keyword at any level, while a property *named* ``title`` is kept."""

    @tool
    def f(title: str, window: Window, query: Query, point: Point, color: Color) -> str:
        """F."""
        return ""

    nodes = _schema_nodes(f.input_schema)
    assert len(nodes) > 10
    assert [node for node in nodes if "title" in node] == []
    assert "title" in f.input_schema["properties"]
    assert "title" in f.input_schema["$defs"]["Window"]["properties"]


def test_additional_properties_false_when_extras_are_rejected() -> None:
    """By default the schema says ``additionalProperties: false``."""

    @tool
    def f(x: int) -> int:
        """F."""
        return x

    assert f.input_schema["additionalProperties"] is False


def test_additional_properties_absent_when_extras_are_ignored() -> None:
    """With ``extra_args="ignore"`` the schema does not forbid extra properties."""

    @tool(extra_args="ignore")
    def f(x: int) -> int:
        """F."""
        return x

    assert "additionalProperties" not in f.input_schema


def test_var_keyword_opens_the_schema() -> None:
    """A ``**kwargs`` function accepts extra properties, and the schema says so."""

    @tool
    def f(x: int, **extra: Any) -> int:
        """F."""
        return x

    assert f.input_schema["additionalProperties"] is True
    assert list(f.input_schema["properties"]) == ["x"]


def test_optional_with_default_is_collapsed_to_its_type() -> None:
    """``Optional[T] = None`` (and ``T | None``) become T's schema with default null."""

    @tool
    def f(a: Optional[int] = None, b: str | None = None) -> str:  # noqa: UP045
        """F."""
        return ""

    props = f.input_schema["properties"]
    assert props["a"] == {"type": "integer", "default": None, "description": "Parameter a"}
    assert props["b"] == {"type": "string", "default": None, "description": "Parameter b"}
    assert "required" not in f.input_schema


def test_required_optional_keeps_its_null_branch() -> None:
    """A required ``Optional[T]`` (no default) keeps ``anyOf [T, null]``."""

    @tool
    def f(a: int | None) -> str:
        """F."""
        return ""

    assert f.input_schema["properties"]["a"]["anyOf"] == [{"type": "integer"}, {"type": "null"}]
    assert f.input_schema["required"] == ["a"]


def test_literal_and_enum_become_enums() -> None:
    """``Literal`` gives an inline enum; an ``Enum`` a reference to its definition."""

    @tool
    def f(mode: Literal["fast", "slow"], color: Color) -> str:
        """F."""
        return ""

    props = f.input_schema["properties"]
    assert props["mode"]["enum"] == ["fast", "slow"]
    assert props["color"]["$ref"] == "#/$defs/Color"
    assert f.input_schema["$defs"]["Color"]["enum"] == ["red", "blue"]


def test_structured_parameters_get_nested_schemas() -> None:
    """TypedDict, dataclass and pydantic model parameters are nested under their names."""

    @tool
    def f(point: Point, window: Window, query: Query) -> str:
        """F."""
        return ""

    defs = f.input_schema["$defs"]
    assert defs["Point"]["required"] == ["x", "y"]
    assert defs["Window"]["properties"]["title"]["default"] == "untitled"
    assert defs["Query"]["properties"]["limit"] == {"default": 10, "type": "integer"}
    assert f.input_schema["properties"]["query"]["$ref"] == "#/$defs/Query"


def test_generic_list_and_dict_parameters() -> None:
    """``list[int]`` and ``dict[str, float]`` describe their items and values."""

    @tool
    def f(ids: list[int], weights: dict[str, float]) -> str:
        """F."""
        return ""

    props = f.input_schema["properties"]
    assert props["ids"]["type"] == "array"
    assert props["ids"]["items"] == {"type": "integer"}
    assert props["weights"]["type"] == "object"
    assert props["weights"]["additionalProperties"] == {"type": "number"}


def test_annotated_field_constraints_are_kept() -> None:
    """``Annotated[T, Field(...)]`` keeps description, bounds, lengths and patterns."""

    @tool
    def f(
        n: Annotated[int, Field(description="How many", ge=1, le=10)],
        code: Annotated[str, Field(min_length=2, max_length=4, pattern="^[A-Z]+$")],
    ) -> str:
        """F."""
        return ""

    props = f.input_schema["properties"]
    assert props["n"] == {"type": "integer", "minimum": 1, "maximum": 10, "description": "How many"}
    assert props["code"]["minLength"] == 2
    assert props["code"]["maxLength"] == 4
    assert props["code"]["pattern"] == "^[A-Z]+$"


def test_annotated_string_is_a_description() -> None:
    """``Annotated[float, "First number"]`` gives a number with that description."""

    @tool
    def f(a: Annotated[float, "First number"]) -> float:
        """F."""
        return a

    assert f.input_schema["properties"]["a"] == {"type": "number", "description": "First number"}


def test_self_and_context_never_reach_the_schema() -> None:
    """``self`` and a ToolContext parameter (any name) are not properties."""

    class Service:
        @tool
        def lookup(self, key: str, whoever: ToolContext) -> str:
            """Look up."""
            return key

    assert list(Service.lookup.input_schema["properties"]) == ["key"]
    assert Service.lookup.input_schema["required"] == ["key"]


def test_optional_context_is_still_the_context() -> None:
    """``ctx: ToolContext | None = None`` is the context parameter, not an input."""

    @tool
    def f(x: int, ctx: ToolContext | None = None) -> int:
        """F."""
        return x

    assert list(f.input_schema["properties"]) == ["x"]


def test_json_schema_alias_and_metadata_schemas() -> None:
    """``json_schema`` is ``input_schema``; metadata exposes both schemas."""

    @tool
    def f(x: int) -> str:
        """F."""
        return ""

    assert f.json_schema is f.input_schema
    assert f.metadata.input_schema == {
        "type": "object",
        "properties": {"x": {"type": "integer", "description": "Parameter x"}},
        "required": ["x"],
        "additionalProperties": False,
    }
    assert f.metadata.output_schema == {"type": "string"}


def test_output_schema_from_the_return_annotation() -> None:
    """The return type gives ``output_schema``; a model return its JSON Schema."""

    @tool
    def listing() -> list[str]:
        """L."""
        return []

    @tool
    def search() -> Query:
        """S."""
        return Query(text="x")

    assert listing.output_schema == {"type": "array", "items": {"type": "string"}}
    assert search.output_schema == {
        "type": "object",
        "description": "A query.",
        "properties": {"text": {"type": "string"}, "limit": {"default": 10, "type": "integer"}},
        "required": ["text"],
    }


def test_output_schema_is_none_for_none_and_any() -> None:
    """``-> None`` and ``-> Any`` have no output schema."""

    @tool
    def nothing() -> None:
        """N."""

    @tool
    def anything() -> Any:
        """A."""
        return 1

    assert nothing.output_schema is None
    assert anything.output_schema is None


def test_output_schema_of_generators_is_the_item_type() -> None:
    """A generator's output schema describes its items."""

    @tool
    def words() -> Iterator[str]:
        """W."""
        yield "a"

    @tool
    async def numbers() -> AsyncIterator[int]:
        """N."""
        yield 1

    assert words.output_schema == {"type": "string"}
    assert numbers.output_schema == {"type": "integer"}


def test_input_schema_override_is_used_verbatim() -> None:
    """``input_schema=`` replaces the generated schema exactly."""
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string", "description": "custom", "title": "Kept"}},
        "required": ["q"],
    }

    @tool(input_schema=schema)
    def search(q: str) -> str:
        """Search."""
        return q

    assert search.input_schema == schema


def test_hand_built_tool_schema_is_kept() -> None:
    """``Tool(..., parameters=...)`` exposes that schema unchanged."""
    schema = {"type": "object", "properties": {"n": {"type": "integer", "default": 7}}}
    t = Tool(name="h", func=lambda n: n, description="H.", parameters=schema)
    assert t.input_schema == schema
    assert t.output_schema is None


def test_keys_are_limited_to_json_schema_keywords() -> None:
    """No pydantic-specific noise (titles, ``$schema``) in a realistic schema."""

    @tool
    def f(q: Annotated[str, Field(description="Query")], limit: int = 3) -> list[str]:
        """F."""
        return []

    assert _all_keys(f.input_schema) == {
        "type",
        "properties",
        "q",
        "limit",
        "description",
        "default",
        "required",
        "additionalProperties",
    }
