"""The source tree is layered: no import cycles between files, no import from a lower layer up.

The graph is built from the AST of every module under ``src/toolpacks``. Every import counts:
module level, inside functions (lazy imports) and under ``TYPE_CHECKING``, because each is a
dependency a reader has to follow, and a cycle through any of them is a cycle in the design.
"""

from __future__ import annotations

import ast
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import toolpacks

SRC = Path(toolpacks.__file__).parent

# Layers, bottom up (DESIGN.md, "Wave 2 contract", Layout): ``(layer, sub-layer)``. A module
# may import modules of its own (sub-)layer and of any lower one; a module's layer is that of
# the longest prefix listed here. ``export`` depends on ``core`` alone, so the host's
# ``Toolset.definitions`` may use it; ``filetools`` is a pack source that ``packs`` can load.
# In ``core``, the values both jobs use (results, contexts, argument checks) sit below what a
# tool is (``define``), which sits below one call of it (``call``); ``Tool``, ``Toolbox`` and
# ``Registry`` join the two. In ``packs``, the record and trust every source shares sit below
# the sources, one sub-package each. docs/concepts/architecture.md draws this table, and
# ``test_the_architecture_page_draws_the_layer_table`` keeps the two the same.
LAYERS: dict[str, tuple[int, int]] = {
    "toolpacks.exceptions": (0, 0),
    "toolpacks._version": (0, 0),
    "toolpacks.core": (1, 0),
    "toolpacks.core.define": (1, 1),
    "toolpacks.core.call": (1, 2),
    "toolpacks.core._tool": (1, 3),
    "toolpacks.core._toolbox": (1, 3),
    "toolpacks.core._registry": (1, 3),
    "toolpacks.filetools": (2, 0),
    "toolpacks.export": (2, 0),
    "toolpacks.packs": (3, 0),
    "toolpacks.hookspecs": (3, 0),
    "toolpacks.packs.sandbox": (3, 0),
    "toolpacks.packs.entrypoints": (3, 1),
    "toolpacks.packs.mcp": (3, 1),
    "toolpacks.packs.llm": (3, 2),
    "toolpacks.packs.isolated": (3, 2),
    "toolpacks.host": (4, 0),
    "toolpacks.mcp": (5, 0),
    "toolpacks.mcp.http": (5, 0),
    "toolpacks.integrations": (5, 0),
    "toolpacks.testing": (5, 0),
    "toolpacks.cli": (6, 0),
    "toolpacks.__main__": (7, 0),
    "toolpacks": (7, 0),  # the package facade: lazy re-exports of the public names
}
SUBPACKAGES = (
    "core",
    "core/define",
    "core/call",
    "core/prompts",
    "packs",
    "packs/entrypoints",
    "packs/mcp",
    "packs/llm",
    "packs/isolated",
    "packs/sandbox",
    "filetools",
    "host",
    "host/config",
    "host/credentials",
    "host/identity",
    "host/search",
    "export",
    "mcp",
    "mcp/http",
    "mcp/http/auth",
    "integrations",
    "cli",
)


def shown(rank: tuple[int, int]) -> str:
    """``3.1`` for ``(3, 1)``, ``3`` for ``(3, 0)``: a rank as the architecture page writes it."""
    return f"{rank[0]}.{rank[1]}" if rank[1] else str(rank[0])


