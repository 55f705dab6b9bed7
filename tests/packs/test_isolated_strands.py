"""Strands Agents' tools from an isolated pack, in a host whose own ``mcp`` strands refuses.

strands-agents pins ``mcp<2.2``; toolpacks' ``mcp`` extra needs ``mcp>=2.3``. The host keeps
its SDK; the pack's environment holds strands with its older ``mcp``, and toolpacks without
the extra: the child (``toolpacks serve --pack``) answers over stdio with toolpacks' own
protocol modules, so it needs no SDK of its own (the first test shows it with ``mcp``
unimportable). The strands test builds a real uv environment with strands-agents from the
package index (marked slow).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from toolpacks import Host
from toolpacks.packs.isolated._env import env_for

NO_SDK = '''
import runpy
import sys


class NoSdk:
    """Make the MCP SDK and its types unimportable, as where they are not installed."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("mcp", "mcp_types"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoSdk())
sys.argv = ["toolpacks", *sys.argv[1:]]
try:
    runpy.run_module("toolpacks", run_name="__main__", alter_sys=True)
finally:
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("mcp", "mcp_types"))
    print("sdk loaded:", loaded, file=sys.stderr)
'''

CALC = """
from toolpacks import hookimpl, tool

@tool(read_only=True)
def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b

@hookimpl
def register_tools(register):
    register(add)
"""

HELLO = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


def _calc_path(root: Path) -> Path:
    """A directory holding pack ``calc`` (its module and a dist-info naming its entry point)."""
    root.mkdir(parents=True)
    (root / "calc_pack.py").write_text(textwrap.dedent(CALC), encoding="utf-8")
    info = root / "toolpacks_calc-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toolpacks-calc\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text("[toolpacks]\ncalc = calc_pack\n", encoding="utf-8")
    return root


def test_serve_pack_answers_over_stdio_without_the_mcp_sdk(tmp_path: Path) -> None:
    """``toolpacks serve --pack`` (an isolated child) serves where ``mcp`` cannot be imported."""
    script = tmp_path / "no_sdk.py"
    script.write_text(textwrap.dedent(NO_SDK), encoding="utf-8")
    path = _calc_path(tmp_path / "site")
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
        },
    ]
    done = subprocess.run(
        [sys.executable, str(script), "serve", "--pack", "calc", "--path", str(path)],
        input="".join(json.dumps(line) + "\n" for line in lines).encode(),
        capture_output=True,
        env={**os.environ, "TOOLPACKS_SERVE_GRACE": "5"},
        timeout=60,
        check=False,
    )
    stderr = done.stderr.decode()
    assert done.returncode == 0, stderr[-2000:]
    assert "sdk loaded: []" in stderr
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
    assert answers[1]["result"]["serverInfo"]["name"] == "toolpacks:calc"
    assert [t["name"] for t in answers[2]["result"]["tools"]] == ["add"]
    assert answers[3]["result"]["structuredContent"] == {"result": 5}
    assert answers[3]["result"]["isError"] is False


def test_serve_agent_over_stdio_without_the_mcp_sdk(tmp_path: Path) -> None:
    """``toolpacks serve --agent`` over stdio also serves where ``mcp`` cannot be imported."""
    script = tmp_path / "no_sdk.py"
    script.write_text(textwrap.dedent(NO_SDK), encoding="utf-8")
    path = _calc_path(tmp_path / "site")
    config = tmp_path / "toolpacks.toml"
    config.write_text('[agents.calc]\npacks = ["calc"]\n', encoding="utf-8")
    call = {"name": "add", "arguments": {"a": 4, "b": 5}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
    ]
    done = subprocess.run(
        [sys.executable, str(script), "serve", "--config", str(config), "--agent", "calc"],
        input="".join(json.dumps(line) + "\n" for line in lines).encode(),
        capture_output=True,
        env={**os.environ, "TOOLPACKS_SERVE_GRACE": "5", "PYTHONPATH": str(path)},
        timeout=60,
        check=False,
    )
    stderr = done.stderr.decode()
    assert done.returncode == 0, stderr[-2000:]
    assert "sdk loaded: []" in stderr
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
    assert answers[2]["result"]["structuredContent"] == {"result": 9}


def test_serve_over_http_still_needs_the_mcp_sdk(tmp_path: Path) -> None:
    """``toolpacks serve --http`` without the SDK fails with the one line saying what to install."""
    script = tmp_path / "no_sdk.py"
    script.write_text(textwrap.dedent(NO_SDK), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), "serve", "--http", "127.0.0.1:0", "--agent", "a"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "toolpacks[http]" in done.stderr  # the http extra brings the SDK and the server


STRANDY = """
from importlib import metadata

from strands import tool as strands_tool
from toolpacks import hookimpl, tool


@strands_tool
def word_count(text: str) -> int:
    '''Count the words of a text.'''
    return len(text.split())


@tool(read_only=True)
def count_words(text: str) -> dict:
    '''Count the words of a text with a Strands Agents tool.'''
    return {
        "words": word_count(text),
        "strands_tool": word_count.tool_spec["name"],
        "mcp": metadata.version("mcp"),
    }


@hookimpl
def register_tools(register):
    register(count_words)
"""

PYPROJECT = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "toolpacks-strandy"
version = "1.0"
dependencies = ["toolpacks", "strands-agents>=1.13"]

[project.entry-points.toolpacks]
strandy = "strandy_pack"

[tool.hatch.build.targets.wheel]
packages = ["strandy_pack"]
"""


def _strandy(root: Path) -> Path:
    """Pack ``strandy``: its requirements are toolpacks and strands-agents (so ``mcp<2.2``)."""
    package = root / "strandy_pack"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(STRANDY), encoding="utf-8")
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    return root


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:2])


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_strands_tools_from_an_isolated_pack_in_a_host_with_a_newer_mcp(tmp_path: Path) -> None:
    """A strands tool answers through the host; the host has mcp>=2.3, the pack's env mcp<2.2."""
    pack = _strandy(tmp_path / "toolpacks-strandy")
    config = tmp_path / "toolpacks.toml"
    config.write_text(
        f'[isolated.strandy]\nrequirement = "{pack}"\n\n[agents.writer]\npacks = ["strandy"]\n',
        encoding="utf-8",
    )
    with Host(config) as host:
        toolset = host.toolset("writer")
        [entry] = toolset.entries()
        result = asyncio.run(toolset.call(entry.exposed, {"text": "three little words"}))
    assert not result.is_error, result.content
    assert result.value["words"] == 3
    assert result.value["strands_tool"] == "word_count"
    assert _version(metadata.version("mcp")) >= (2, 3)
    assert _version(result.value["mcp"]) < (2, 2)
    python = env_for(str(pack), tmp_path).python
    child = subprocess.run(
        [str(python), "-c", "from importlib import metadata; print(metadata.version('mcp'))"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert _version(child.stdout.strip()) < (2, 2)
