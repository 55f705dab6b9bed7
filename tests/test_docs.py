"""The documentation: its Python code blocks run, and every hook has a reference section.

Each Markdown file's ``python`` blocks run in order in one namespace (top-level ``await`` is
allowed), in a temporary working directory. A block preceded by ``<!-- skip-test -->`` is
illustrative only (it names files or services that do not exist here).

A line that is a single bare expression followed by a comment promising its value is checked:
``add(1, 2)  # 3`` runs as ``assert add(1, 2) == 3``. The comment is the promise when it is a
Python literal (``ast.literal_eval``), optionally followed by ``: prose``
(``# 3: the original function``). Any other comment, or a line that is not one whole expression
statement, is left alone.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import io
import re
import tokenize
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


PROMISE_CHECK = "__doc_promise__"


def _promised_literal(comment: str) -> ast.expr | None:
    """The literal a ``# comment`` promises, as an expression node; None if it promises none."""
    text = comment.lstrip("#").strip()
    # The whole comment, else a prefix ending just before ": " (``# 3: the original function``).
    candidates = [text] + [text[:i] for i in range(len(text)) if text.startswith(": ", i)]
    for candidate in candidates:
        try:
            ast.literal_eval(candidate)
            expression = ast.parse(candidate.strip(), mode="eval").body
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            continue
        # ``...`` in a doc comment elides part of a value (``{"a": ...}``); it promises nothing.
        if any(isinstance(n, ast.Constant) and n.value is Ellipsis for n in ast.walk(expression)):
            return None
        return expression
    return None


def _trailing_comments(source: str) -> dict[int, tuple[int, str]]:
    """Line number -> (column, text) of each comment that follows code on its line."""
    comments: dict[int, tuple[int, str]] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and tok.line[: tok.start[1]].strip():
            comments[tok.start[0]] = (tok.start[1], tok.string)
    return comments


class _PromiseChecks(ast.NodeTransformer):
    """Turns ``expr  # literal`` statements into checks; records the lines it checked."""

    def __init__(self, source: str) -> None:
        self.lines = source.splitlines()
        self.comments = _trailing_comments(source)
        self.checked: list[str] = []

    def visit_Expr(self, node: ast.Expr) -> ast.stmt:
        comment = self.comments.get(node.lineno)
        if comment is None or node.end_lineno != node.lineno or node.end_col_offset is None:
            return node
        column, text = comment
        # AST columns count UTF-8 bytes, tokenize's count characters.
        line = self.lines[node.lineno - 1].encode()
        comment_at = len(self.lines[node.lineno - 1][:column].encode())
        # The expression must be the whole statement on its line: nothing before it but
        # indentation, nothing between it and the comment (no ``a; b  # 1``).
        if line[: node.col_offset].strip() or line[node.end_col_offset : comment_at].strip():
            return node
        expected = _promised_literal(text)
        if expected is None:
            return node
        code = line[node.col_offset : node.end_col_offset].decode()
        self.checked.append(code)
        call = ast.Call(
            func=ast.Name(id=PROMISE_CHECK, ctx=ast.Load()),
            args=[node.value, expected, ast.Constant(code), ast.Constant(text)],
            keywords=[],
        )
        return ast.copy_location(ast.Expr(value=call), node)


def _check_promise(actual: Any, expected: Any, code: str, comment: str) -> None:
    assert actual == expected, f"{code}  {comment}: the code gives {actual!r}"


def _with_promise_checks(source: str, filename: str) -> tuple[Any, list[str]]:
    """Compile a block with its promised results checked; return the code and checked lines."""
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree = compile(source, filename, "exec", flags=flags, dont_inherit=True)
    checks = _PromiseChecks(source)
    tree = ast.fix_missing_locations(checks.visit(tree))
    # dont_inherit: a block runs as a reader's copy would, without this module's __future__.
    code = compile(tree, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    return code, checks.checked


def _run_blocks(blocks: list[str], name: str) -> None:
    namespace: dict[str, Any] = {"__name__": f"docs_{name}", PROMISE_CHECK: _check_promise}
    for index, source in enumerate(blocks):
        code, _ = _with_promise_checks(source, f"{name}[block {index}]")
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


def test_readme_promised_results_are_checked() -> None:
    """The results README's first example promises in comments are asserted, not just shown."""
    (first, *_) = _blocks(ROOT / "README.md")
    _, checked = _with_promise_checks(first, "README.md[block 0]")
    assert checked == ["add(1, 2)", "result.value, result.content"]


def test_a_wrong_promise_fails() -> None:
    """A comment promising a value the code does not give fails the page."""
    with pytest.raises(AssertionError, match=r"1 \+ 1  # 3: .* gives 2"):
        _run_blocks(["x = 1\n1 + 1  # 3: wrong on purpose\n"], "wrong")
    with pytest.raises(AssertionError, match=r"gives \(1, '1'\)"):
        _run_blocks(['async def f():\n    return 1, "1"\n\nawait f()  # (1, 1)\n'], "wrong")
    with pytest.raises(AssertionError):
        _run_blocks(["if True:\n    len('ab')  # 3\n"], "nested")


def test_right_promises_pass_and_other_comments_are_left_alone() -> None:
    """Only a bare one-line expression followed by a literal comment is checked."""
    source = (
        "a = 2  # 3: an assignment, not checked\n"
        "a + 1  # 3\n"
        'a, str(a)  # (2, "2"): a tuple\n'
        "{'k': a}  # {'k': 2}\n"
        "a  # the answer: 5\n"
        "a; a  # 9\n"
        "(a +\n 1)  # 7\n"
        "a  # {...}\n"
        "a  # {'k': ...}\n"
        "print(a)  # noqa: T201\n"
        "'é' + str(a)  # 'é2'\n"
    )
    _, checked = _with_promise_checks(source, "sample")
    assert checked == ["a + 1", "a, str(a)", "{'k': a}", "'é' + str(a)"]
    _run_blocks([source], "sample")


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
        "toolpacks.integrations.pydantic_ai",
        "toolpacks.integrations.openai_agents",
    ],
)
def test_docstring_examples_run(module: str) -> None:
    """The ``>>>`` examples in public docstrings are correct."""
    import doctest
    import importlib

    failures, tried = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert tried > 0, f"{module} has no examples"
    assert failures == 0
