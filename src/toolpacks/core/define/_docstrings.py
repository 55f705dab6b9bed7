"""Descriptions from docstrings: the tool's text and each parameter's description.

The tool's text is the docstring without its parameter section; each parameter's own
description moves into the input schema.

Google, NumPy, reST and Epydoc styles are recognised by docstring-parser. The tool description
keeps every section a model can use (Returns, Raises, Examples, Notes) and drops only the
parameter section, whose content moves into the input schema.

A docstring with no line that could start a section (a line ending in ``:``, starting with
``:`` or ``@``, or made of dashes) has no parameter section in any style: it is the description
as it is, and docstring-parser (about 5 ms to import, and slow to auto-detect) is not used.
"""

from __future__ import annotations

import functools
import inspect
import re
from dataclasses import dataclass, field

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: this module is imported with ``@tool``
if TYPE_CHECKING:
    from collections.abc import Callable

    from docstring_parser import google

__all__ = ["ParsedDocstring", "parse_docstring"]

_MAYBE_SECTIONS = re.compile(r"^\s*[:@]|:[ \t]*$|^\s*-+\s*$", re.MULTILINE)
"""Where any style's section could start: a Google header (``Args:``), a reST or Epydoc field
(``:param x:``, ``@param x:``), a NumPy underline (``-----``)."""

_GOOGLE_PARAM_HEADER = re.compile(
    r"^(\s*)(Args|Arguments|Parameters|Params|Param|Keyword Args|Keyword Arguments"
    r"|Other Parameters)\s*:\s*$"
)
_NUMPY_PARAM_HEADERS = {"parameters", "other parameters", "keyword arguments", "params"}
_REST_FIELD = re.compile(r"^(\s*)[:@](param|type|arg|argument|key|keyword|kwtype)\b")
_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")


@dataclass(frozen=True, slots=True)
class ParsedDocstring:
    """What a docstring says about a tool."""

    description: str
    """The docstring without its parameter section, cleaned of indentation."""
    params: dict[str, str] = field(default_factory=dict)
    """Parameter name to its description."""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _strip_google(lines: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = _GOOGLE_PARAM_HEADER.match(lines[i])
        if not match:
            out.append(lines[i])
            i += 1
            continue
        base = len(match.group(1))
        i += 1
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > base):
            i += 1
    return out


def _strip_numpy(lines: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        is_header = i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1])
        if not (is_header and lines[i].strip().lower() in _NUMPY_PARAM_HEADERS):
            out.append(lines[i])
            i += 1
            continue
        i += 2
        while i < len(lines) and not (i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1])):
            i += 1
    return out


def _strip_fields(lines: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = _REST_FIELD.match(lines[i])
        if not match:
            out.append(lines[i])
            i += 1
            continue
        base = len(match.group(1))
        i += 1
        while i < len(lines) and lines[i].strip() and _indent(lines[i]) > base:
            i += 1
    return out


@functools.cache
def _google_parser() -> google.GoogleParser:
    """A Google-style parser that knows every parameter-section header."""
    from docstring_parser import google

    multiple = google.SectionType.MULTIPLE
    extra = [
        google.Section(title, "param", multiple)
        for title in ("Param", "Keyword Args", "Keyword Arguments", "Other Parameters")
    ]
    return google.GoogleParser([*google.DEFAULT_SECTIONS, *extra])


@functools.cache
def _strippers() -> dict[object, Callable[[list[str]], list[str]]]:
    """The function that drops a style's parameter section, by docstring-parser style."""
    from docstring_parser import DocstringStyle

    return {
        DocstringStyle.GOOGLE: _strip_google,
        DocstringStyle.NUMPYDOC: _strip_numpy,
        DocstringStyle.REST: _strip_fields,
        DocstringStyle.EPYDOC: _strip_fields,
    }


def parse_docstring(doc: str | None, *, cleaned: bool = False) -> ParsedDocstring:
    """Split a docstring into the tool description and per-parameter descriptions.

    Args:
        doc: The docstring (``None`` or empty gives an empty description).
        cleaned: Whether ``doc`` is already cleaned (``inspect.getdoc``); cleaning it again
            would flatten a parameter section that starts on the first line.

    Returns:
        The parsed docstring.
    """
    if not doc or not doc.strip():
        return ParsedDocstring("")
    text = doc.strip() if cleaned else inspect.cleandoc(doc)
    if _MAYBE_SECTIONS.search(text) is None:
        return ParsedDocstring(text)
    import docstring_parser

    try:
        if any(_GOOGLE_PARAM_HEADER.match(line) for line in text.splitlines()):
            # docstring-parser's Google style does not know every header the tool description
            # drops (``Param:``, ``Keyword Args:``); its auto-detection then picks another style.
            # It also refuses a section on the first line, hence the placeholder summary (only
            # the parameters are taken from the parse).
            parsed = _google_parser().parse("_\n\n" + text)
        else:
            parsed = docstring_parser.parse(text)
    except Exception:  # ParseError, and the IndexError some malformed fields raise (": :")
        return ParsedDocstring(text)
    params = {
        p.arg_name.split()[0].lstrip("*"): " ".join((p.description or "").split())
        for p in parsed.params
        if p.description
    }
    if not params and not any(m.args and m.args[0] == "param" for m in parsed.meta):
        return ParsedDocstring(text, params)
    stripper = _strippers().get(parsed.style) if parsed.style else None
    lines = text.splitlines()
    if stripper is not None:
        lines = stripper(lines)
    description = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return ParsedDocstring(description, params)
