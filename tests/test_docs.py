"""The documentation: its Python code blocks run, and every hook has a reference section.

Each Markdown file's ``python`` blocks run in order in one namespace (top-level ``await`` is
allowed), in a temporary working directory. A block preceded by ``<!-- skip-test -->`` is
illustrative only (it names files or services that do not exist here).
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

import toolpacks
from toolpacks import hookspecs

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BLOCK = re.compile(r"(<!-- skip-test -->\s*)?```python\n(.*?)```", re.DOTALL)


def _doc_files() -> list[Path]:
    return [*sorted(DOCS.rglob("*.md")), ROOT / "README.md"]


def _blocks(path: Path) -> list[str]:
    return [m.group(2) for m in BLOCK.finditer(path.read_text(encoding="utf-8")) if not m.group(1)]


def _run_blocks(blocks: list[str], name: str) -> None:
    namespace: dict[str, Any] = {"__name__": f"docs_{name}"}
    for index, source in enumerate(blocks):
        code = compile(
            source, f"{name}[block {index}]", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        )
        outcome = eval(code, namespace)
        if inspect.iscoroutine(outcome):
            asyncio.run(outcome)


DOC_FILES = [p for p in _doc_files() if _blocks(p)]


@pytest.mark.parametrize("path", DOC_FILES, ids=[str(p.relative_to(ROOT)) for p in DOC_FILES])
def test_doc_code_blocks_run(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Python block of this page runs without error."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TOOLPACKS_CACHE_DIR", str(tmp_path / "cache"))
    _run_blocks(_blocks(path), path.stem)


def test_every_hook_spec_has_a_reference_section() -> None:
    """docs/reference/hooks.md has a `## name` section for each hook specification."""
    text = (DOCS / "reference" / "hooks.md").read_text(encoding="utf-8")
    specs = [
        name
        for name, fn in vars(hookspecs).items()
        if callable(fn) and hasattr(fn, "toolpacks_spec")
    ]
    assert specs, "no hook specifications found"
    missing = [name for name in specs if f"## `{name}`" not in text]
    assert not missing, f"hooks without a section in docs/reference/hooks.md: {missing}"


def test_api_reference_lists_exactly_the_public_names() -> None:
    """docs/reference/api.md documents every name in ``toolpacks.__all__`` and no other."""
    text = (DOCS / "reference" / "api.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^::: toolpacks\.(\w+)$", text, re.MULTILINE))
    public = set(toolpacks.__all__) - {"__version__"}
    assert documented == public


@pytest.mark.parametrize(
    "module",
    [
        "toolpacks.core._tool",
        "toolpacks.core._toolbox",
        "toolpacks.core._registry",
        "toolpacks.testing",
    ],
)
def test_docstring_examples_run(module: str) -> None:
    """The ``>>>`` examples in public docstrings are correct."""
    import doctest
    import importlib

    failures, tried = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert tried > 0, f"{module} has no examples"
    assert failures == 0
