"""An llm Toolbox is prepared once before its tools are listed (issue 36, turn-3 survivors).

llm's ``Toolbox.prepare()`` is where a toolbox sets itself up (opens a connection, adds tools
with ``add_tool``). toolpacks must call it, once, before reading the toolbox's tools, so tools
a toolbox adds in ``prepare`` are offered and its methods see a prepared instance; and a
``prepare`` that raises leaves that toolbox out, reported, while the plugin's other tools stay.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolpacks import Host

from ._llm_fixtures import write_llm_dist

PLUGIN = """
    import llm

    PREPARED = []

    class Db(llm.Toolbox):
        '''A database that needs setting up.'''

        def prepare(self):
            PREPARED.append(1)
            self.ready = True
            self.add_tool(llm.Tool.function(self._tables, name="Db_tables"))

        def _tables(self) -> str:
            '''The tables.'''
            return "users,orders"

        def status(self) -> str:
            '''Whether the database was prepared.'''
            return "ready" if getattr(self, "ready", False) else "not prepared"

    class Broken(llm.Toolbox):
        '''A toolbox whose setup fails.'''

        def prepare(self):
            raise RuntimeError("cannot connect")

        def ping(self) -> str:
            '''Answer.'''
            return "pong"

    def plain(text: str) -> str:
        '''Echo.'''
        return text

    @llm.hookimpl
    def register_tools(register):
        register(Db)
        register(Broken)
        register(plain)
"""


@pytest.fixture(autouse=True)
def _isolated(isolated: None) -> None:
    """Run in an empty working directory."""


@pytest.fixture
def host(site: Any) -> Host:
    module = site.module(PLUGIN)
    write_llm_dist(site.root, "llm-prep", "1.0", prep=module)
    made = Host({"llm": {"plugins": ["prep"]}}, path=[str(site.root)])
    made.module = module  # type: ignore[attr-defined]
    return made


def test_prepare_runs_once_before_the_tools_are_read(host: Host) -> None:
    import sys

    toolset = host.toolset(packs=["prep"])
    assert "Db_tables" in toolset.names(), toolset.names()
    assert asyncio.run(toolset.call("Db_status", {})).value == "ready"
    assert asyncio.run(toolset.call("Db_tables", {})).value == "users,orders"
    assert sys.modules[host.module].PREPARED == [1]  # type: ignore[attr-defined]


def test_a_prepare_that_raises_leaves_that_toolbox_out_reported(host: Host) -> None:
    toolset = host.toolset(packs=["prep"])
    assert "Broken_ping" not in toolset.names()
    assert "plain" in toolset.names()
    problems = host.load("prep").problems
    assert any("Broken" in p and "cannot connect" in p for p in problems), problems
