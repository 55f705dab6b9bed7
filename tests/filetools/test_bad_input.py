"""Broken tools are reported with the file and what is wrong; the other tools still load."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from toolpacks import Tool
from toolpacks.filetools._handler import MODULE_PREFIX
from toolpacks.filetools._loader import load_tools_dir

Load = Callable[[], tuple[dict[str, Tool], list[str]]]

GOOD = "def handle(arguments, context):\n    return 'ok'\n"

# (case, front matter, handler.py or None, file the problem names, what it says)
FRONT_MATTER_CASES = [
    ("unknown-key", "descripton: typo", GOOD, "TOOL.md", "unknown key 'descripton'"),
    ("unknown-key-hint", "descripton: typo", GOOD, "TOOL.md", "did you mean 'description'?"),
    (
        "permission-at-top-level",
        "description: D.\nrequire_approval: true",
        GOOD,
        "TOOL.md",
        "did you mean permissions.require_approval?",
    ),
    (
        "unknown-permission-key",
        "description: D.\npermissions: {allowed_agent: [a]}",
        GOOD,
        "TOOL.md",
        "did you mean 'allowed_agents'?",
    ),
    (
        "unknown-parameter-key",
        "description: D.\nparameters:\n  q: {typ: string}",
        GOOD,
        "TOOL.md",
        "unknown key 'typ' in the parameters.q",
    ),
    (
        "unknown-parameter-type",
        "description: D.\nparameters:\n  q: {type: str}",
        GOOD,
        "TOOL.md",
        "parameters.q.type: unknown parameter type 'str'",
    ),
    (
        "default-not-in-enum",
        "description: D.\nparameters:\n  q: {enum: [a, b], default: c}",
        GOOD,
        "TOOL.md",
        "parameters.q.default: 'c' is not one of the enum values",
    ),
    (
        "default-of-wrong-type",
        "description: D.\nparameters:\n  q: {type: integer, default: '5'}",
        GOOD,
        "TOOL.md",
        "does not match the parameter type integer",
    ),
    (
        "enum-of-wrong-type",
        "description: D.\nparameters:\n  q: {type: integer, enum: [1, '2']}",
        GOOD,
        "TOOL.md",
        "parameters.q.enum: '2' (str) does not match the parameter type integer",
    ),
    (
        "float-enum",
        "description: D.\nparameters:\n  q: {type: number, enum: [0.5, 1.5]}",
        GOOD,
        "TOOL.md",
        "enum values must be strings, integers or booleans",
    ),
    (
        "enum-duplicate",
        "description: D.\nparameters:\n  q: {enum: [a, b, a]}",
        GOOD,
        "TOOL.md",
        "parameters.q.enum lists a value twice",
    ),
    (
        "required-with-default",
        "description: D.\nparameters:\n  q: {required: true, default: x}",
        GOOD,
        "TOOL.md",
        "a required parameter cannot have a default",
    ),
    (
        "parameter-not-a-mapping",
        "description: D.\nparameters:\n  q: string",
        GOOD,
        "TOOL.md",
        "parameters.q must be a mapping",
    ),
    (
        "parameters-not-a-mapping",
        "description: D.\nparameters: [q]",
        GOOD,
        "TOOL.md",
        "parameters must be a mapping",
    ),
    (
        "bad-parameter-name",
        "description: D.\nparameters:\n  my param: {}",
        GOOD,
        "TOOL.md",
        "parameter name 'my param' may use only",
    ),
    (
        "reserved-parameter-name",
        "description: D.\nparameters:\n  toolpacks_context: {}",
        GOOD,
        "TOOL.md",
        "is reserved for the ToolContext",
    ),
    ("duplicate-yaml-key", "description: a\ndescription: b", GOOD, "TOOL.md", "given twice"),
    ("hint-not-bool", "description: D.\nread_only: maybe", GOOD, "TOOL.md", "read_only must be"),
    ("bad-timeout", "description: D.\ntimeout: -1", GOOD, "TOOL.md", "timeout must be a positive"),
    ("tags-not-strings", "description: D.\ntags: [1, 2]", GOOD, "TOOL.md", "tags must be a list"),
    ("name-not-valid", "name: '-dash'", GOOD, "TOOL.md", "name '-dash' is not a valid tool name"),
    ("missing-handler", "description: D.", None, "handler.py", "missing"),
    (
        "syntax-error",
        "description: D.",
        "def handle(arguments, context):\n    return (\n",
        "handler.py",
        "syntax error at line",
    ),
    (
        "raises-at-import",
        "description: D.",
        "raise RuntimeError('no API key')\n",
        "handler.py",
        "raised RuntimeError while being imported: no API key",
    ),
    (
        "exits-at-import",
        "description: D.",
        "import sys\nsys.exit(3)\n",
        "handler.py",
        "raised SystemExit while being imported",
    ),
    (
        "no-handle",
        "description: D.",
        "def handler(arguments, context):\n    return 1\n",
        "handler.py",
        "defines no `handle`",
    ),
    ("handle-not-callable", "description: D.", "handle = 42\n", "handler.py", "`handle` is int"),
    (
        "handle-wrong-signature",
        "description: D.",
        "def handle(arguments):\n    return 1\n",
        "handler.py",
        "cannot be called as handle(arguments, context)",
    ),
    (
        "handle-is-a-generator",
        "description: D.",
        "def handle(arguments, context):\n    yield 1\n",
        "handler.py",
        "`handle` is a generator",
    ),
]


@pytest.mark.parametrize(
    ("case", "front", "handler", "file", "message"),
    FRONT_MATTER_CASES,
    ids=[c[0] for c in FRONT_MATTER_CASES],
)
def test_bad_tool_is_reported_and_the_others_load(
    make_tool: Callable[..., Path],
    load: Load,
    tools_dir: Path,
    case: str,
    front: str,
    handler: str | None,
    file: str,
    message: str,
) -> None:
    """Each broken TOOL.md or handler.py gives a problem naming the file and the mistake."""
    make_tool("aaa_good", "description: Fine.", GOOD)
    make_tool(case, front, handler)
    make_tool("zzz_good", "description: Fine.", GOOD)
    tools, problems = load()
    assert sorted(tools) == ["aaa_good", "zzz_good"]
    expected = f"{tools_dir / case / file}: "
    assert any(p.startswith(expected) and message in p for p in problems), problems


RAW_CASES = [
    ("invalid-yaml", "---\ndescription: [unclosed\n---\n", "invalid YAML in the front matter"),
    ("invalid-yaml-line", "---\ndescription: ok\nbad: : :\n---\n", "at line 3"),
    ("no-front-matter", "# Weather\nTells the weather.\n", "missing front matter"),
    ("unclosed-front-matter", "---\ndescription: D.\n", "the front matter is not closed"),
    ("front-matter-a-list", "---\n- a\n- b\n---\n", "the front matter must be a mapping"),
    ("front-matter-a-string", "---\njust words\n---\n", "got str"),
]


@pytest.mark.parametrize(("case", "text", "message"), RAW_CASES, ids=[c[0] for c in RAW_CASES])
def test_unreadable_front_matter_is_reported(
    make_tool: Callable[..., Path],
    load: Load,
    tools_dir: Path,
    case: str,
    text: str,
    message: str,
) -> None:
    """Invalid YAML, missing or unclosed front matter, or one that is not a mapping."""
    make_tool("good", "description: Fine.", GOOD)
    directory = tools_dir / case
    directory.mkdir()
    (directory / "TOOL.md").write_text(text, encoding="utf-8")
    (directory / "handler.py").write_text(GOOD, encoding="utf-8")
    tools, problems = load()
    assert list(tools) == ["good"]
    assert len(problems) == 1
    assert problems[0].startswith(f"{directory / 'TOOL.md'}: ")
    assert message in problems[0]


def test_every_front_matter_problem_is_reported_at_once(
    make_tool: Callable[..., Path], load: Load
) -> None:
    """Several mistakes in one TOOL.md give one problem line each."""
    make_tool(
        "many",
        "descripton: x\ntags: 3\nparameters:\n  a: {type: float}\n  b: {enum: []}",
    )
    _, problems = load()
    assert len(problems) == 4


def test_directory_name_that_is_not_a_tool_name_is_reported_not_renamed(
    make_tool: Callable[..., Path], load: Load, tools_dir: Path
) -> None:
    """A directory named `my tool` is reported; no `my_tool` appears."""
    make_tool("my tool", "description: D.", GOOD)
    tools, problems = load()
    assert tools == {}
    assert problems == [
        f"{tools_dir / 'my tool'}: the directory name 'my tool' is not a valid tool name "
        "(1-64 letters, digits, '_' or '-', not starting with '-'); rename the directory or "
        "set `name:` in its TOOL.md"
    ]


def test_an_explicit_name_rescues_an_unusual_directory_name(
    make_tool: Callable[..., Path], load: Load
) -> None:
    """With a valid `name`, the directory's own name does not matter."""
    make_tool("my tool", "name: my_tool\ndescription: D.", GOOD)
    tools, problems = load()
    assert list(tools) == ["my_tool"]
    assert problems == []


