"""Which modules ``from toolpacks import tool`` and ``from toolpacks import Host`` load (issue 35).

The import-cost targets (``tool`` within 1.2x of ``from pydantic import BaseModel``, ``Host``
within 1.5x) are measured by ``bench/import_ratio.py``; timing is no pass/fail test. What is
deterministic is which modules an import loads: these tests fail when a module that only a
call, a server or a configuration needs is imported by a definition or a host, and when the
number of toolpacks' own modules on either road grows past what it is now (raise the cap only
with a measurement from the bench).

``from toolpacks import Host`` loads the ``Host`` class and the pack record, nothing else of
toolpacks: building a toolset (``Host.toolset``), loading a pack, secrets and logging import
what they need where they run, so the host's import costs less than pydantic's.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys

CALL_ENGINE = {
    "toolpacks.core.call._invoke",
    "toolpacks.core.call._generators",
    "toolpacks.core.call._plan",
    "toolpacks.core.call._run",
    "toolpacks.core.call._threads",
    "toolpacks.core.call._gate",
    "toolpacks.core.call._outcome",
    "toolpacks.core.call._options",
    "toolpacks.core.call._watchdog",
    "toolpacks.core._result",
    "toolpacks.core._content",
    "toolpacks.core._jsonargs",
    "toolpacks.core._secrets",
    "toolpacks.core._logscrub",
}
"""What calling needs and defining does not."""

SERVING = {
    "mcp",
    "starlette",
    "uvicorn",
    "prometheus_client",
    "pluggy",
    "docstring_parser",
    "jsonschema",
    "re2",
    "importlib.metadata",
    "toolpacks.hookspecs",
    "toolpacks.mcp",
    "toolpacks.cli",
    "toolpacks.host.config._load",
    "toolpacks.host.credentials._vault",
}
"""Servers, plugin machinery, configuration models: neither road needs them at import."""

HEAVY_STDLIB = {"asyncio", "concurrent.futures", "ssl", "socket", "subprocess", "email", "http"}
"""Standard modules that cost milliseconds each; a definition needs none of them."""

BUILDING = {
    "toolpacks.core._tool",
    "toolpacks.core.define._definition",
    "toolpacks.core._hooks",
    "toolpacks.host._toolset",
    "toolpacks.host._assembly",
    "toolpacks.host._compose",
    "toolpacks.host._offerings",
    "toolpacks.host._approval",
    "toolpacks.host._host_hooks",
    "toolpacks.host._sources",
    "toolpacks.packs.entrypoints._loading",
    "toolpacks.packs.mcp._spec",
    "pydantic",
    "pydantic_core",
}
"""What building a toolset needs (tools and their schemas, its steps, pack loading): ``Host``
imports each in the method that uses it."""

RESULTS = {"toolpacks.core._result", "toolpacks.core._content", "mimetypes"}
RESULTS |= {"toolpacks.core.prompts._catalog", "toolpacks.core.prompts._prompt"}
RESULTS |= {"toolpacks.core.prompts._resource"}
"""What a call's result or an offered prompt needs: ``Toolset`` imports them when used."""

TOOL_CAP = 18
HOST_CAP = 8
TOOLSET_CAP = 29
"""toolpacks modules loaded now (18, 8 and 29): growth past these is a finding to measure."""


