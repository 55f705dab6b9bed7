"""Search patterns from a model (``Toolset.search(mode="regex")``), refused when risky.

Python's ``re`` has no timeout, so a pattern that backtracks badly could hang a search: the
checks here read the parsed pattern and refuse what could, before anything is matched.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["MAX_PATTERN_LENGTH", "compile_pattern"]

MAX_PATTERN_LENGTH = 200
"""The longest pattern accepted (the length the providers' regex tools take)."""


def compile_pattern(pattern: str) -> re.Pattern[str]:
    r"""Compile a model's search pattern, refusing what could take long to match.

    Patterns are capped at ``MAX_PATTERN_LENGTH`` characters. Refused: backreferences,
    repeats nested in repeats (``(a+)+``), more than one unbounded repeat of something that
    spans words (``.*``, ``[^x]+``, ``\S*``, a class with a space), more than four repeats.
    What is left matches a field in at most quadratic time, and the index matches short
    fields (descriptions by their first 300 characters). Case is ignored.

    Raises:
        ValueError: The pattern is too long, does not compile, or is refused (the message
            says why, for the model to send a simpler one).
    """
    if not isinstance(pattern, str):
        raise ValueError(f"a search pattern must be a string, got {type(pattern).__name__}")
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise ValueError(
            f"search pattern is {len(pattern)} characters long; at most "
            f"{MAX_PATTERN_LENGTH} are accepted"
        )
    try:
        compiled = re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"invalid search pattern {pattern!r}: {exc}") from None
    reason = _refusal(pattern)
    if reason:
        raise ValueError(f"search pattern {pattern!r} refused: {reason}; use a simpler one")
    return compiled


_WIDE = {"ANY", "NOT_LITERAL"}
_WIDE_CATEGORIES = {"CATEGORY_NOT_SPACE", "CATEGORY_NOT_WORD", "CATEGORY_NOT_DIGIT"}


def _refusal(pattern: str) -> str:
    r"""Why ``pattern`` could backtrack badly, or ``""``: it is a plain parse-tree check.

    Refused: backreferences; a repeat inside a repeat; more than one unbounded repeat of
    something that matches spaces too (``.*``, ``[^x]+``, ``\S*``: two of them make a
    search cubic in a field's length); more than four repeats in all.
    """
    from re import _parser  # type: ignore[attr-defined]  # the parser re.compile uses

    counts = {"wide": 0, "all": 0}
    try:
        _walk(_parser.parse(pattern, re.IGNORECASE), counts, nested=False)
    except _Refused as refused:
        return str(refused)
    if counts["wide"] > 1:
        return "more than one repeat of '.' or a negated class (such as '.*' twice)"
    if counts["all"] > 4:
        return "more than four repeats"
    return ""


class _Refused(Exception):
    pass


def _walk(items: Any, counts: dict[str, int], *, nested: bool) -> None:
    for op, av in items:
        name = str(op)
        if name in ("GROUPREF", "GROUPREF_EXISTS"):
            raise _Refused("backreferences are not accepted")
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, body = av
            if high != low and high > 1:
                if nested:
                    raise _Refused("a repeat inside a repeat (such as '(a+)+')")
                counts["all"] += 1
                counts["wide"] += _is_wide(body)
                _walk(body, counts, nested=True)
            else:
                _walk(body, counts, nested=nested)
        elif name == "SUBPATTERN":
            _walk(av[-1], counts, nested=nested)
        elif name == "ATOMIC_GROUP":
            _walk(av, counts, nested=nested)
        elif name == "BRANCH":
            for branch in av[1]:
                _walk(branch, counts, nested=nested)
        elif name in ("ASSERT", "ASSERT_NOT"):
            _walk(av[1], counts, nested=nested)


def _is_wide(body: Any) -> bool:
    """Whether a repeated item can match spaces, and so run over a whole description."""
    for op, av in body:
        name = str(op)
        if name in _WIDE:
            return True
        if name == "IN" and any(_wide_member(str(o), a) for o, a in av):
            return True
        if name == "SUBPATTERN" and _is_wide(av[-1]):
            return True
        if name == "BRANCH" and any(_is_wide(b) for b in av[1]):
            return True
    return False


def _wide_member(op: str, arg: Any) -> bool:
    r"""A class member that makes the class span words: a negation, ``\S``, a space."""
    if op == "NEGATE" or (op == "LITERAL" and arg == 32):
        return True
    return op == "CATEGORY" and str(arg) in (*_WIDE_CATEGORIES, "CATEGORY_SPACE")
