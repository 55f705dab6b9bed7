"""``@tool(input_schema=...)`` on an untyped function keeps its docstring (issue 35)."""

from __future__ import annotations

from typing import Any

from toolpacks import tool

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def test_an_untyped_function_with_an_explicit_schema_keeps_its_docstring() -> None:
    """The description is the docstring's summary, not the tool's name."""

    @tool(input_schema=SCHEMA)
    def read(path):  # type: ignore[no-untyped-def]
        """Read a text file and return its contents.

        Args:
            path: The file to read.
        """
        return path

    assert read.description == "Read a text file and return its contents."
    assert read.input_schema == SCHEMA


def test_a_typed_function_with_an_explicit_schema_keeps_its_docstring() -> None:
    """The typed road already did; it stays so."""

    @tool(input_schema=SCHEMA)
    def read(**arguments: Any) -> str:
        """Read a text file."""
        return str(arguments)

    assert read.description == "Read a text file."


def test_an_explicit_description_still_wins() -> None:
    """``description=`` is used verbatim over the docstring."""

    @tool(input_schema=SCHEMA, description="Given.")
    def read(path):  # type: ignore[no-untyped-def]
        """From the docstring."""
        return path

    assert read.description == "Given."
