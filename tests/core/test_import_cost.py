"""What importing toolpacks, defining a tool and making a host do NOT import or build.

Each check runs a fresh interpreter and looks at ``sys.modules``: no timing is measured here
(``bench/bench_startup.py`` does that). A module that is not imported cannot cost anything.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from toolpacks.core.define._docstrings import parse_docstring

ENGINE = (
    "toolpacks.core.call._gate",
    "toolpacks.core.call._outcome",
    "toolpacks.core._result",
    "toolpacks.core._jsonargs",
    "toolpacks.core.call._options",
    "toolpacks.core.call._watchdog",
    "toolpacks.core._secrets",
)
"""What a call needs and a definition does not: imported with the first call."""


def run(code: str, *, env: dict[str, str] | None = None, cwd: Path | None = None) -> object:
    """Run ``code`` in a fresh interpreter; what it prints last (a Python literal)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    environ.update(env or {})
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=environ,
        cwd=cwd,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return ast.literal_eval(done.stdout.strip().splitlines()[-1])


def modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter has after running ``code``."""
    found = run(f"{textwrap.dedent(code)}\nimport sys\nprint(sorted(sys.modules))")
    assert isinstance(found, list)
    return set(found)


def test_importing_tool_imports_neither_the_call_engine_nor_docstring_parser() -> None:
    """``from toolpacks import tool``: no gate, results, JSON, logging setup or parser yet."""
    loaded = modules_after("from toolpacks import tool")
    unexpected = {*ENGINE, "docstring_parser", "json", "importlib.metadata", "pydantic.fields"}
    assert loaded.isdisjoint(unexpected), sorted(loaded & unexpected)


def test_importing_tool_does_not_import_asyncio() -> None:
    """The asyncio module (with ssl, socket, subprocess) comes with the first call only."""
    loaded = modules_after("from toolpacks import tool")
    assert loaded.isdisjoint({"asyncio", "ssl", "socket", "subprocess"})


def test_defining_a_tool_with_a_plain_docstring_uses_no_docstring_parser() -> None:
    """A docstring that has no section in any style is the description as it is."""
    loaded = modules_after(
        """
        from toolpacks import tool

        @tool
        def add(a: int, b: int) -> int:
            '''Add two integers.'''
            return a + b

        assert add.description == "Add two integers."
        """
    )
    assert loaded.isdisjoint({*ENGINE, "docstring_parser"})


def test_a_parameter_section_loads_docstring_parser() -> None:
    """A Google ``Args:`` section is parsed (its descriptions move into the schema)."""
    loaded = modules_after(
        """
        from toolpacks import tool

        @tool
        def add(a: int) -> int:
            '''Add one.

            Args:
                a: The number.
            '''
            return a + 1

        assert add.input_schema["properties"]["a"]["description"] == "The number."
        assert add.description == "Add one."
        """
    )
    assert "docstring_parser" in loaded


@pytest.mark.parametrize("doc", [": :", "@", "x\n-\n:"])
def test_docstrings_docstring_parser_cannot_read_are_the_description(doc: str) -> None:
    """A docstring that makes docstring-parser fail is kept whole, not an error."""
    parsed = parse_docstring(doc)
    assert (parsed.description, parsed.params) == (doc.strip(), {})


def test_the_first_call_loads_the_engine_whichever_way_the_plan_was_made() -> None:
    """A plan made before any call (here directly) still finds the engine in place."""
    out = run(
        """
        import asyncio, sys
        from toolpacks import tool
        from toolpacks.core.call._plan import plan_of

        @tool
        def add(a: int, b: int) -> int:
            '''Add.'''
            return a + b

        before = "toolpacks.core.call._gate" in sys.modules
        plan_of(add)
        result = asyncio.run(add.invoke({"a": 1, "b": 2}))
        bad = asyncio.run(add.invoke('{"a": 1, "a": 2, "b": 2}'))
        print([before, result.value, bad.is_error, "toolpacks.core.call._gate" in sys.modules])
        """
    )
    assert out == [False, 3, True, True]


def test_the_general_path_alone_loads_the_engine() -> None:
    """``_invoke.invoke`` (a toolset's gatekept road) works as the very first call too."""
    out = run(
        """
        import asyncio
        from toolpacks import tool
        from toolpacks.core.call._invoke import invoke

        @tool
        def echo(text: str) -> str:
            '''Echo.'''
            return text

        async def allow(arguments, context):
            return None

        result = asyncio.run(invoke(echo, {"text": "hi"}, None, None, allow))
        print(repr(result.value))
        """
    )
    assert out == "hi"


def test_configuration_models_are_built_when_first_used() -> None:
    """Importing the configuration module builds no validator; loading a configuration does."""
    out = run(
        """
        from toolpacks.host.config._load import Config, load_config

        before = Config.__pydantic_complete__
        loaded = load_config({"agents": {"a": {"packs": ["x"]}}})
        print([before, Config.__pydantic_complete__, loaded.config.agents["a"].packs])
        """
    )
    assert out == [False, True, ["x"]]


def test_importing_host_imports_no_configuration_models() -> None:
    """``from toolpacks import Host``: pydantic's fields module and the config models wait."""
    loaded = modules_after("from toolpacks import Host")
    assert loaded.isdisjoint({"toolpacks.host.config._load", "pydantic.fields", "asyncio"})


def test_importing_host_imports_no_pack_engine_or_metadata_scan() -> None:
    """``from toolpacks import Host``: no call engine, pluggy, manifests, MCP SDK or metadata."""
    loaded = modules_after("from toolpacks import Host")
    unexpected = {"toolpacks.core.call._gate", "mcp", "importlib.metadata", "docstring_parser"}
    unexpected |= {"pluggy", "toolpacks.hookspecs", "toolpacks.packs.entrypoints._manifest"}
    assert loaded.isdisjoint(unexpected), sorted(loaded & unexpected)


COUNT_SCANS = """
import importlib.metadata
scans = []
real = importlib.metadata.entry_points
def counted(*args, **kwargs):
    scans.append(kwargs.get("group"))
    return real(*args, **kwargs)
importlib.metadata.entry_points = counted
from toolpacks import Host
Host({})
from pydantic.plugin import _loader
print([scans, sorted(_loader._plugins or {})])
"""


def _dist(site: Path, name: str, entry_points: str) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)


