"""``toolpacks new-tool``: a file-based tool (TOOL.md + handler.py) that loads and runs as is.

A tool named like ``greet`` gets the greeting example; any other name gets a template whose
description is made from the name (``get_weather``: "Get weather.") and whose handler
echoes its one parameter, for the author to replace.
"""

from __future__ import annotations

import re
from pathlib import Path

from toolpacks.core.define._traits import NAME_PATTERN
from toolpacks.exceptions import ToolDefinitionError

__all__ = ["scaffold_tool", "templates"]

GREET_TOOL_MD = """\
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

GREET_HANDLER = '''\
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


TOOL_MD = """\
---
# name: defaults to the directory name ({name})
description: {summary}. Replace this with what `{name}` does and when to use it.
tags: [{tag}]
parameters:
  text:
    type: string
    description: What `{name}` works on (rename and add parameters as the tool needs).
    required: true
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
    """{summary}: ``arguments`` holds every parameter, defaults filled in.

    It may also be ``async def``; a sync handle runs in a worker thread.
    """
    text = arguments["text"]
    return f"{name} received {{text!r}}; write what it should answer here"
'''


def _words(name: str) -> list[str]:
    """``getWeather``, ``get_weather`` and ``get-weather`` alike: ``["get", "weather"]``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [w.lower() for w in re.split(r"[\s_\-.]+", spaced) if w]


def templates(name: str) -> tuple[str, str]:
    """The TOOL.md and handler.py written for a tool called ``name``."""
    words = _words(name) or [name]
    if words[0] in ("greet", "greeting", "hello"):
        return GREET_TOOL_MD.format(name=name), GREET_HANDLER.format(name=name)
    summary = " ".join(words).capitalize()
    fields = {"name": name, "summary": summary, "tag": words[-1]}
    return TOOL_MD.format(**fields), HANDLER.format(**fields)


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
    tool_md, handler = templates(name)
    target.mkdir(parents=True)
    (target / "TOOL.md").write_text(tool_md, encoding="utf-8")
    (target / "handler.py").write_text(handler, encoding="utf-8")
    return target
