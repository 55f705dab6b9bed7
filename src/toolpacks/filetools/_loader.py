"""File-based tools: a tools directory holding one ``<tool>/TOOL.md`` + ``handler.py`` per tool.

``load_tools_dir`` turns a directory into tools and a list of problems: a broken tool is
reported (the file and what is wrong) and skipped, and the other tools still load. Only a
``handler.py`` inside its tool's own directory is ever imported; a tool directory, TOOL.md or
handler.py that is a symbolic link leading elsewhere is refused.

``TOOL.md`` and ``handler.py`` are each read once, and what was read is what is used: when a
trust check reviewed the directory, those bytes must be the reviewed ones
(``_reviewed.read_reviewed``), so a file swapped after the check is refused, not run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolpacks.core._tool import Tool
from toolpacks.core.define._traits import NAME_PATTERN
from toolpacks.exceptions import ToolDefinitionError
from toolpacks.filetools._frontmatter import FrontMatter, FrontMatterError, parse_tool_md
from toolpacks.filetools._handler import (
    AsyncFileHandler,
    FileHandler,
    HandlerError,
    forget_modules,
    load_handler,
)
from toolpacks.filetools._reviewed import UnreviewedCodeError, read_reviewed
from toolpacks.filetools._scaffold import scaffold_tool

__all__ = ["HANDLER", "TOOL_MD", "load_tools_dir", "scaffold_tool"]

logger = logging.getLogger("toolpacks")

TOOL_MD = "TOOL.md"
"""The file that declares a tool: YAML front matter, then usage instructions."""
HANDLER = "handler.py"
"""The file that implements it: ``handle(arguments, context)``."""

_NAME_RULE = "1-64 letters, digits, '_' or '-', not starting with '-'"


def load_tools_dir(path: Path) -> tuple[list[Tool], list[str]]:
    """Load every tool of a tools directory.

    Each sub-directory holding a ``TOOL.md`` is one tool; sub-directories with neither
    ``TOOL.md`` nor ``handler.py`` (and hidden ones) are ignored.

    Args:
        path: The tools directory.

    Returns:
        The tools, sorted by name, and the problems found, one human-readable line each,
        naming the file and what is wrong. A tool with a problem is not loaded.
    """
    path = Path(path)
    try:
        root = path.resolve(strict=True)
    except OSError:
        return [], [f"{path}: the tools directory does not exist"]
    if not root.is_dir():
        return [], [f"{path}: is not a directory; give a directory holding one folder per tool"]
    try:
        entries = sorted(path.iterdir(), key=lambda entry: entry.name)
    except OSError as exc:
        return [], [f"{path}: the tools directory cannot be listed ({exc.strerror or exc})"]
    forget_modules(root)
    problems: list[str] = []
    found: dict[str, tuple[Tool, Path]] = {}
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "__pycache__" or not entry.is_dir():
            continue
        loaded = _load_tool(entry, root, problems)
        if loaded is None:
            continue
        if loaded.name in found:
            first = found[loaded.name][1]
            problems.append(
                f"{entry / TOOL_MD}: the tool name {loaded.name!r} is already used by "
                f"{first / TOOL_MD}; this one was not loaded (rename one of them)"
            )
            continue
        found[loaded.name] = (loaded, entry)
    return [found[name][0] for name in sorted(found)], problems


def _outside(file: Path, directory: Path) -> Path | None:
    """Where ``file`` really is, when that is not inside ``directory``."""
    real = file.resolve()
    return None if real != directory and real.is_relative_to(directory) else real


def _load_tool(entry: Path, root: Path, problems: list[str]) -> Tool | None:
    """One tool directory as a tool, or None (with the reason in ``problems``, if any)."""
    real_dir = entry.resolve()
    if real_dir == root or not real_dir.is_relative_to(root):
        problems.append(
            f"{entry}: is a symbolic link to {real_dir}, outside the tools directory {root}; "
            "refused (copy the tool into the tools directory instead)"
        )
        return None
    tool_md, handler = entry / TOOL_MD, entry / HANDLER
    if not tool_md.is_file():
        if handler.exists() or tool_md.is_symlink() or _has_misnamed_tool_md(entry):
            problems.append(
                f"{entry}: has no {TOOL_MD} (the name is case-sensitive); a tool directory "
                f"needs a {TOOL_MD} with YAML front matter and a {HANDLER}"
            )
        return None
    for file in (tool_md, handler):
        if file.is_symlink() and (real := _outside(file, real_dir)) is not None:
            problems.append(
                f"{file}: is a symbolic link to {real}, outside its tool directory "
                f"{real_dir}; refused (only files inside the tool's own directory are used)"
            )
            return None
    front = _read_front_matter(tool_md, problems)
    if front is None:
        return None
    name = front.name if front.name is not None else entry.name
    if not NAME_PATTERN.match(name):
        if front.name is None:
            problems.append(
                f"{entry}: the directory name {entry.name!r} is not a valid tool name "
                f"({_NAME_RULE}); rename the directory or set `name:` in its {TOOL_MD}"
            )
        else:
            problems.append(f"{tool_md}: name {name!r} is not a valid tool name ({_NAME_RULE})")
        return None
    try:
        source: bytes | None = read_reviewed(handler)
    except UnreviewedCodeError as exc:
        problems.append(str(exc))
        return None
    except OSError:
        source = None  # load_handler tries again and says what is wrong
    try:
        handle, is_async = load_handler(handler, source)
    except HandlerError as exc:
        problems.append(f"{handler}: {exc}")
        return None
    if front.description is None:
        logger.warning(
            "%s: no description, so tool %r is described by its name only; add a "
            "`description:` saying what it does and when to use it",
            tool_md,
            name,
        )
    return _build(front, name, handle, is_async, tool_md, handler, problems)


def _has_misnamed_tool_md(entry: Path) -> bool:
    try:
        return any(child.name.lower() == TOOL_MD.lower() for child in entry.iterdir())
    except OSError:
        return False


def _read_front_matter(tool_md: Path, problems: list[str]) -> FrontMatter | None:
    try:
        data = read_reviewed(tool_md)
    except UnreviewedCodeError as exc:
        problems.append(str(exc))
        return None
    except OSError as exc:
        problems.append(f"{tool_md}: cannot be read ({exc.strerror or exc})")
        return None
    try:
        # Universal newlines, as reading in text mode would give.
        text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError:
        problems.append(f"{tool_md}: is not UTF-8 text")
        return None
    try:
        return parse_tool_md(text)
    except FrontMatterError as exc:
        problems.extend(f"{tool_md}: {message}" for message in exc.messages)
        return None


def _build(
    front: FrontMatter,
    name: str,
    handle: Callable[..., Any],
    is_async: bool,
    tool_md: Path,
    handler: Path,
    problems: list[str],
) -> Tool | None:
    properties = front.input_schema["properties"]
    defaults = {key: prop["default"] for key, prop in properties.items() if "default" in prop}
    adapter = AsyncFileHandler if is_async else FileHandler
    fn = adapter(handle, handler, defaults, name)
    try:
        return Tool(
            fn,
            name=name,
            description=front.description or name,
            input_schema=front.input_schema,
            tags=front.tags,
            require_approval=front.require_approval,
            allowed_agents=front.allowed_agents,
            instructions=front.instructions,
            title=front.title,
            timeout=front.timeout,
            read_only=front.hints.read_only,
            destructive=front.hints.destructive,
            idempotent=front.hints.idempotent,
            open_world=front.hints.open_world,
            credentials=front.credentials,
            scopes=front.scopes,
        )
    except ToolDefinitionError as exc:
        problems.append(f"{tool_md}: {exc}")
        return None
