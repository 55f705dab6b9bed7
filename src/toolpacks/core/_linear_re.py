"""Regular expressions matched in linear time (RE2), for patterns toolpacks does not write.

A model's search pattern and a schema-only tool's JSON Schema ``pattern`` come from others:
Python's ``re`` backtracks, and holds the GIL while it does, so one argument could stall a
worker. RE2 (the ``google-re2`` package, imported on first use so ``import toolpacks`` stays
light) matches in time linear in the text whatever the pattern. What RE2 cannot express
(lookarounds, atomic groups, possessive repeats, backreferences) is refused, named.
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["compile_linear"]

_MAX_PROGRAM_BYTES = 8 << 20
"""RE2's memory budget for one compiled pattern; a pattern needing more is refused."""

_UNSUPPORTED = (
    ("invalid perl operator: (?=", "lookaheads"),
    ("invalid perl operator: (?!", "lookaheads"),
    ("invalid perl operator: (?<", "lookbehinds"),
    ("invalid perl operator: (?>", "atomic groups"),
    ("bad repetition operator: ++", "possessive repeats"),
    ("bad repetition operator: *+", "possessive repeats"),
    ("bad repetition operator: ?+", "possessive repeats"),
    ("bad repetition operator: }+", "possessive repeats"),
)


@functools.lru_cache(maxsize=256)
def compile_linear(pattern: str, *, ignore_case: bool = False) -> Any:
    """Compile ``pattern`` with RE2, matched in linear time; cached per pattern.

    Used by tool search and by JSON Schema ``pattern`` checks of schema-only tools.

    Raises:
        ValueError: RE2 cannot compile the pattern: the message names what is unsupported
            (lookarounds, atomic groups, possessive repeats, backreferences) or RE2's reason.
    """
    import re2  # type: ignore[import-untyped,unused-ignore]  # google-re2, imported late

    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern to stderr
    options.case_sensitive = not ignore_case
    options.max_mem = _MAX_PROGRAM_BYTES
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        raise ValueError(_reason(exc, pattern)) from None


def _reason(exc: Exception, pattern: str) -> str:
    text = exc.args[0] if exc.args else str(exc)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    text = str(text)
    if "(?P=" in pattern or re.match(r"invalid escape sequence: \\\d", text):
        what = "backreferences"
    else:
        what = next((name for start, name in _UNSUPPORTED if text.startswith(start)), "")
    if what:
        return (
            f"{what} are not supported: patterns run on a linear-time engine (RE2); "
            f"rewrite it without them ({text})"
        )
    return f"invalid pattern for the linear-time engine (RE2): {text}"
