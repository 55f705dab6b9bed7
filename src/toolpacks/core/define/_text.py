"""Checks on model-facing text: no invisible or bidirectional control characters.

A tool's description is read by the model as instructions. Characters a person reviewing
the text cannot see (zero-width spaces, bidirectional overrides, tag characters) are a known
way to hide instructions there, so toolpacks refuses them when a tool is defined.
"""

from __future__ import annotations

import unicodedata

__all__ = ["hidden_characters"]

_ALLOWED_CONTROLS = frozenset("\n\r\t")
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cn", "Zl", "Zp"})


def hidden_characters(text: str) -> list[str]:
    """The invisible or bidirectional control characters in ``text``, as ``U+XXXX`` codes.

    Flagged: control characters other than newline, carriage return and tab; format
    characters (zero-width spaces and joiners, bidirectional embeddings, overrides and
    isolates, the soft hyphen, tag characters); private-use and unassigned code points; and
    line and paragraph separators.
    """
    found: list[str] = []
    for char in text:
        if char in _ALLOWED_CONTROLS:
            continue
        if unicodedata.category(char) in _HIDDEN_CATEGORIES:
            code = f"U+{ord(char):04X}"
            if code not in found:
                found.append(code)
    return found