def test_duplicate_names_in_one_directory(
    make_tool: Callable[..., Path], load: Load, tools_dir: Path
) -> None:
    """Two tools with one name: the first directory's loads; the other is reported."""
    make_tool("a", "name: same\ndescription: A.", GOOD)
    make_tool("b", "name: same\ndescription: B.", GOOD)
    tools, problems = load()
    assert tools["same"].description == "A."
    assert problems == [
        f"{tools_dir / 'b' / 'TOOL.md'}: the tool name 'same' is already used by "
        f"{tools_dir / 'a' / 'TOOL.md'}; this one was not loaded (rename one of them)"
    ]


def test_handler_without_tool_md_is_reported(load: Load, tools_dir: Path) -> None:
    """A directory with handler.py but no TOOL.md (or a misspelt one) is reported."""
    (tools_dir / "half").mkdir()
    (tools_dir / "half" / "handler.py").write_text(GOOD)
    (tools_dir / "lower").mkdir()
    (tools_dir / "lower" / "tool.md").write_text("---\ndescription: D.\n---\n")
    _, problems = load()
    assert [p.split(":")[0] for p in problems] == [
        str(tools_dir / "half"),
        str(tools_dir / "lower"),
    ]
    assert all("has no TOOL.md" in p for p in problems)


def test_other_entries_are_ignored(
    make_tool: Callable[..., Path], load: Load, tools_dir: Path
) -> None:
    """Plain files, hidden directories, __pycache__ and folders with neither file are skipped."""
    make_tool("good", "description: Fine.", GOOD)
    (tools_dir / "README.md").write_text("# My tools\n")
    (tools_dir / "shared").mkdir()
    (tools_dir / "shared" / "notes.txt").write_text("x")
    make_tool(".hidden", "broken: [", GOOD)
    (tools_dir / "__pycache__").mkdir()
    tools, problems = load()
    assert list(tools) == ["good"]
    assert problems == []


