"""``toolpacks new-tool``: a file-based tool (TOOL.md + handler.py) that loads and runs as is."""

from __future__ import annotations

from pathlib import Path

from toolpacks.core._traits import NAME_PATTERN
from toolpacks.exceptions import ToolDefinitionError

__all__ = ["scaffold_tool"]

TOOL_MD = """\
---
# name: defaults to the directory name ({name})
description: Greet someone by name. Use it when the user asks to be greeted.
tags: [example]
parameters:
  who:
    type: string
    description: Who to greet.
    required: true
  punctuation:
    type: string
    description: How the greeting ends.
    enum: [".", "!"]
    default: "."
permissions:
  require_approval: false
  # allowed_agents: [researcher]
read_only: true
---
Instructions for the model go here, below the front matter: when to use `{name}`,
what its result looks like, and what to do next.
"""

HANDLER = '''\
"""The handler of the `{name}` tool; TOOL.md declares its parameters."""

from __future__ import annotations

from typing import Any

from toolpacks import ToolContext


def handle(arguments: dict[str, Any], context: ToolContext) -> str:
    """Run the tool: ``arguments`` holds every parameter, defaults filled in.

    It may also be ``async def``; a sync handle runs in a worker thread.
    """
    return f"Hello, {{arguments['who']}}{{arguments['punctuation']}}"
'''


def scaffold_tool(name: str, directory: Path) -> Path:
    """Write a working file tool ``directory/name/`` (TOOL.md and handler.py).

    Args:
        name: The tool's name, also its directory's name.
        directory: The tools directory (created if missing).

    Returns:
        The new tool directory.

    Raises:
        ToolDefinitionError: ``name`` is not a valid tool name (a ``ValueError``).
        FileExistsError: The tool directory already exists (nothing is overwritten).
    """
    if not NAME_PATTERN.match(name):
        raise ToolDefinitionError(
            f"{name!r} is not a valid tool name; use 1-64 letters, digits, '_' or '-' "
            "(not starting with '-')"
        )
    target = Path(directory) / name
    if target.exists() or target.is_symlink():
        raise FileExistsError(f"{target} already exists; choose another name or directory")
    target.mkdir(parents=True)
    (target / "TOOL.md").write_text(TOOL_MD.format(name=name), encoding="utf-8")
    (target / "handler.py").write_text(HANDLER.format(name=name), encoding="utf-8")
    return target
