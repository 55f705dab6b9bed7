"""Work per call is bounded, and a walk never stops the other calls from answering.

A pattern chosen by the model used to become a backtracking regular expression that held the
GIL for minutes: the whole server froze. Now matching is linear, each walk stops at a number
of entries and a number of seconds (settable in ``[packs.files]``) with a note naming the
limit, a cancelled call stops walking, and other calls answer while one walks.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from toolpacks import Host, Tool, ToolContext, ToolResult

import toolpacks_files
from toolpacks_files import FileTools, tools_from_config
from toolpacks_files import _walk as walk_module
from toolpacks_files import tools as tools_module

HOSTILE = ["*a" * 15 + "*b", "**/" + "*a" * 14 + "*b", "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"]
"""Each took the old regular expressions minutes (or much longer) per long name."""
CEILING = 30.0
"""Generous bound on every wait for readiness (never reached when things work)."""


def run(tool: Tool, arguments: dict[str, Any]) -> ToolResult:
    """Invoke a tool the way a host would, synchronously."""
    return asyncio.run(tool.invoke(arguments))


def by_name(tools: FileTools) -> dict[str, Tool]:
    """The tools of a ``FileTools``, by name."""
    return {t.name: t for t in tools.tools()}


@pytest.fixture
def long_names(tmp_path: Path) -> Path:
    """A root holding files whose 250-character names nearly match the hostile patterns."""
    root = tmp_path / "long"
    (root / "deep").mkdir(parents=True)
    for i in range(20):
        (root / f"{'a' * 240}{i:010d}").write_text("a\n", "utf-8")
        (root / "deep" / f"{'a' * 240}{i:010d}").write_text("a\n", "utf-8")
    return root


@pytest.fixture
def many(tmp_path: Path) -> Path:
    """A root of 30 files in 30 directories: d00/f.txt ... d29/f.txt."""
    root = tmp_path / "many"
    for i in range(30):
        (root / f"d{i:02d}").mkdir(parents=True)
        (root / f"d{i:02d}" / "f.txt").write_text("needle\n", "utf-8")
    return root


# -- linear matching, through the tools ----------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("pattern", HOSTILE)
def test_find_files_answers_hostile_patterns(long_names: Path, pattern: str) -> None:
    """find_files and search_text answer a backtracking-prone pattern over long names."""
    tools = by_name(FileTools(long_names))
    found = run(tools["find_files"], {"pattern": pattern})
    assert not found.is_error, found.content
    assert found.value.paths == []
    assert not found.value.truncated
    search = run(tools["search_text"], {"query": "a", "glob": pattern})
    assert not search.is_error, search.content
    assert search.value.matches == []


def test_overlong_pattern_is_a_tool_error(many: Path) -> None:
    """A pattern over the length limit is an error result naming the limit."""
    result = run(by_name(FileTools(many))["find_files"], {"pattern": "a" * 5000})
    assert result.is_error
    assert "1000 characters" in result.content


# -- entries and seconds ---------------------------------------------------------------------------


def test_entry_limit_stops_the_walk_with_a_note(many: Path) -> None:
    """Directories count as entries too: the walk stops at max_entries and says so."""
    tools = by_name(FileTools(many, max_entries=40))  # the 30 directories, then 10 files
    found = run(tools["find_files"], {"pattern": "**/*.txt"}).value
    assert found.truncated
    assert found.paths == [f"d{i:02d}/f.txt" for i in range(10)]
    assert "max_entries" in found.note
    assert "40 entries" in found.note
    search = run(tools["search_text"], {"query": "needle"}).value
    assert search.truncated
    assert "max_entries" in search.note


def test_time_limit_stops_the_walk_with_a_note(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A clock past max_seconds stops find_files and search_text with what they found."""
    ticks = iter(range(1_000_000))
    monkeypatch.setattr(walk_module, "monotonic", lambda: float(next(ticks)))
    tools = by_name(FileTools(many, max_seconds=5))
    found = run(tools["find_files"], {"pattern": "**"}).value
    assert found.truncated
    assert len(found.paths) < 30
    assert "max_seconds" in found.note
    assert "5 seconds" in found.note
    search = run(tools["search_text"], {"query": "needle"}).value
    assert search.truncated
    assert "max_seconds" in search.note