def test_missing_tools_directory_is_a_problem(tmp_path: Path) -> None:
    """A tools directory that does not exist gives a problem, not an exception."""
    tools, problems = load_tools_dir(tmp_path / "nowhere")
    assert tools == []
    assert problems == [f"{tmp_path / 'nowhere'}: the tools directory does not exist"]


def test_tools_directory_that_is_a_file_is_a_problem(tmp_path: Path) -> None:
    """A file given as a tools directory gives a problem."""
    (tmp_path / "f").write_text("x")
    tools, problems = load_tools_dir(tmp_path / "f")
    assert tools == []
    assert "is not a directory" in problems[0]


def test_non_utf8_tool_md_is_reported(load: Load, tools_dir: Path) -> None:
    """A TOOL.md that is not UTF-8 text is reported."""
    (tools_dir / "latin").mkdir()
    (tools_dir / "latin" / "TOOL.md").write_bytes(b"---\ndescription: caf\xe9\n---\n")
    (tools_dir / "latin" / "handler.py").write_text(GOOD)
    _, problems = load()
    assert problems == [f"{tools_dir / 'latin' / 'TOOL.md'}: is not UTF-8 text"]


def test_a_handler_failing_at_import_leaves_no_module_behind(
    make_tool: Callable[..., Path], load: Load
) -> None:
    """A handler that raises while imported is not left in sys.modules."""
    make_tool("boom", "description: D.", "raise ValueError('x')\n")
    before = {n for n in sys.modules if n.startswith(MODULE_PREFIX)}
    load()
    assert {n for n in sys.modules if n.startswith(MODULE_PREFIX)} == before
