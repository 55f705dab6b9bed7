"""Packs installed with a real installer into a real virtual environment.

A pack is written on the fly in another directory (as its own repository would be), built and
installed with ``uv pip install``, and then discovered by the CLI and the Python API of that
environment. One environment is shared by the whole session; each test installs and removes
only its own distributions.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import Venv

pytestmark = pytest.mark.slow

GREETER = """
from toolpacks import hookimpl, tool

@tool(tags=["greeting"])
def greet(name: str) -> str:
    '''Greet someone.'''
    return f"Hello, {name}!"

@hookimpl
def register_tools(register):
    register(greet)
"""

BROKEN = """
raise ImportError("this pack is broken on purpose")
"""

SEARCH = """
from toolpacks import hookimpl, tool

@tool
def search(query: str) -> str:
    '''Search {where}.'''
    return "{where}: " + query

@hookimpl
def register_tools(register):
    register(search)
"""

CALL_SCRIPT = """
import asyncio, json, sys
from toolpacks import Host
host = Host(discover=True)
toolset = host.toolset(packs=[sys.argv[1]])
result = asyncio.run(toolset.call(sys.argv[2], json.loads(sys.argv[3])))
print(json.dumps({"names": toolset.names(), "value": result.value, "error": result.is_error}))
"""


def _packs(listing: dict[str, list[dict[str, object]]]) -> dict[str, dict[str, object]]:
    return {str(p["name"]): p for p in listing["packs"]}


def test_installed_pack_is_discovered_used_and_forgotten(
    venv: Venv, pack_writer: Callable[..., Path], tmp_path: Path
) -> None:
    """An installed pack from elsewhere is listed and callable beside a broken one, then removed."""
    greeter = pack_writer("tp-greeter", "greeter", "tp_greeter", GREETER)
    broken = pack_writer("tp-broken", "broken", "tp_broken", BROKEN, version="0.3.0")
    venv.uv("install", str(greeter), str(broken))
    try:
        listed = _packs(venv.toolpacks_json("list", cwd=tmp_path))
        assert listed["greeter"]["status"] == "available"
        assert listed["greeter"]["distribution"] == "tp-greeter"
        assert listed["broken"]["status"] == "available"  # listing imports nothing

        detailed = venv.toolpacks_json("list", "--tools", cwd=tmp_path)
        packs = _packs(detailed)
        assert packs["greeter"]["status"] == "loaded"
        assert packs["greeter"]["tools"] == ["greeter.greet"]
        assert packs["broken"]["status"] == "failed"
        assert packs["broken"]["version"] == "0.3.0"
        assert "broken on purpose" in str(packs["broken"]["error"])

        script = tmp_path / "call.py"
        script.write_text(CALL_SCRIPT, encoding="utf-8")
        out = venv.run("python", str(script), "greeter", "greet", '{"name": "Ada"}', cwd=tmp_path)
        assert json.loads(out.stdout) == {
            "names": ["greet"],
            "value": "Hello, Ada!",
            "error": False,
        }

        called = venv.run(
            "toolpacks", "call", "greeter.greet", "--args", '{"name": "Bo"}', cwd=tmp_path
        )
        assert called.stdout.strip() == "Hello, Bo!"

        doctor = venv.run("toolpacks", "doctor", cwd=tmp_path, check=False)
        assert doctor.returncode == 1
        assert "broken on purpose" in doctor.stdout
    finally:
        venv.uv("uninstall", "tp-greeter", "tp-broken")
    after = _packs(venv.toolpacks_json("list", cwd=tmp_path))
    assert "greeter" not in after
    assert "broken" not in after


def test_two_installed_packs_clashing_on_a_tool_name(
    venv: Venv, pack_writer: Callable[..., Path], tmp_path: Path
) -> None:
    """Two real packs offering `search` fail the toolset naming both; `prefix` resolves it."""
    one = pack_writer("tp-web", "web", "tp_web", SEARCH.replace("{where}", "web"), version="2.1.0")
    two = pack_writer(
        "tp-docs", "docs", "tp_docs", SEARCH.replace("{where}", "docs"), version="0.9.0"
    )
    venv.uv("install", str(one), str(two))
    try:
        config = tmp_path / "toolpacks.toml"
        config.write_text(
            textwrap.dedent(
                """\
                [agents.strict]
                packs = ["web", "docs"]

                [agents.relaxed]
                packs = ["web", "docs"]
                on_conflict = "prefix"
                """
            ),
            encoding="utf-8",
        )
        failed = venv.run("toolpacks", "toolset", "strict", cwd=tmp_path, check=False)
        assert failed.returncode == 2
        assert "tp-web 2.1.0" in failed.stderr
        assert "tp-docs 0.9.0" in failed.stderr
        assert "on_conflict" in failed.stderr
        relaxed = venv.toolpacks_json("toolset", "relaxed", cwd=tmp_path)
        assert sorted(t["name"] for t in relaxed["tools"]) == ["docs_search", "web_search"]
    finally:
        venv.uv("uninstall", "tp-web", "tp-docs")


def test_two_distributions_declaring_one_pack_name_are_both_reported(
    venv: Venv, pack_writer: Callable[..., Path], tmp_path: Path
) -> None:
    """Two distributions declaring the pack `dup` are both reported as a clash, neither used."""
    one = pack_writer("tp-dup-one", "dup", "tp_dup_one", GREETER)
    two = pack_writer("tp-dup-two", "dup", "tp_dup_two", GREETER)
    venv.uv("install", str(one), str(two))
    try:
        listed = _packs(venv.toolpacks_json("list", cwd=tmp_path))
        assert listed["dup"]["status"] == "clash"
        assert "tp-dup-one" in str(listed["dup"]["error"])
        assert "tp-dup-two" in str(listed["dup"]["error"])
        doctor = venv.run("toolpacks", "doctor", cwd=tmp_path, check=False)
        assert doctor.returncode == 1
    finally:
        venv.uv("uninstall", "tp-dup-one", "tp-dup-two")


def test_scaffolded_pack_installs_and_its_own_tests_pass(venv: Venv, tmp_path: Path) -> None:
    """`toolpacks new` writes a repository that installs into a fresh venv and passes its tests."""
    venv.run("toolpacks", "new", "weather", "--dir", str(tmp_path / "toolpacks-weather"))
    repo = tmp_path / "toolpacks-weather"
    venv.uv("install", "-e", f"{repo}[test]")
    try:
        tests = venv.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=repo)
        assert "3 passed" in tests.stdout
        listed = _packs(venv.toolpacks_json("list", cwd=tmp_path))
        assert listed["weather"]["distribution"] == "toolpacks-weather"
        called = venv.run(
            "toolpacks", "call", "weather.greet", "--args", '{"name": "Ada"}', cwd=tmp_path
        )
        assert called.stdout.strip() == "Hello, Ada."
    finally:
        venv.uv("uninstall", "toolpacks-weather")
