"""Tool and parameter descriptions from docstrings, annotations and ``Field``."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import Field

from toolpacks import tool
from toolpacks.core.define._docstrings import parse_docstring
from toolpacks.core.define._traits import MissingDocstringWarning

GOOGLE = """Search the web.

Use it for current events.

Args:
    query: What to search
        for, over two lines.
    limit (int): How many results.

Returns:
    A list of results.

Raises:
    ValueError: If the query is empty.

Examples:
    >>> search("x")
"""

NUMPY = """Search the web.

Parameters
----------
query : str
    What to search for.
limit : int
    How many results.

Returns
-------
list
    A list of results.

Raises
------
ValueError
    If the query is empty.
"""

REST = """Search the web.

:param query: What to search for.
:type query: str
:param limit: How many results.
:returns: A list of results.
:raises ValueError: If the query is empty.
"""

EPYDOC = """Search the web.

@param query: What to search for.
@type query: str
@param limit: How many results.
@return: A list of results.
@raise ValueError: If the query is empty.
"""


def _search_with(doc: str) -> Any:
    def search(query: str, limit: int = 5) -> list[str]:
        return []

    search.__doc__ = doc
    return tool(search)


def test_google_docstring_drops_args_and_keeps_other_sections() -> None:
    """Google style: the Args section moves into the schema; Returns/Raises/Examples stay."""
    t = _search_with(GOOGLE)
    assert t.description == (
        "Search the web.\n\nUse it for current events.\n\n"
        "Returns:\n    A list of results.\n\n"
        "Raises:\n    ValueError: If the query is empty.\n\n"
        'Examples:\n    >>> search("x")'
    )
    props = t.input_schema["properties"]
    assert props["query"]["description"] == "What to search for, over two lines."
    assert props["limit"]["description"] == "How many results."


def test_numpy_docstring_drops_parameters_and_keeps_other_sections() -> None:
    """NumPy style: the Parameters section is removed, Returns and Raises kept."""
    t = _search_with(NUMPY)
    assert t.description == (
        "Search the web.\n\nReturns\n-------\nlist\n    A list of results.\n\n"
        "Raises\n------\nValueError\n    If the query is empty."
    )
    assert t.input_schema["properties"]["query"]["description"] == "What to search for."


def test_rest_docstring_drops_param_fields() -> None:
    """The reST ``:param:``/``:type:`` fields are removed, ``:returns:``/``:raises:`` kept."""
    t = _search_with(REST)
    assert t.description == (
        "Search the web.\n\n:returns: A list of results.\n"
        ":raises ValueError: If the query is empty."
    )
    assert t.input_schema["properties"]["limit"]["description"] == "How many results."


def test_epydoc_docstring_drops_param_fields() -> None:
    """Epydoc style: ``@param``/``@type`` fields are removed, ``@return``/``@raise`` kept."""
    t = _search_with(EPYDOC)
    assert t.description == (
        "Search the web.\n\n@return: A list of results.\n@raise ValueError: If the query is empty."
    )
    assert t.input_schema["properties"]["query"]["description"] == "What to search for."


@pytest.mark.parametrize(
    "header", ["Args", "Arguments", "Parameters", "Param", "Params", "Keyword Args"]
)
def test_every_parameter_section_header_is_removed(header: str) -> None:
    """Each parameter-section header is dropped from the description and parsed."""
    parsed = parse_docstring(f"Do it.\n\n{header}:\n    x: The x.\n\nReturns:\n    Done.\n")
    assert parsed.description == "Do it.\n\nReturns:\n    Done."
    assert parsed.params == {"x": "The x."}


def test_notes_section_is_kept() -> None:
    """A Notes section stays in the description next to a removed Args section."""
    parsed = parse_docstring("Do it.\n\nArgs:\n    x: The x.\n\nNotes:\n    Slow.\n")
    assert parsed.description == "Do it.\n\nNotes:\n    Slow."


def test_one_line_docstring_is_the_description() -> None:
    """A one-line docstring is used as it is."""

    @tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    assert ping.description == "Answer pong."


def test_indented_docstring_is_cleaned() -> None:
    """Docstring indentation is removed from the description."""

    @tool
    def ping() -> str:
        """Answer pong.

        Always.
        """
        return "pong"

    assert ping.description == "Answer pong.\n\nAlways."


def test_parameter_description_precedence() -> None:
    """Field(description) > Annotated str > docstring > "Parameter {name}"."""

    @tool
    def f(
        a: Annotated[int, "from annotated", Field(description="from field")],
        b: Annotated[int, "from annotated"],
        c: int,
        d: int,
    ) -> int:
        """Do it.

        Args:
            a: from docstring a
            b: from docstring b
            c: from docstring c
        """
        return 0

    props = f.input_schema["properties"]
    assert [props[name]["description"] for name in "abcd"] == [
        "from field",
        "from annotated",
        "from docstring c",
        "Parameter d",
    ]
    assert f.description == "Do it."


def test_every_property_has_a_non_empty_description() -> None:
    """Without any documentation each property still gets a description."""

    @tool
    def f(x: int, y: str = "") -> str:
        """F."""
        return ""

    assert [p["description"] for p in f.input_schema["properties"].values()] == [
        "Parameter x",
        "Parameter y",
    ]


def test_missing_docstring_warns_and_uses_the_name() -> None:
    """``def quiet_tool(arg: str) -> str`` without a docstring warns; description is the name."""

    def quiet_tool(arg: str) -> str:
        return arg

    with pytest.warns(MissingDocstringWarning, match="falls back to its name"):
        t = tool(quiet_tool)
    assert t.description == "quiet_tool"
    assert t("x") == "x"


def test_explicit_description_silences_the_missing_docstring_warning(
    recwarn: pytest.WarningsRecorder,
) -> None:
    """A tool given ``description=`` does not need a docstring."""

    def quiet_tool(arg: str) -> str:
        return arg

    t = tool(description="Echo.")(quiet_tool)
    assert t.description == "Echo."
    assert not [w for w in recwarn if issubclass(w.category, MissingDocstringWarning)]


def test_docstring_of_only_parameters_leaves_an_empty_summary() -> None:
    """A docstring that is only an Args section gives the name as the description."""

    def lookup(key: str) -> str:
        return key

    lookup.__doc__ = "\n    Args:\n        key: The key.\n    "
    t = tool(lookup)
    assert t.description == "lookup"
    assert t.input_schema["properties"]["key"]["description"] == "The key."
