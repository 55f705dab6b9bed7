"""The source tree is layered: no import cycles between files, no import from a lower layer up.

The graph is built from the AST of every module under ``src/toolpacks``. Every import counts:
module level, inside functions (lazy imports) and under ``TYPE_CHECKING``, because each is a
dependency a reader has to follow, and a cycle through any of them is a cycle in the design.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import toolpacks

SRC = Path(toolpacks.__file__).parent

# Layers, bottom up (DESIGN.md, "Wave 2 contract", Layout). A module may import modules of its
# own layer and of any lower one. ``export`` depends on ``core`` alone, so the host's
# ``Toolset.definitions`` may use it; ``filetools`` is a pack source that ``packs`` can load.
LAYERS: dict[str, int] = {
    "toolpacks.exceptions": 0,
    "toolpacks._version": 0,
    "toolpacks.core": 1,
    "toolpacks.filetools": 2,
    "toolpacks.export": 2,
    "toolpacks.packs": 3,
    "toolpacks.hookspecs": 3,
    "toolpacks.host": 4,
    "toolpacks.mcp": 5,
    "toolpacks.integrations": 5,
    "toolpacks.testing": 5,
    "toolpacks.cli": 6,
    "toolpacks.__main__": 7,
    "toolpacks": 7,  # the package facade: lazy re-exports of the public names
}
SUBPACKAGES = ("core", "packs", "filetools", "host", "export", "mcp", "integrations", "cli")


def module_name(path: Path) -> str:
    """``toolpacks.core._tool`` for ``src/toolpacks/core/_tool.py`` (a package is its name)."""
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def layer_of(module: str) -> int:
    """The layer of ``module``: that of the longest prefix in ``LAYERS``."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        rank = LAYERS.get(".".join(parts[:end]))
        if rank is not None:
            return rank
    raise AssertionError(f"{module} belongs to no layer: add it to LAYERS in {__file__}")


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """The toolpacks modules that ``module`` imports, with the line of each import."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "toolpacks":
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.split(".")[0] != "toolpacks":
                continue
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                # ``from pkg import submodule`` depends on the submodule, not the package.
                yield (submodule if submodule in modules else target), node.lineno


def import_graph() -> dict[str, list[tuple[str, int]]]:
    modules = all_modules()
    return {
        name: [
            (target, line)
            for target, line in imports_of(name, path, modules)
            if target != name and target in modules
        ]
        for name, path in modules.items()
    }


def cycles(graph: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w, _ in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_lazy_and_type_checking_imports() -> None:
    """The checker counts imports inside functions and under TYPE_CHECKING, not just at the top."""
    graph = dict(import_graph())
    targets = {t for t, _ in graph["toolpacks.host._host"]}
    assert "toolpacks.filetools._loader" in targets  # imported inside a method
    facade = {t for t, _ in graph["toolpacks"]}
    assert "toolpacks.core._tool" in facade  # imported under TYPE_CHECKING only


def test_the_cycle_finder_finds_a_cycle() -> None:
    """A planted two-file cycle is reported (the checker is not vacuous)."""
    graph = {"a": [("b", 1)], "b": [("c", 1)], "c": [("a", 1)], "d": [("a", 1)]}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycles_between_files() -> None:
    """No two modules of src/toolpacks import each other, directly or through others."""
    assert cycles(import_graph()) == []


def test_no_import_from_a_lower_layer_into_a_higher_one() -> None:
    """Core imports nothing of packs/host; export and mcp sit on host/core; cli on top."""
    upward = [
        f"{source}:{line} imports {target} (layer {layer_of(target)} > {layer_of(source)})"
        for source, targets in import_graph().items()
        for target, line in targets
        if layer_of(target) > layer_of(source)
    ]
    assert upward == []


def test_every_module_lives_in_a_layer() -> None:
    """No private module is left at the top of the package: each sits in its layer's folder."""
    top = sorted(p.name for p in SRC.glob("*.py"))
    assert top == [
        "__init__.py",
        "__main__.py",
        "_version.py",
        "exceptions.py",
        "hookspecs.py",
        "testing.py",
    ]
    for sub in SUBPACKAGES:
        assert (SRC / sub / "__init__.py").is_file(), sub
    for name in all_modules():
        layer_of(name)


@pytest.mark.parametrize("module", sorted(all_modules()))
def test_no_source_file_is_over_500_lines(module: str) -> None:
    """Modules stay small enough to read in one sitting (the issue's ~500-line budget)."""
    lines = all_modules()[module].read_text(encoding="utf-8").count("\n")
    assert lines <= 500, f"{module} has {lines} lines"
