"""How the command line reports failures: ``toolpacks: error: <message>``, then hints.

Stdlib only (``list`` and ``--version`` import neither pydantic nor any pack).
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Iterable
from typing import NoReturn

__all__ = [
    "CliError",
    "CliParser",
    "counted",
    "did_you_mean",
    "error_lines",
    "key_hints",
    "report",
]

DEBUG_HINT = "(run with --debug for details)"


class CliError(Exception):
    """A failure the command line found itself; printed as one line, exit status 2.

    Args:
        message: What is wrong (one line).
        *hints: What to do about it, one line each (printed below the message).
    """

    def __init__(self, message: str, *hints: str) -> None:
        super().__init__(message)
        self.hints = tuple(hints)
        """Lines printed below the message."""


class CliParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors read like every other error."""

    def error(self, message: str) -> NoReturn:
        """Print ``toolpacks: error: <message>`` and a pointer to ``--help``; exit 2."""
        self.exit(2, f"toolpacks: error: {message}\n  see `{self.prog} --help`\n")


def counted(number: int, noun: str) -> str:
    """``1 tool``, ``2 tools``: a count whose noun agrees with it (regular plurals only)."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """``did you mean 'clock'?`` for the close matches of ``word``, or None."""
    matches = difflib.get_close_matches(word, sorted(set(candidates) - {word}), n=3, cutoff=0.6)
    if not matches:
        return None
    return f"did you mean {' or '.join(repr(m) for m in matches)}?"


_UNKNOWN_KEY = re.compile(r"^\s*(?P<key>\S+): unknown key; allowed keys: (?P<allowed>.+)$", re.M)


def key_hints(message: str) -> list[str]:
    """Did-you-mean lines for the unknown keys a ``ConfigError`` message lists."""
    hints: list[str] = []
    for match in _UNKNOWN_KEY.finditer(message):
        key = match["key"]
        last = re.sub(r"\[\d+\]$", "", key.rsplit(".", 1)[-1])
        allowed = [a.strip() for a in match["allowed"].split(",")]
        suggestion = did_you_mean(last, allowed)
        if suggestion is not None and suggestion not in message:
            hints.append(f"{key}: {suggestion}")
    return hints


def error_lines(exc: BaseException) -> list[str]:
    """The lines that report ``exc``: ``toolpacks: error: ...`` and hints, indented.

    The message is one line (a multi-line message is joined with ``; ``). Errors the CLI
    found itself (``CliError``) are complete as they are; a toolpacks error gets a pointer
    to ``--debug``, and an unexpected exception its type as well. Hints come from
    ``CliError.hints``, exception notes and, for unknown configuration keys, the close
    matches among the allowed keys.
    """
    from toolpacks.exceptions import ConfigError, ToolpacksError

    text = str(exc).strip()
    message = "; ".join(line.strip() for line in text.splitlines() if line.strip())
    hints: list[str] = list(getattr(exc, "hints", ()))
    if isinstance(exc, CliError):
        first = message
    elif isinstance(exc, ToolpacksError) or (isinstance(exc, OSError) and message):
        first = f"{message} {DEBUG_HINT}"
    else:
        kind = type(exc).__qualname__
        first = f"unexpected {kind}{': ' + message if message else ''} {DEBUG_HINT}"
    if isinstance(exc, ConfigError):
        hints.extend(key_hints(text))
    hints.extend(str(note) for note in getattr(exc, "__notes__", ()))
    lines = [f"toolpacks: error: {first}"]
    for hint in hints:
        for line in (h.strip() for h in hint.splitlines()):
            # A suggestion the message already makes ("did you mean ...?") is not repeated.
            if line and line not in message and f"  {line}" not in lines:
                lines.append(f"  {line}")
    return lines


def report(exc: BaseException) -> None:
    """Print ``error_lines(exc)`` on stderr."""
    print("\n".join(error_lines(exc)), file=sys.stderr)