def loaded_by(statement: str) -> set[str]:
    """The modules a fresh interpreter holds after ``statement``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    done = subprocess.run(
        [sys.executable, "-c", f"{statement}\nimport sys\nprint(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return set(ast.literal_eval(done.stdout.strip().splitlines()[-1]))


def own(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m == "toolpacks" or m.startswith("toolpacks."))


def test_importing_tool_loads_no_call_engine_server_or_heavy_stdlib() -> None:
    """``from toolpacks import tool``: no engine, logging, json, threads or content types."""
    loaded = loaded_by("from toolpacks import tool")
    forbidden = CALL_ENGINE | SERVING | HEAVY_STDLIB | {"logging", "json", "mimetypes"}
    assert not loaded & forbidden, sorted(loaded & forbidden)


DEFINE = '''
from toolpacks import tool

@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''


def test_defining_a_tool_loads_no_call_engine_or_server() -> None:
    """A definition loads nothing of a call, a server or the content types.

    It builds pydantic validators (pydantic's plugin scan comes with the first one), but a
    plain tool returns no image, so base64 and mimetypes wait too.
    """
    loaded = loaded_by(DEFINE)
    forbidden = CALL_ENGINE | (SERVING - {"importlib.metadata"}) | {"logging", "json"}
    forbidden |= {"asyncio", "concurrent.futures", "ssl", "subprocess", "http", "mimetypes"}
    assert not loaded & forbidden, sorted(loaded & forbidden)


def test_importing_tool_loads_few_toolpacks_modules() -> None:
    """A module added to the definition road must be a decision, not an accident."""
    mine = own(loaded_by("from toolpacks import tool"))
    assert len(mine) <= TOOL_CAP, mine


def test_importing_host_loads_no_call_engine_server_or_configuration() -> None:
    """``from toolpacks import Host``: no gate, threads, asyncio, plugins or config models."""
    loaded = loaded_by("from toolpacks import Host")
    forbidden = CALL_ENGINE | SERVING | HEAVY_STDLIB
    assert not loaded & forbidden, sorted(loaded & forbidden)


def test_importing_host_loads_few_toolpacks_modules() -> None:
    """A module added to the host's import road must be a decision, not an accident."""
    mine = own(loaded_by("from toolpacks import Host"))
    assert len(mine) <= HOST_CAP, mine


def test_importing_host_loads_nothing_building_a_toolset_needs() -> None:
    """``from toolpacks import Host``: no tools, toolset steps, prompts, logging, json, pydantic.

    Each is imported by the ``Host`` method that uses it (``Host()``, ``toolset``, ``load``,
    ``hook``, ``close``); this keeps the host's import within 1.5x of pydantic's.
    """
    loaded = loaded_by("from toolpacks import Host")
    forbidden = BUILDING | RESULTS | {"logging", "json", "hashlib", "base64", "tomllib"}
    assert not loaded & forbidden, sorted(loaded & forbidden)


def test_importing_toolset_loads_no_results_content_or_prompts() -> None:
    """``from toolpacks import Toolset``: results, content types and prompts wait for a call."""
    loaded = loaded_by("from toolpacks import Toolset")
    forbidden = RESULTS | (CALL_ENGINE - {"toolpacks.core.call._options"}) | SERVING
    forbidden -= {"toolpacks.core._jsonargs"}  # the call options' argument limits
    assert not loaded & forbidden, sorted(loaded & forbidden)
    assert len(own(loaded)) <= TOOLSET_CAP, own(loaded)


HOST_AT_WORK = """
from toolpacks import Host, hookimpl, tool

@tool
def add(a: int, b: int) -> int:
    \"\"\"Add two integers.\"\"\"
    return a + b

class Pack:
    @hookimpl
    def register_tools(self, register):
        register(add)

host = Host({"agents": {"a": {"packs": ["p"]}}}, discover=False)
host.add_pack(Pack(), "p")
host.hook("before_invoke")(lambda tool: None)
toolset = host.toolset("a")
print(toolset.call_sync("add", {"a": 2, "b": 3}).content, toolset.prompts())
print(toolset.call_sync("nope").error.kind, host.shown_config()["agents"])
host.reload()
host.close()
"""


def test_a_host_imports_what_it_needs_when_it_needs_it() -> None:
    """In a fresh interpreter, every deferred import of ``Host`` and ``Toolset`` resolves.

    A host is built, given a pack and a hook, builds a toolset that calls a tool, answers an
    unknown one, shows its configuration, reloads and closes: each road imports its modules
    first here, not in a test process where another test imported them before.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    done = subprocess.run(
        [sys.executable, "-c", HOST_AT_WORK],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["5 []", "not_found {'a': {'packs': ['p']}}"]
