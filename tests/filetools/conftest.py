"""Fixtures for the file-tool tests: a tools directory and helpers that write and load tools."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Tool, ToolContext, ToolResult
from toolpacks.filetools._loader import load_tools_dir

ECHO_HANDLER = """\
def handle(arguments, context):
    return arguments
"""


@pytest.fixture
def tools_dir(tmp_path: Path) -> Path:
    """An empty tools directory."""
    directory = tmp_path / "tools"
    directory.mkdir()
    return directory


@pytest.fixture
def make_tool(tools_dir: Path) -> Callable[..., Path]:
    """Write ``<root>/<dirname>/TOOL.md`` (front matter + body) and ``handler.py``."""

    def make(
        dirname: str,
        front: str = "",
        handler: str | None = ECHO_HANDLER,
        body: str = "",
        *,
        root: Path | None = None,
    ) -> Path:
        directory = (root or tools_dir) / dirname
        directory.mkdir(parents=True, exist_ok=True)
        text = f"---\n{textwrap.dedent(front).strip()}\n---\n{textwrap.dedent(body)}"
        (directory / "TOOL.md").write_text(text, encoding="utf-8")
        if handler is not None:
            (directory / "handler.py").write_text(textwrap.dedent(handler), encoding="utf-8")
        return directory

    return make


@pytest.fixture
def load(tools_dir: Path) -> Callable[[], tuple[dict[str, Tool], list[str]]]:
    """Load the tools directory: tools by name, and the problems."""

    def run() -> tuple[dict[str, Tool], list[str]]:
        tools, problems = load_tools_dir(tools_dir)
        return {t.name: t for t in tools}, problems

    return run


def invoke(
    tool: Tool, arguments: Mapping[str, Any] | str | None = None, context: ToolContext | None = None
) -> ToolResult:
    """Run ``tool.invoke`` to completion."""
    return asyncio.run(tool.invoke(arguments, context))


@pytest.fixture
def call() -> Callable[..., ToolResult]:
    """``call(tool, arguments, context=None)``: invoke a tool and return its result."""
    return invoke
