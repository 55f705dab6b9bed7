"""What each command needs from toolpacks' optional extras, and the message when it is missing.

A command that needs an optional dependency checks for it before it starts, and stops with
one message naming what is missing and the extra that installs it, instead of failing later
with a bare ``ModuleNotFoundError`` (``serve --http`` with ``[mcp]`` installed but not
``[http]`` used to die on ``prometheus_client``). The checks only look modules up
(``importlib.util.find_spec``): nothing is imported.
"""

from __future__ import annotations

import importlib.util
import shutil

from toolpacks.cli._errors import CliError

__all__ = ["EXTRAS", "missing_modules", "require_extra"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "mcp": ("mcp",),
    "http": ("mcp", "uvicorn", "starlette", "prometheus_client"),
    "isolated": ("uv",),
}
"""The modules each extra of ``pyproject.toml`` provides that commands need."""

_PROGRAMS = {"uv": "uv"}
"""Modules that a program on ``PATH`` can stand in for (uv's binary)."""


def missing_modules(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here (nor run from ``PATH``)."""
    missing = []
    for module in EXTRAS[extra]:
        try:
            if importlib.util.find_spec(module) is not None:
                continue
        except (ImportError, ValueError):  # a broken or blocked installation: not importable
            pass
        program = _PROGRAMS.get(module)
        if program is not None and shutil.which(program) is not None:
            continue
        missing.append(module)
    return missing


def require_extra(extra: str, what: str) -> None:
    """Stop ``what`` (``serving over HTTP``) when a module of ``extra`` is missing.

    Raises:
        CliError: Naming the missing modules and ``pip install 'toolpacks[EXTRA]'``.
    """
    missing = missing_modules(extra)
    if missing:
        raise CliError(
            f"{what} needs {', '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed",
            f"pip install 'toolpacks[{extra}]'",
        )