def module_name(path: Path) -> str:
    """``toolpacks.core._tool`` for ``src/toolpacks/core/_tool.py`` (a package is its name)."""
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def layer_of(module: str) -> tuple[int, int]:
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
    """Core imports nothing of packs/host, and its values nothing of define or call; cli on top."""
    upward = [
        f"{source}:{line} imports {target} "
        f"(layer {shown(layer_of(target))} > {shown(layer_of(source))})"
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


def test_sub_layers_order_the_rooms_of_a_layer() -> None:
    """The checker ranks sub-packages: core's values < define < call < Tool; record < sources."""
    assert (
        layer_of("toolpacks.core._result")
        < layer_of("toolpacks.core.define._schema")
        < layer_of("toolpacks.core.call._gate")
        < layer_of("toolpacks.core._tool")
        < layer_of("toolpacks.filetools._loader")
    )
    assert (
        layer_of("toolpacks.packs._record")
        < layer_of("toolpacks.packs.mcp._client")
        == layer_of("toolpacks.packs.entrypoints._loading")
        < layer_of("toolpacks.packs.llm._plugins")
        < layer_of("toolpacks.host._host")
    )


# -- the architecture page is checked against the tree ------------------------------------------

REPOSITORY = SRC.parents[1]
PAGE = REPOSITORY / "docs" / "concepts" / "architecture.md"
_FENCE = re.compile(r"```text\n(.*?)```", re.DOTALL)
_CODE = re.compile(r"`([^`\n]+)`")
_RANK = re.compile(r"^\s*(\d+)(?:\.(\d+))?\s+(.*)$")


def _section(text: str, heading: str) -> str:
    """The text of the ``## heading`` section, up to the next ``## ``."""
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _module_of(path: str) -> str:
    """``toolpacks.core.call`` for ``core/call/``; ``toolpacks`` for ``__init__.py``."""
    parts = path.removesuffix("/").removesuffix(".py").split("/")
    if parts == ["__init__"]:
        return "toolpacks"
    return ".".join(["toolpacks", *parts])


def page_layers(text: str) -> dict[str, tuple[int, int]]:
    """The layer table of the page's "Layers" section, as ``LAYERS`` writes it."""
    table = _FENCE.search(_section(text, "Layers"))
    assert table is not None, "the Layers section has no ```text table"
    layers: dict[str, tuple[int, int]] = {}
    for line in table.group(1).splitlines():
        match = _RANK.match(line)
        if match is None:
            continue
        rank = (int(match.group(1)), int(match.group(2) or 0))
        for token in match.group(3).split():
            if not token.endswith(("/", ".py")):
                break  # the description starts
            layers[_module_of(token)] = rank
    return layers


def page_map(text: str) -> set[str]:
    """The paths the page's "Map" names (``core/call/_gate.py``, ``core/call/``)."""
    block = _FENCE.search(_section(text, "Map"))
    assert block is not None, "the Map section has no ```text tree"
    named: set[str] = set()
    parents: list[str] = []
    for line in block.group(1).splitlines():
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        name = line.split()[0]
        del parents[depth:]
        path = "".join(parents) + name
        named.add(path)
        if name.endswith("/"):
            parents.append(name)
    return named


def tree_paths(src: Path) -> set[str]:
    """Every package (``core/call/``) and module (``core/call/_gate.py``) under ``src``."""
    paths: set[str] = set()
    for file in src.rglob("*.py"):
        if "__pycache__" in file.parts:
            continue
        relative = file.relative_to(src).as_posix()
        paths.add(relative)
        if file.name == "__init__.py" and file.parent != src:
            paths.add(file.parent.relative_to(src).as_posix() + "/")
    return paths


def page_problems(text: str, src: Path, layers: dict[str, tuple[int, int]]) -> list[str]:
    """What the page says that the tree (``src``) or ``layers`` does not, and the reverse."""
    problems: list[str] = []
    drawn = page_layers(text)
    for module in sorted(drawn.keys() | layers.keys()):
        if drawn.get(module) != layers.get(module):
            problems.append(
                f"layer of {module}: the page says {drawn.get(module)}, "
                f"LAYERS says {layers.get(module)}"
            )
    named, present = page_map(text), tree_paths(src)
    problems += [f"{p} exists but the page's Map does not name it" for p in sorted(present - named)]
    problems += [f"the page's Map names {p}, which does not exist" for p in sorted(named - present)]
    # In prose, a path (``core/call/_gate.py``, ``packs/mcp/``, ``tests/test_layout.py``) or a
    # private module (``_version.py``) must exist: under src/toolpacks, src or the repository.
    prose = _FENCE.sub("", text)
    places = (src, src.parent, REPOSITORY)
    for token in sorted(set(_CODE.findall(prose))):
        if re.fullmatch(r"[\w.-]*/[\w./-]*(/|\.py|\.md)|_\w+\.py", token) and not any(
            (place / token).exists() for place in places
        ):
            problems.append(f"the page names `{token}`, which does not exist")
    return problems


def test_the_architecture_page_draws_the_tree_and_the_layer_table() -> None:
    """The architecture page names every package and module, and its layers are ``LAYERS``."""
    assert page_problems(PAGE.read_text(encoding="utf-8"), SRC, LAYERS) == []


def _copy_of_the_tree(tmp_path: Path) -> Path:
    src = tmp_path / "src" / "toolpacks"
    shutil.copytree(SRC, src, ignore=shutil.ignore_patterns("__pycache__"))
    return src


def test_the_page_check_fails_on_a_module_the_page_does_not_name(tmp_path: Path) -> None:
    """A module added to the tree without a line on the page is reported (not vacuous)."""
    src = _copy_of_the_tree(tmp_path)
    (src / "packs" / "mcp" / "_planted.py").write_text('"""Planted."""\n', encoding="utf-8")
    (src / "core" / "planted").mkdir()
    (src / "core" / "planted" / "__init__.py").write_text('"""Planted."""\n', encoding="utf-8")
    problems = page_problems(PAGE.read_text(encoding="utf-8"), src, LAYERS)
    assert problems == [
        "core/planted/ exists but the page's Map does not name it",
        "core/planted/__init__.py exists but the page's Map does not name it",
        "packs/mcp/_planted.py exists but the page's Map does not name it",
    ]


def test_the_page_check_fails_on_a_module_that_is_gone(tmp_path: Path) -> None:
    """A module the page names that no longer exists is reported, in the Map and in prose."""
    src = _copy_of_the_tree(tmp_path)
    (src / "core" / "call" / "_gate.py").unlink()
    problems = page_problems(PAGE.read_text(encoding="utf-8"), src, LAYERS)
    assert "the page's Map names core/call/_gate.py, which does not exist" in problems
    assert "the page names `core/call/_gate.py`, which does not exist" in problems


def test_the_page_check_fails_when_the_layer_table_and_layers_disagree() -> None:
    """A layer moved in ``LAYERS`` (or one added) without the page is reported."""
    text = PAGE.read_text(encoding="utf-8")
    moved = {**LAYERS, "toolpacks.packs.llm": (3, 1), "toolpacks.packs.planned": (3, 3)}
    assert page_problems(text, SRC, moved) == [
        "layer of toolpacks.packs.llm: the page says (3, 2), LAYERS says (3, 1)",
        "layer of toolpacks.packs.planned: the page says None, LAYERS says (3, 3)",
    ]