def test_limits_come_from_the_pack_settings(many: Path) -> None:
    """[packs.files] max_entries and max_seconds reach the tools; bad values are refused."""
    tools = tools_from_config({"root": str(many), "max_entries": 7, "max_seconds": 2.5})
    assert (tools.max_entries, tools.max_seconds) == (7, 2.5)
    defaults = tools_from_config({"root": str(many)})
    assert (defaults.max_entries, defaults.max_seconds) == (20_000, 10.0)
    for key, bad in [("max_entries", 0), ("max_entries", "many"), ("max_seconds", -1)]:
        with pytest.raises(ValueError, match=rf"\[packs.files\].*{key}"):
            tools_from_config({"root": str(many), key: bad})


def test_directories_that_cannot_match_are_not_entered(many: Path) -> None:
    """A pattern under one directory does not spend the entry budget elsewhere."""
    tools = by_name(FileTools(many, max_entries=35))  # the 30 directories, then d29 only
    found = run(tools["find_files"], {"pattern": "d29/*"})
    assert found.value.paths == ["d29/f.txt"]
    assert not found.value.truncated


# -- cancellation and responsiveness -------------------------------------------------------------


def test_a_cancelled_call_stops_walking(many: Path) -> None:
    """A walk whose call is cancelled stops at the next entry."""
    context = ToolContext()
    context.cancel()
    found = FileTools(many).find_files("**", context=context)
    assert found.paths == []
    assert found.truncated
    assert "cancelled" in found.note


class GatedWalk:
    """Replaces the tools' walk: after the first file, signals and waits to be released."""

    def __init__(self) -> None:
        self.walking = threading.Event()
        self.release = threading.Event()
        self.finished = threading.Event()
        self.after_release = 0
        self.real = tools_module.walk_files

    def __call__(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        try:
            for count, found in enumerate(self.real(*args, **kwargs)):
                if count == 1:  # the first file has been matched; hold the call here
                    self.walking.set()
                    assert self.release.wait(CEILING)
                if self.release.is_set():
                    self.after_release += 1
                yield found
        finally:
            self.finished.set()


@pytest.fixture
def gated(monkeypatch: pytest.MonkeyPatch) -> Iterator[GatedWalk]:
    """A gated walk installed in the tools module, released after the test."""
    gate = GatedWalk()
    monkeypatch.setattr(tools_module, "walk_files", gate)
    yield gate
    gate.release.set()


def reader(root: Path) -> Any:
    """The toolset of an agent using the files pack on ``root``, built by a real Host."""
    config = {
        "packs": {"files": {"root": str(root)}},
        "agents": {"reader": {"packs": ["files"]}},
    }
    host = Host(config, discover=False)
    host.add_pack(toolpacks_files, "files")
    return host.toolset("reader")


@pytest.mark.timeout(60)
def test_other_calls_answer_while_a_walk_runs(long_names: Path, gated: GatedWalk) -> None:
    """While find_files matches a hostile pattern, list_dir and read_file still answer."""
    toolset = reader(long_names)

    async def scenario() -> None:
        walk = asyncio.create_task(toolset.call("find_files", {"pattern": HOSTILE[0]}))
        assert await asyncio.to_thread(gated.walking.wait, CEILING)
        listing = await asyncio.wait_for(toolset.call("list_dir", {"path": "deep"}), CEILING)
        assert not listing.is_error, listing.content
        name = listing.value.entries[0].name
        text = await asyncio.wait_for(toolset.call("read_file", {"path": name}), CEILING)
        assert text.content == "a\n"
        assert not walk.done()  # the walk is still running: the answers came meanwhile
        gated.release.set()
        found = await asyncio.wait_for(walk, CEILING)
        assert not found.is_error, found.content
        assert found.value.paths == []

    asyncio.run(scenario())


@pytest.mark.timeout(60)
def test_cancelling_a_call_stops_its_walk(many: Path, gated: GatedWalk) -> None:
    """Once its call is cancelled, a walk running in its thread visits no further file."""
    toolset = reader(many)

    async def scenario() -> None:
        walk = asyncio.create_task(toolset.call("search_text", {"query": "needle"}))
        assert await asyncio.to_thread(gated.walking.wait, CEILING)
        walk.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await walk
        gated.release.set()
        assert await asyncio.to_thread(gated.finished.wait, CEILING)

    asyncio.run(scenario())
    assert gated.after_release <= 1  # the file in hand when released; then the walk stops
