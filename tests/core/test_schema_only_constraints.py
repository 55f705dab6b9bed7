"""Schema-only tools (hand-built, file tools, remote MCP tools) check their whole schema.

Their arguments used to be checked by top-level type only: ``minimum``, ``pattern``,
``maxLength``, a nested ``required``... passed unchecked to the handler. The gate now
validates them against the schema with ``jsonschema`` (imported on the first such call), with
messages that read like the gate's others (path and reason), secrets masked.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Tool, ToolResult, Toolset

ran: list[dict[str, Any]] = []


def _handler(**arguments):  # type: ignore[no-untyped-def]  # untyped: a schema-only tool
    ran.append(arguments)
    return "ok"


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "count": {"type": "integer", "minimum": 1, "maximum": 10},
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 4}},
        "filter": {
            "type": "object",
            "properties": {
                "field": {"type": "string"},
                "limit": {"type": "integer", "exclusiveMinimum": 0},
            },
            "required": ["field"],
            "additionalProperties": False,
        },
        "token": {"type": "string", "writeOnly": True, "minLength": 8},
    },
    "required": ["count"],
}


def _tool() -> Tool:
    return Tool(_handler, name="remote", description="A remote tool.", input_schema=SCHEMA)


def _call(arguments: dict[str, Any], t: Tool | None = None) -> ToolResult:
    ran.clear()
    return asyncio.run((t or _tool()).invoke(arguments))


def _details(result: ToolResult) -> dict[str, str]:
    assert result.is_error, result
    assert result.error is not None
    assert result.error.kind == "invalid_arguments", result.error
    assert ran == []  # the handler never ran
    return {d.argument: d.message for d in result.error.details}


def test_valid_arguments_pass_unchanged() -> None:
    """What satisfies every constraint reaches the handler."""
    arguments = {"count": 3, "code": "ABC", "tags": ["a"], "filter": {"field": "f", "limit": 1}}
    result = _call(arguments)
    assert result.value == "ok", result.content
    assert ran == [arguments]


@pytest.mark.parametrize(
    ("arguments", "where", "reason"),
    [
        ({"count": 0}, "count", "greater than or equal to 1"),
        ({"count": 11}, "count", "less than or equal to 10"),
        ({"count": 1, "code": "abc"}, "code", "match pattern '^[A-Z]{3}$'"),
        ({"count": 1, "tags": ["ok", "too long"]}, "tags.1", "at most 4 characters"),
        ({"count": 1, "filter": {"limit": 2}}, "filter.field", "missing required"),
        ({"count": 1, "filter": {"field": "f", "limit": 0}}, "filter.limit", "greater than 0"),
        ({"count": 1, "filter": {"field": "f", "extra": 1}}, "filter.extra", "unexpected field"),
    ],
)
def test_nested_constraints_are_checked(arguments: dict[str, Any], where: str, reason: str) -> None:
    """Each constraint, at any depth, refuses with the path and a reason like pydantic's."""
    result = _call(arguments)
    details = _details(result)
    assert where in details, details
    assert reason in details[where]
    assert result.content.startswith("Invalid arguments for tool 'remote':\n- ")
    assert result.content.endswith("Fix the arguments and call the tool again.")


def test_every_problem_is_listed() -> None:
    """Several problems: one line each, in path order."""
    details = _details(_call({"count": 0, "code": "x", "tags": ["12345"]}))
    assert list(details) == ["code", "count", "tags.0"]


def test_a_secret_value_never_appears_in_the_message() -> None:
    """``writeOnly`` (or ``format: password``) values are redacted from the reasons."""
    result = _call({"count": 1, "token": "hunter2"})
    details = _details(result)
    assert "(value redacted)" in details["token"]
    assert "hunter2" not in result.content
    shown = _details(_call({"count": 1, "code": "lower-case"}))
    assert "'lower-case'" in shown["code"]  # other values are shown, as for typed tools


