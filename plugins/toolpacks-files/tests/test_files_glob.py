"""Glob patterns: the old semantics, matched in linear time whatever the model sends.

Globs used to become regular expressions, and ``re`` backtracks: ``*a*a*a*a*a*a*a*b``
against a long name of ``a``s took minutes while holding the GIL, freezing every other call.
"""

from __future__ import annotations

import re
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolpacks_files import _glob as glob_module
from toolpacks_files._glob import MAX_PATTERN_CHARS, GlobError, compile_glob

HOSTILE = [
    "*a" * 15 + "*b",
    "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b",
    "**/" + "*a" * 14 + "*b",
    "*?" * 20 + "b",
    "**/*a**/*a**/*a**/*a**/*a**/*a**/*b",
    "[a]*" * 12 + "b",
    "***/***/***/***/***/***/***/***/***/*b",
    "*" * 200 + "b",
]
"""Patterns that made the regular expressions backtrack (each is at most 60 characters
but the last)."""
LONG_NAME = "a" * 250
LONG_PATH = "/".join(["a" * 250] * 16)


def reference_regex(pattern: str) -> re.Pattern[str]:
    """The regular expression the pack used to build (kept here to compare semantics)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i) and i + 2 == n:
            out.append(".*")
            i += 2
            continue
        char = pattern[i]
        i += 1
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := pattern.find("]", i + 1)) != -1:
            body = pattern[i:end]
            negate = body.startswith("!")
            body = (body[1:] if negate else body).replace("\\", "\\\\")
            if body.startswith("^"):
                body = "\\" + body
            out.append("[" + ("^" if negate else "") + body + "]")
            i = end + 1
        else:
            out.append(re.escape(char))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # '[[' and '--' in classes
        return re.compile("".join(out), re.DOTALL)


# -- semantics ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.md", "a.md", True),
        ("*.md", "docs/a.md", False),
        ("**/*.md", "a.md", True),
        ("**/*.md", "x/y/a.md", True),
        ("docs/**", "docs/x/y.txt", True),
        ("docs/**", "src/x.txt", False),
        ("?.txt", "a.txt", True),
        ("?.txt", "ab.txt", False),
        ("[ab].txt", "b.txt", True),
        ("[!ab].txt", "b.txt", False),
        ("[a-c].txt", "b.txt", True),
        ("[]].txt", "].txt", True),
        ("[^a].txt", "^.txt", True),
        ("a+b(1).txt", "a+b(1).txt", True),
        ("a**b", "axxb", True),
        ("a**b", "a/b", False),
        ("src/**/test_*.py", "src/test_a.py", True),
        ("src/**/test_*.py", "src/x/y/test_a.py", True),
        ("src/**/test_*.py", "src/x/y/a_test.py", False),
        ("**", "a/b/c", True),
        ("*", "a/b", False),
    ],
)
def test_glob_semantics(pattern: str, path: str, matches: bool) -> None:
    """Glob patterns match whole relative paths; '*' stays within one component."""
    assert compile_glob(pattern).match(path) is matches


@pytest.mark.parametrize("pattern", ["[!]", "[z-a]", "x[b-a]y"])
def test_invalid_classes_are_refused(pattern: str) -> None:
    """A class with no character or a backwards range is an error, as before."""
    with pytest.raises(GlobError):
        compile_glob(pattern)


PATTERN_CHARS = st.sampled_from(
    ["a", "b", ".", "/", "*", "**", "**/", "?", "[", "]", "!", "-", "^"]
)
PATH_CHARS = st.sampled_from(["a", "b", ".", "/", "-", "]", "^", "!", "["])


@settings(max_examples=800, deadline=None, derandomize=True, database=None)
@given(
    pattern=st.lists(PATTERN_CHARS, min_size=1, max_size=12).map("".join),
    path=st.lists(PATH_CHARS, max_size=14).map("".join),
)
def test_same_answers_as_the_old_regular_expressions(pattern: str, path: str) -> None:
    """The new matcher agrees with the old regular expressions on random patterns and paths.

    It never leaves out a directory holding a match, either.

    The one difference: an empty negated class '[!]' was an error unless a later class
    happened to close the broken regular expression; it is now always an error.
    """
    try:
        old = reference_regex(pattern)
    except re.error:
        with pytest.raises(GlobError):
            compile_glob(pattern)
        return
    try:
        new = compile_glob(pattern)
    except GlobError:
        assert "[!]" in pattern
        return
    matches = bool(old.fullmatch(path))
    assert new.match(path) is matches, (pattern, path)
    if matches:  # a walk must enter every directory on the way to a match
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            assert new.may_match_below("/".join(parts[:depth])), (pattern, path, depth)


# -- bounded work ------------------------------------------------------------------------------


@pytest.mark.timeout(20)
@pytest.mark.parametrize("pattern", HOSTILE)
def test_hostile_patterns_cost_one_step_per_character(
    pattern: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each character of the path costs at most one automaton step, whatever the pattern."""
    steps = 0
    real_step = glob_module.Glob._step

    def counting(self: glob_module.Glob, state: int, char: str) -> int:
        nonlocal steps
        steps += 1
        return real_step(self, state, char)

    monkeypatch.setattr(glob_module.Glob, "_step", counting)
    matcher = compile_glob(pattern)
    for path in (LONG_NAME, LONG_PATH, "b" + LONG_NAME, LONG_NAME + "b"):
        steps = 0
        matcher.match(path)
        assert steps <= len(path)


def test_overlong_patterns_are_refused() -> None:
    """A pattern longer than the limit is an error naming the limit."""
    compile_glob("a" * MAX_PATTERN_CHARS)
    with pytest.raises(GlobError, match=str(MAX_PATTERN_CHARS)):
        compile_glob("a" * (MAX_PATTERN_CHARS + 1))
