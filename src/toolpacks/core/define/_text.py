"""Checks on model-facing text: no invisible or bidirectional control characters.

A tool's description is read by the model as instructions. Characters a person reviewing
the text cannot see (zero-width spaces, bidirectional overrides, tag characters) are a known
way to hide instructions there, so toolpacks refuses them when a tool is defined: in its
description, title and instructions, and in every description and title of its input schema
(parameters, nested ones included), wherever the schema came from.
"""

from __future__ import annotations

import unicodedata

__all__ = ["hidden_characters", "hidden_in_schema"]

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


def hidden_in_schema(
    schema: object, path: str = "", depth: int = 0
) -> tuple[str, list[str]] | None:
    """The first ``description`` or ``title`` in a JSON Schema that holds hidden characters.

    Returns:
        ``(where, codes)``: the schema path of the text (``properties.query.description``)
        and its characters as ``U+XXXX`` codes; None when there is none.
    """
    if depth > 64:
        return None
    if isinstance(schema, dict):
        for key, value in schema.items():
            where = f"{path}.{key}" if path else str(key)
            if key in ("description", "title") and isinstance(value, str):
                codes = hidden_characters(value)
                if codes:
                    return where, codes
            elif isinstance(value, dict | list):
                found = hidden_in_schema(value, where, depth + 1)
                if found:
                    return found
    elif isinstance(schema, list):
        for index, item in enumerate(schema):
            found = hidden_in_schema(item, f"{path}.{index}", depth + 1)
            if found:
                return found
    return None