def test_pydantic_plugin_scan_is_spared_when_no_plugin_is_installed(tmp_path: Path) -> None:
    """With no ``pydantic`` entry point installed, pydantic never scans for plugins."""
    site = tmp_path / "site"
    _dist(site, "some_pack", "[toolpacks]\nsome = some_module\n")
    env = {"PYTHONPATH": str(site), "TOOLPACKS_CACHE_DIR": str(tmp_path / "cache")}
    env["TOOLPACKS_PACKS"] = ""
    assert run(COUNT_SCANS, env=env, cwd=tmp_path) == [[], []]


def test_installed_pydantic_plugins_still_load(tmp_path: Path) -> None:
    """With a ``pydantic`` entry point installed, pydantic scans and loads it as ever."""
    site = tmp_path / "site"
    _dist(site, "a_plugin", "[pydantic]\nmine = my_plugin:plugin\n")
    (site / "my_plugin.py").write_text(
        "class Plugin:\n"
        "    def new_schema_validator(self, *args, **kwargs):\n"
        "        return None, None, None\n"
        "plugin = Plugin()\n"
    )
    env = {"PYTHONPATH": str(site), "TOOLPACKS_CACHE_DIR": str(tmp_path / "cache")}
    env["TOOLPACKS_PACKS"] = ""
    scans, plugins = run(COUNT_SCANS, env=env, cwd=tmp_path)  # type: ignore[misc]
    assert scans == ["pydantic"]
    assert plugins == ["my_plugin:plugin"]
