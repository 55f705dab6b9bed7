"""``toolpacks doctor`` finds names that match nothing, and resolved conflicts stay quiet.

Through the real CLI in a subprocess, in each kind of working directory (``place``); an agent
needs a configuration, so most checks run where there is one.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

ALLOWED = """
    from toolpacks import hookimpl, tool

    @tool(tags=["secret"], allowed_agents=["reseacher"])
    def peek() -> str:
        '''Peek at a secret.'''
        return "peeked"

    @hookimpl
    def register_tools(register):
        register(peek)
"""


@pytest.fixture
def clock(site: Any, clock_source: str) -> None:
    """The clock pack: ``clock.now``, tagged ``time`` and ``read``."""
    site.pack("clock", clock_source)


def doctor(cli: Any, place: Any, config: str) -> tuple[int, dict[str, Any], str]:
    """Configure, run ``doctor --json``; the status, the report and stderr."""
    place.configure(config)
    done = cli.run(*place.argv("doctor", "--json"), cwd=place.cwd)
    assert "Traceback" not in done.stderr
    return done.returncode, json.loads(done.stdout), done.stderr


def messages(report: dict[str, Any], level: str, topic: str) -> list[str]:
    return [f["message"] for f in report["findings"] if (f["level"], f["topic"]) == (level, topic)]


@pytest.mark.configured
@pytest.mark.usefixtures("clock")
def test_a_tag_typo_is_an_error(cli: Any, place: Any) -> None:
    """``include_tags = ["raed"]``: the toolset is refused, with a did-you-mean, said once."""
    status, report, _ = doctor(
        cli, place, '[agents.a]\npacks = ["clock"]\ninclude_tags = ["raed"]\n'
    )
    assert status == 1
    assert not report["ok"]
    (error,) = messages(report, "error", "agent a")
    assert "include_tags names tag(s) 'raed' that no tool" in error
    assert "did you mean 'read'?" in error
    assert messages(report, "warning", "agent a") == []


@pytest.mark.configured
@pytest.mark.usefixtures("clock")
def test_filters_that_match_nothing_are_warnings(cli: Any, site: Any, place: Any) -> None:
    """An exclude of a tool the agent never has: a warning, exit 0."""
    site.pack("other", ALLOWED)
    config = (
        '[agents.a]\npacks = ["clock"]\nexclude = ["other.peek"]\n'
        '[agents.reseacher]\npacks = ["other"]\n'
    )
    status, report, _ = doctor(cli, place, config)
    assert status == 0, report
    found = messages(report, "warning", "agent a")
    assert any("exclude entry 'other.peek' matches no tool" in m for m in found)


@pytest.mark.configured
@pytest.mark.usefixtures("clock")
def test_an_unknown_pack_gets_a_suggestion_not_a_typosquat_warning(cli: Any, place: Any) -> None:
    """``packs = ["clokc"]`` is the user's typo: did you mean 'clock'? (not blamed on clock)."""
    status, report, _ = doctor(cli, place, '[agents.a]\npacks = ["clokc"]\n')
    assert status == 1
    (error,) = messages(report, "error", "agent a")
    assert "clokc" in error
    assert "did you mean 'clock'?" in error
    assert not any("typosquat" in f["message"] for f in report["findings"])


@pytest.mark.configured
@pytest.mark.usefixtures("clock")
def test_an_unknown_key_gets_a_suggestion(cli: Any, place: Any) -> None:
    """A misspelt key is a configuration error with the key it probably meant."""
    status, report, _ = doctor(cli, place, '[agents.a]\npacks = ["clock"]\nexclude_tag = ["x"]\n')
    assert status == 1
    (error,) = messages(report, "error", "config")
    assert "agents.a.exclude_tag: unknown key" in error
    assert "agents.a.exclude_tag: did you mean 'exclude_tags'" in error


@pytest.mark.configured
@pytest.mark.usefixtures("clock")
def test_a_tool_allowed_to_an_unknown_agent_gets_a_suggestion(
    cli: Any, site: Any, place: Any
) -> None:
    """``allowed_agents = ["reseacher"]`` when the configuration has ``researcher``."""
    site.pack("other", ALLOWED)
    status, report, _ = doctor(cli, place, '[agents.researcher]\npacks = ["clock", "other"]\n')
    assert status == 0, report
    (warning,) = messages(report, "warning", "pack other")
    assert "'other.peek' is allowed to agent 'reseacher'" in warning
    assert "did you mean 'researcher'?" in warning


@pytest.mark.configured
@pytest.mark.usefixtures("clock")
def test_the_human_report_shows_suggestions(cli: Any, place: Any) -> None:
    """Without --json: one line per finding, and "problems found"."""
    place.configure('[agents.a]\npacks = ["clock"]\ninclude_tags = ["tiem"]\n')
    done = cli.run(*place.argv("doctor"), cwd=place.cwd)
    assert done.returncode == 1
    assert "error: agent a: " in done.stdout
    assert "include_tags names tag(s) 'tiem'" in done.stdout
    assert done.stdout.count("did you mean 'time'?") == 1
    assert done.stdout.rstrip().endswith("problems found")


def test_doctor_without_configuration(cli: Any, site: Any, clock_source: str, place: Any) -> None:
    """With no configuration and healthy packs, doctor finds nothing wrong."""
    site.pack("clock", clock_source)
    place.configure("[packs]\n")
    done = cli.run(*place.argv("doctor"), cwd=place.cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "error:" not in done.stdout
    # The venv's own example packs are installed but not allowed here: warnings.
    assert done.stdout.splitlines()[-1] in ("ok: no problems found", "ok (with warnings)")


# -- resolved conflicts ---------------------------------------------------------------------------

FIRST = """
[agents.a]
packs = ["clock", "clock2"]
on_conflict = "first"
"""


@pytest.fixture
def two_clocks(site: Any, clock_source: str) -> None:
    """Two packs offering ``now``."""
    site.pack("clock", clock_source)
    site.pack("clock2", clock_source)


@pytest.mark.configured
@pytest.mark.usefixtures("two_clocks")
def test_a_resolved_conflict_is_quiet_unless_verbose(cli: Any, place: Any) -> None:
    """``on_conflict = "first"`` picks a winner silently; ``--verbose`` says which."""
    place.configure(FIRST)
    for argv in (["toolset", "a"], ["call", "now", "--agent", "a"]):
        quiet = cli.run(*place.argv(*argv), cwd=place.cwd)
        assert quiet.returncode == 0, quiet.stderr
        assert quiet.stderr == ""
        for verbose in (["--verbose", *argv], [*argv, "--verbose"]):
            loud = cli.run(*place.argv(*verbose), cwd=place.cwd)
            assert loud.returncode == 0, loud.stderr
            (line,) = loud.stderr.splitlines()
            assert "'now'" in line
            assert "kept clock.now" in line


@pytest.mark.configured
@pytest.mark.usefixtures("two_clocks")
def test_doctor_reports_a_resolved_conflict(cli: Any, place: Any) -> None:
    """``doctor`` lists the conflict a policy resolved, as a note (exit 0)."""
    place.configure(FIRST)
    done = cli.run(*place.argv("doctor"), cwd=place.cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "info: agent a: conflict resolved: tool name 'now': kept clock.now" in done.stdout
    assert "kept" not in done.stderr
    assert "error:" not in done.stdout
    assert not any(line.startswith("warning: agent") for line in done.stdout.splitlines())
