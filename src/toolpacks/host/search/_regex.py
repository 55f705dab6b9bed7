"""Search patterns from a model (``Toolset.search(mode="regex")``), matched in linear time.

A model chooses the pattern, so the engine must not backtrack: patterns run on RE2 (the
``google-re2`` package, imported on the first regex search), whose matching time is linear in
the text whatever the pattern. What RE2 cannot express (lookarounds, atomic groups,
possessive repeats, backreferences) is refused with a message saying so.
"""

from __future__ import annotations

from typing import Any

from toolpacks.core._linear_re import compile_linear

__all__ = ["MAX_PATTERN_LENGTH", "compile_pattern"]

MAX_PATTERN_LENGTH = 200
"""The longest pattern accepted (the length the providers' regex tools take)."""


def compile_pattern(pattern: str) -> Any:
    r"""Compile a model's search pattern for RE2 (case ignored); it has ``.search(text)``.

    Patterns are capped at ``MAX_PATTERN_LENGTH`` characters. Any pattern RE2 accepts runs,
    nested repeats (``(a+)+``) included: RE2 matches in time linear in the text.

    Raises:
        ValueError: The pattern is too long, does not compile, or uses what a linear-time
            engine cannot do (the message names it, for the model to send another).
    """
    if not isinstance(pattern, str):
        raise ValueError(f"a search pattern must be a string, got {type(pattern).__name__}")
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise ValueError(
            f"search pattern is {len(pattern)} characters long; at most "
            f"{MAX_PATTERN_LENGTH} are accepted"
        )
    try:
        return compile_linear(pattern, ignore_case=True)
    except ValueError as exc:
        raise ValueError(f"search pattern {pattern!r} refused: {exc}") from None
