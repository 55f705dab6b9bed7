"""Every TOOL.md front matter field, and the JSON Schema built from the parameters."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolpacks import Host, Tool, ToolHints, Toolset

Load = Callable[[], tuple[dict[str, Tool], list[str]]]


def only(load: Load) -> Tool:
    tools, problems = load()
    assert problems == []
    (tool,) = tools.values()
    return tool


def test_name_defaults_to_the_directory_name(make_tool: Callable[..., Path], load: Load) -> None:
    """Without `name`, the tool is named after its directory."""
    make_tool("word_count", "description: Count words.")
    assert only(load).name == "word_count"


def test_name_and_description_come_from_the_front_matter(
    make_tool: Callable[..., Path], load: Load
) -> None:
    """`name` and `description` become the tool's name and description."""
    make_tool("dir", "name: search-notes\ndescription: Search the notes.")
    tool = only(load)
    assert (tool.name, tool.description) == ("search-notes", "Search the notes.")


def test_missing_description_falls_back_to_the_name_with_a_warning(
    make_tool: Callable[..., Path], load: Load, caplog: Any
) -> None:
    """A tool without `description` loads, described by its name, and a log record says so."""
    make_tool("bare", "tags: [x]")
    assert only(load).description == "bare"
    assert any("no description" in r.getMessage() for r in caplog.records)


def test_body_is_kept_as_instructions(make_tool: Callable[..., Path], load: Load) -> None:
    """The Markdown after the front matter is `tool.instructions`; an empty body is None."""
    make_tool("a", "description: A.", body="\nCall it twice.\n\n- then stop\n")
    make_tool("b", "description: B.")
    tools, _ = load()
    assert tools["a"].instructions == "Call it twice.\n\n- then stop"
    assert tools["b"].instructions is None


def test_tags(make_tool: Callable[..., Path], load: Load) -> None:
    """`tags` (a list, or one string) become the tool's tags."""
    make_tool("a", "description: A.\ntags: [read, files]")
    make_tool("b", "description: B.\ntags: read")
    tools, _ = load()
    assert tools["a"].tags == {"read", "files"}
    assert tools["b"].tags == {"read"}


def test_parameter_type_defaults_to_string(make_tool: Callable[..., Path], load: Load) -> None:
    """A parameter without `type` is a string (and one with no settings at all, too)."""
    make_tool("t", "description: T.\nparameters:\n  q:\n    description: Query.\n  r:\n")
    props = only(load).input_schema["properties"]
    assert props == {"q": {"type": "string", "description": "Query."}, "r": {"type": "string"}}


def test_every_parameter_type_and_the_schema_shape(
    make_tool: Callable[..., Path], load: Load
) -> None:
    """The six types map to JSON Schema types; the schema is a closed object."""
    make_tool(
        "t",
        """
        description: T.
        parameters:
          s: {type: string}
          n: {type: number}
          i: {type: integer}
          b: {type: boolean}
          a: {type: array, items: {type: string}}
          o: {type: object}
        """,
    )
    schema = only(load).input_schema
    assert schema == {
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "n": {"type": "number"},
            "i": {"type": "integer"},
            "b": {"type": "boolean"},
            "a": {"type": "array", "items": {"type": "string"}},
            "o": {"type": "object"},
        },
        "additionalProperties": False,
    }


def test_required_defaults_to_false(make_tool: Callable[..., Path], load: Load) -> None:
    """Only parameters with `required: true` are in the schema's `required` list."""
    make_tool(
        "t",
        """
        description: T.
        parameters:
          a: {required: true}
          b: {required: false}
          c: {}
        """,
    )
    assert only(load).input_schema["required"] == ["a"]


def test_enum_and_default_appear_in_the_schema(make_tool: Callable[..., Path], load: Load) -> None:
    """`enum: [1,2,3,4,5]` and `default: 500` are copied into the property as given."""
    make_tool(
        "t",
        """
        description: T.
        parameters:
          stars: {type: integer, enum: [1, 2, 3, 4, 5], description: Rating.}
          limit: {type: integer, default: 500}
        """,
    )
    props = only(load).input_schema["properties"]
    assert props["stars"] == {"type": "integer", "description": "Rating.", "enum": [1, 2, 3, 4, 5]}
    assert props["limit"] == {"type": "integer", "default": 500}


def test_parameter_description_reaches_provider_definitions(
    make_tool: Callable[..., Path], tools_dir: Path
) -> None:
    """A parameter's `description` is in the definition a model is sent."""
    make_tool("t", "description: T.\nparameters:\n  q: {description: What to look for.}")
    toolset = Host({"files": {"dirs": [str(tools_dir)]}}, discover=False).toolset()
    (definition,) = toolset.definitions("openai")
    text = repr(definition)
    assert "What to look for." in text


def test_hints_and_title_and_timeout(make_tool: Callable[..., Path], load: Load) -> None:
    """Behaviour hints, `title` and `timeout` are passed to the tool."""
    make_tool(
        "t",
        """
        description: T.
        title: The T tool
        timeout: 2.5
        read_only: true
        destructive: false
        idempotent: true
        open_world: false
        """,
    )
    tool = only(load)
    assert tool.hints == ToolHints(
        read_only=True, destructive=False, idempotent=True, open_world=False
    )
    assert (tool.title, tool.timeout) == ("The T tool", 2.5)


def test_permissions_default_to_everyone_without_approval(
    make_tool: Callable[..., Path], load: Load
) -> None:
    """Without `permissions`, every agent may use the tool and no approval is needed."""
    make_tool("t", "description: T.")
    tool = only(load)
    assert tool.allowed_agents is None
    assert tool.require_approval is False


def test_allowed_agents_limits_who_resolves_and_calls(
    make_tool: Callable[..., Path], tools_dir: Path
) -> None:
    """An agent outside `allowed_agents` neither gets the tool nor can call it."""
    make_tool("secret", "description: S.\npermissions:\n  allowed_agents: [researcher]")
    host = Host(
        {
            "files": {"dirs": [str(tools_dir)]},
            "agents": {"researcher": {"packs": ["local"]}, "writer": {"packs": ["local"]}},
        },
        discover=False,
    )
    assert host.toolset("researcher").names() == ["secret"]
    assert host.toolset("writer").names() == []
    tool = host.tools()["local.secret"]
    assert tool.allowed_agents == {"researcher"}
    result = asyncio.run(Toolset([tool], agent="writer").call("secret", {}))
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "denied"


def test_require_approval_waits_for_the_handler(
    make_tool: Callable[..., Path], tools_dir: Path
) -> None:
    """`require_approval: true` runs the handler only after approval; no handler denies."""
    make_tool("rm", "description: R.\npermissions:\n  require_approval: true")
    asked: list[str] = []

    def approve(request: Any) -> bool:
        asked.append(request.qualified_name)
        return True

    config = {"files": {"dirs": [str(tools_dir)]}}
    approved = Host(config, discover=False, approval=approve).toolset()
    result = asyncio.run(approved.call("rm", {}))
    assert not result.is_error
    assert asked == ["local.rm"]
    denied = asyncio.run(Host(config, discover=False).toolset().call("rm", {}))
    assert denied.is_error
    assert denied.error is not None
    assert denied.error.kind == "denied"
    assert "requires approval" in denied.content
