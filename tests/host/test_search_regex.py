"""Regex search runs on RE2: the shapes that made Python's ``re`` backtrack now just answer.

Each pattern of issue 36's table is searched over descriptions holding runs of 26 to 30
``a``, ``-`` or ``.``; the outcome (which tools match, or a refusal naming what RE2 cannot
express) is asserted, and pytest-timeout bounds each test.
"""

from __future__ import annotations

import pytest

from toolpacks import Tool, Toolset, tool


def _tool(name: str, description: str) -> Tool:
    def handler() -> str:
        return name

    handler.__name__ = name
    handler.__doc__ = description
    return tool(handler)


RUNS = {
    "q1": "x " + "a" * 28 + "!",  # a run that ends badly: (a+)+$ backtracks on it in re
    "q2": "a" * 30,
    "q3": "a" * 26 + "b",
    "q4": "-" * 27 + "y",
    "q5": "." * 29 + "#",
}


@pytest.fixture
def toolset() -> Toolset:
    return Toolset([_tool(name, text) for name, text in RUNS.items()])


EVERY = sorted(RUNS)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("(a|a)*b", ["q3"]),
        ("(?:z|(a+)+)$", ["q2"]),
        ("(a{1,30})+$", ["q2"]),
        ("(.)*(.)*(.)*#", ["q5"]),
        ("[ x]*[ y]*", EVERY),  # matches the empty string: every tool
        (r"\s*\s*", EVERY),
        ("((a*)*)*b", ["q3"]),
        (r"(\w*)*z", []),
        ("((-+)+)+x", []),
        ("(-+)+y$", ["q4"]),
        ("(\\.+)+!", []),
        ("a*b*c*d*e*", EVERY),  # five repeats: past the old rule's four
        ("a+.*a+.*a+.*a+.*a+.*!", ["q1"]),
    ],
)
def test_backtracking_shapes_answer(toolset: Toolset, pattern: str, expected: list[str]) -> None:
    hits = toolset.search(pattern, mode="regex", limit=20)
    assert sorted(h.exposed for h in hits) == expected


@pytest.mark.parametrize(
    ("pattern", "what"),
    [
        ("(?=(a+)+$)", "lookaheads"),
        ("(?!(a+)+$)a", "lookaheads"),
        ("(?>(a+)+$)", "atomic groups"),
        ("(?<=(a+))!", "lookbehinds"),
        (r"(a+)+\1$", "backreferences"),
        ("(?P<r>a+)(?P=r)!", "backreferences"),
        ("(a+)++$", "possessive repeats"),
    ],
)
def test_what_re2_cannot_express_is_refused_by_name(
    toolset: Toolset, pattern: str, what: str
) -> None:
    with pytest.raises(ValueError, match=rf"refused: {what} are not supported.*linear-time"):
        toolset.search(pattern, mode="regex")


def test_an_anchored_nested_repeat_answers(toolset: Toolset) -> None:
    """``^(a+)+$`` over the runs: re took seconds per field here, RE2 answers at once."""
    hits = toolset.search("^(a+)+$", mode="regex")
    assert [h.exposed for h in hits] == ["q2"]
