"""What a new user saw twice, or oddly, on a first run of the command line (issue 26).

A suggestion is printed once, a pack that failed is reported once per command (by the command
itself when it lists packs, else by one warning), counts agree with their nouns, the tour
prints whole definitions and no ``None None``, and ``/mcp`` with several agents says where
each one is.
"""

from __future__ import annotations

import asyncio
import json
import re
import runpy
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from toolpacks.cli._main import main

ROOT = Path(__file__).resolve().parents[2]
BROKEN = "raise RuntimeError('bad build: cannot reach the service')\n"
CAUSE = "bad build: cannot reach the service"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the CLI in-process; returns the exit status, stdout and stderr."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def config(tmp_path: Path) -> Callable[[str], str]:
    """Write a configuration file; returns its path for ``--config``."""

    def write(text: str) -> str:
        path = tmp_path / "toolpacks.toml"
        path.write_text(text, encoding="utf-8")
        return str(path)

    return write


# -- "did you mean" once --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [["toolset", "reseacher"], ["call", "now", "--agent", "reseacher"]],
    ids=["toolset", "call"],
)
def test_a_suggestion_is_printed_once(
    site: Any,
    clock_source: str,
    config: Callable[[str], str],
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
) -> None:
    """A misspelt agent gets one "did you mean", not one in the message and one below it."""
    site.pack("clock", clock_source)
    path = config('[agents.researcher]\npacks = ["clock"]\n')
    status, _, err = run(capsys, "--config", path, *argv)
    assert status == 2
    assert err.count("did you mean 'researcher'?") == 1, err


def test_a_suggestion_in_the_hints_only_is_kept(
    site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hint the message does not already hold is still printed (``show clok``)."""
    site.pack("clock", clock_source)
    status, _, err = run(capsys, "show", "clok")
    assert status == 2
    assert err.count("did you mean 'clock'?") == 1, err


# -- a pack failure once --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "status"),
    [
        (["list", "--tools"], 0),
        (["list", "--tools", "--json"], 0),
        (["doctor"], 1),
        (["show", "broken"], 1),
        (["toolset"], 0),
        (["toolset", "strict"], 2),
        (["call", "broken.anything"], 2),
        (["call", "now", "--agent", "strict"], 2),
        (["call", "now"], 0),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else str(v),
)
def test_a_failed_pack_is_reported_once(
    site: Any,
    clock_source: str,
    config: Callable[[str], str],
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    status: int,
) -> None:
    """Whatever the command, the cause of a failed pack appears once in all it prints.

    Commands that list packs (``list --tools``, ``doctor``, ``show``) report it themselves;
    a command failing because of it says so in its error; otherwise one warning says it.
    """
    site.pack("clock", clock_source)
    site.pack("broken", BROKEN)
    path = config('[agents.strict]\npacks = ["clock", "broken"]\n')
    done, out, err = run(capsys, "--config", path, *argv)
    assert done == status, out + err
    assert (out + err).count(CAUSE) == 1, out + err


# -- counts ---------------------------------------------------------------------------------------


def test_one_tool_is_one_tool(
    site: Any, clock_source: str, config: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``toolset`` with one tool says "1 tool", not "1 tools"."""
    site.pack("clock", clock_source)
    path = config('[agents.solo]\npacks = ["clock"]\n')
    status, out, _ = run(capsys, "--config", path, "toolset", "solo")
    assert status == 0
    assert "toolset for agent solo: 1 tool\n" in out


def test_counted_agrees_with_its_number() -> None:
    """The helper behind every count on the command line."""
    from toolpacks.cli._errors import counted

    assert [counted(n, "tool") for n in (0, 1, 2)] == ["0 tools", "1 tool", "2 tools"]


# -- the tour -------------------------------------------------------------------------------------


@pytest.fixture
def tour_output(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    """What ``examples/tour.py`` prints, run from the repository root as its docstring says."""
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("TOOLPACKS_PACKS")  # the example packs of plugins/ may load
    monkeypatch.setattr(sys, "argv", [str(ROOT / "examples" / "tour.py")])
    runpy.run_path(str(ROOT / "examples" / "tour.py"), run_name="__main__")
    return capsys.readouterr().out


def test_the_tour_names_where_each_pack_comes_from(tour_output: str) -> None:
    """A pack without a distribution (the file tools) shows its source, never ``None None``."""
    assert "None" not in tour_output.split("== toolset", 1)[0], tour_output
    assert re.search(r"^\s+local\s+available\s+file-based tools", tour_output, re.M), tour_output


def test_the_tour_prints_a_whole_definition(tour_output: str) -> None:
    """The OpenAI definition it shows is complete JSON, not cut off after 600 characters."""
    section = tour_output.split("== OpenAI definition of one tool\n", 1)[1]
    text = section.split("\n\n==", 1)[0]
    definition = json.loads(text)
    assert definition["type"] == "function"
    assert "parameters" in definition["function"]


def test_the_tour_prints_whole_results(tour_output: str) -> None:
    """Each JSON result it prints is whole (no cut at 400 characters) and parses."""
    results = re.findall(r"-> ok\n  (\{.*)$", tour_output, re.M)
    assert len(results) >= 3, tour_output
    for text in results:
        json.loads(text)


# -- /mcp with several agents ---------------------------------------------------------------------


@pytest.fixture
def two_agents(pack_of: Callable[..., Any]) -> Iterator[Any]:
    """A host with one in-process pack ``calc`` and two agents, ``alpha`` and ``beta``."""
    from toolpacks import Host, tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    config = {"agents": {"alpha": {"packs": ["calc"]}, "beta": {"packs": ["calc"]}}}
    with Host(config, discover=False) as built:
        built.add_pack(pack_of(add), name="calc")
        yield built


def test_bare_mcp_with_several_agents_names_their_paths(two_agents: Any) -> None:
    """``POST /mcp`` with two agents is 404 with a message naming each agent's endpoint."""
    from toolpacks.mcp import http_app

    async def main() -> httpx.Response:
        transport = httpx.ASGITransport(app=http_app(two_agents, ["alpha", "beta"]))
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
            return await c.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})

    answer = asyncio.run(asyncio.wait_for(main(), 60))
    assert answer.status_code == 404
    message = answer.json()["error"]["message"]
    assert "/agents/alpha/mcp" in message
    assert "/agents/beta/mcp" in message