def test_through_a_toolset_the_same() -> None:
    """``Toolset.call`` goes through the same gate."""
    ran.clear()
    result = asyncio.run(Toolset([_tool()]).call("remote", {"count": 99}))
    assert "count" in _details(result)


def test_file_tools_check_their_item_constraints(tmp_path: Path) -> None:
    """A TOOL.md whose ``items`` carry constraints: they hold."""
    from toolpacks.filetools._loader import load_tools_dir

    directory = tmp_path / "tools" / "label"
    directory.mkdir(parents=True)
    (directory / "TOOL.md").write_text(
        textwrap.dedent(
            """\
            ---
            description: Label things.
            parameters:
              names: {type: array, required: true, items: {type: string, maxLength: 3}}
            ---
            """
        ),
        encoding="utf-8",
    )
    (directory / "handler.py").write_text(
        "def handle(arguments, context):\n    return arguments\n", encoding="utf-8"
    )
    tools, problems = load_tools_dir(tmp_path / "tools")
    assert problems == []
    (label,) = tools
    ok = asyncio.run(label.invoke({"names": ["abc"]}))
    assert ok.value == {"names": ["abc"]}, ok.content
    refused = asyncio.run(label.invoke({"names": ["abcd"]}))
    assert refused.error is not None
    assert [d.argument for d in refused.error.details] == ["names.0"]


def test_a_schema_jsonschema_cannot_use_does_not_break_the_tool() -> None:
    """An invalid schema (a remote server's mistake) keeps the top-level checks only."""
    broken = {"type": "object", "properties": {"n": {"type": "integer", "minimum": "zero"}}}
    t = Tool(_handler, name="odd", description="Odd.", input_schema=broken)
    assert _call({"n": 1}, t).value == "ok"
    assert _details(_call({"n": "x"}, t))["n"].startswith("Input should be a valid integer")


def test_jsonschema_is_imported_only_when_a_schema_only_call_is_validated() -> None:
    """Importing toolpacks and calling typed tools does not import jsonschema."""
    code = textwrap.dedent(
        """
        import asyncio, sys
        from toolpacks import Tool, tool

        @tool
        def add(a: int, b: int) -> int:
            '''Add.'''
            return a + b

        asyncio.run(add.invoke({"a": 1, "b": 2}))
        t = Tool(lambda **kw: "ok", name="s", description="S.",  # untyped: schema-only
                 input_schema={"type": "object", "properties": {"n": {"minimum": 1}}})
        before = "jsonschema" in sys.modules
        asyncio.run(t.invoke({"n": 2}))
        print(before, "jsonschema" in sys.modules)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["False", "True"], done.stderr


def test_remote_mcp_tools_check_nested_constraints() -> None:
    """A tool mounted from an MCP server is checked before anything is sent to the server."""
    from types import SimpleNamespace

    from mcp import types as mcp_types

    from toolpacks.packs.mcp._client import _remote_tool

    sent: list[Any] = []
    remote = mcp_types.Tool(name="book", description="Book a table.", input_schema=SCHEMA)
    gate: Any = SimpleNamespace(requires_approval=lambda name: False)
    settings: Any = SimpleNamespace(tags=[], timeout=5.0)
    connection: Any = SimpleNamespace(spec=SimpleNamespace(name="remote"), send=sent.append)
    t = _remote_tool(connection, remote, "book", "remote", settings, gate)
    assert t.signature is None  # schema-only
    result = asyncio.run(t.invoke({"count": 1, "filter": {"field": "f", "limit": -1}}))
    assert result.error is not None
    assert result.error.kind == "invalid_arguments", result
    assert [d.argument for d in result.error.details] == ["filter.limit"]
    assert sent == []


def test_strict_mode_nulls_for_omitted_nested_fields_are_dropped() -> None:
    """OpenAI strict mode sends null for an omitted optional field, nested ones too."""
    result = _call({"count": 1, "filter": {"field": "f", "limit": None}})
    assert result.value == "ok", result.content
    assert ran == [{"count": 1, "filter": {"field": "f"}}]
