"""The command line fails closed: unknown agents, failed packs, untrusted and missing configs.

Every test runs the real CLI in a subprocess (``cli``), in a working directory with no
configuration, with an implicit untrusted ``toolpacks.toml``, or with ``--config`` (``place``).
"""

from __future__ import annotations

from typing import Any

import pytest

BROKEN = "raise RuntimeError('bad build: cannot reach the service')\n"

RESEARCHER = """
[agents.researcher]
packs = ["clock"]
"""


@pytest.fixture
def clock(site: Any, clock_source: str) -> None:
    """The clock pack (``clock.now``) is installed."""
    site.pack("clock", clock_source)


def failed_lines(stderr: str, pack: str = "broken") -> list[str]:
    """The log lines saying ``pack`` failed (not the error line of the command)."""
    return [
        line
        for line in stderr.splitlines()
        if f"'{pack}'" in line and not line.startswith("toolpacks: error: ")
    ]


# -- unknown agents -------------------------------------------------------------------------------


@pytest.mark.usefixtures("clock")
@pytest.mark.parametrize(
    "argv",
    [
        ["toolset", "reseacher"],
        ["call", "clock.now", "--agent", "reseacher"],
        ["call", "now", "--agent", "reseacher"],
        ["serve", "--agent", "reseacher"],
    ],
    ids=["toolset", "call-qualified", "call", "serve"],
)
def test_an_agent_no_configuration_defines_is_an_error(
    cli: Any, place: Any, argv: list[str]
) -> None:
    """A typo in an agent's name fails, with or without a configuration, before any output."""
    place.configure(RESEARCHER)
    done = cli.run(*place.argv(*argv), cwd=place.cwd, input="")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""  # `serve` has not spoken MCP
    line = cli.error_line(done.stderr)
    assert "'reseacher'" in line
    if place.kind == "none":
        assert "no configuration was found" in line
        assert str(place.cwd) in line  # where it looked
        assert "--config" in line
    else:
        assert "did you mean 'researcher'?" in done.stderr


@pytest.mark.usefixtures("clock")
def test_the_default_toolset_still_needs_no_configuration(cli: Any, place: Any) -> None:
    """Without an agent, every installed pack is used (no configuration needed)."""
    place.configure(RESEARCHER)
    done = cli.run(*place.argv("toolset", "--json"), cwd=place.cwd)
    assert done.returncode == 0, done.stderr
    assert '"qualified": "clock.now"' in done.stdout


# -- packs that failed to load --------------------------------------------------------------------


@pytest.mark.usefixtures("clock")
def test_an_agent_whose_pack_failed_fails(cli: Any, site: Any, place: Any) -> None:
    """A pack an agent names that failed to load fails the command, naming pack and cause."""
    site.pack("broken", BROKEN, version="0.3")
    place.configure('[agents.a]\npacks = ["clock", "broken"]\n')
    argv = ["toolset", "a"] if place.kind != "none" else ["call", "broken.anything"]
    done = cli.run(*place.argv(*argv), cwd=place.cwd)
    assert done.returncode == 2, done.stdout + done.stderr
    line = cli.error_line(done.stderr)
    assert "'broken'" in line
    assert "bad build" in line
    assert not failed_lines(done.stderr), done.stderr  # the error gives the cause, alone


@pytest.mark.configured
@pytest.mark.usefixtures("clock")
def test_optional_packs_may_fail(cli: Any, site: Any, place: Any) -> None:
    """``optional_packs`` lets an agent do without a pack that failed (one warning)."""
    site.pack("broken", BROKEN)
    place.configure('[agents.a]\npacks = ["clock"]\noptional_packs = ["broken"]\n')
    done = cli.run(*place.argv("toolset", "a"), cwd=place.cwd)
    assert done.returncode == 0, done.stderr
    assert "clock.now" in done.stdout
    assert len(failed_lines(done.stderr)) == 1, done.stderr


@pytest.mark.usefixtures("clock")
@pytest.mark.parametrize(
    ("argv", "status"),
    [
        (["toolset"], 0),
        (["list", "--tools"], 0),
        (["doctor"], 1),
        (["call", "now"], 0),
        (["serve"], 0),
    ],
    ids=["toolset", "list-tools", "doctor", "call", "serve"],
)
def test_each_failed_pack_is_logged_once(
    cli: Any, site: Any, place: Any, argv: list[str], status: int
) -> None:
    """``"*"`` skips a failed pack with one line, whatever the command.

    ``list --tools`` and ``doctor`` give it in their own output, with no warning on stderr.
    """
    site.pack("broken", BROKEN)
    place.configure(RESEARCHER)
    done = cli.run(*place.argv(*argv), cwd=place.cwd, input="")
    assert done.returncode == status, done.stdout + done.stderr
    assert (done.stdout + done.stderr).count("bad build") == 1, done.stdout + done.stderr
    reported_itself = argv[0] in ("list", "doctor")
    assert len(failed_lines(done.stderr)) == (0 if reported_itself else 1), done.stderr
    assert "left out of the toolset" not in done.stderr


@pytest.mark.usefixtures("clock")
def test_a_qualified_call_loads_only_its_pack(cli: Any, site: Any, place: Any) -> None:
    """``call clock.now`` never imports the broken pack, so nothing is logged about it."""
    site.pack("broken", BROKEN)
    place.configure(RESEARCHER)
    done = cli.run(*place.argv("call", "clock.now"), cwd=place.cwd)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "12:00 UTC"
    assert failed_lines(done.stderr) == []


# -- untrusted configuration ----------------------------------------------------------------------

CAPABILITY = """
[agents.a]
packs = ["clock"]

[settings]
expose_errors = true
"""


@pytest.mark.configured
@pytest.mark.usefixtures("clock")
@pytest.mark.parametrize("argv", [["toolset", "a"], ["call", "clock.now"], ["toolset"]])
def test_an_untrusted_configuration_that_grants_capability_is_refused(
    cli: Any, place: Any, argv: list[str]
) -> None:
    """Found in the directory, ``[settings]`` needs ``toolpacks trust``; passed, it is trusted."""
    place.configure(CAPABILITY)
    done = cli.run(*place.argv(*argv), cwd=place.cwd)
    if place.kind == "explicit":
        assert done.returncode == 0, done.stderr
        return
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    line = cli.error_line(done.stderr)
    assert "toolpacks.toml" in line
    assert "settings" in line
    assert "toolpacks trust" in done.stderr
    trusted = cli.run("trust", cwd=place.cwd)
    assert trusted.returncode == 0, trusted.stderr
    again = cli.run(*argv, cwd=place.cwd)
    assert again.returncode == 0, again.stderr


@pytest.mark.configured
@pytest.mark.usefixtures("clock")
def test_an_untrusted_configuration_may_select_packs(cli: Any, place: Any) -> None:
    """Agents, ``packs.disabled`` and ``packs.priority`` need no trust."""
    place.configure('[packs]\ndisabled = ["other"]\n' + RESEARCHER)
    done = cli.run(*place.argv("toolset", "researcher"), cwd=place.cwd)
    assert done.returncode == 0, done.stderr
    assert "clock.now" in done.stdout


# -- --config -------------------------------------------------------------------------------------

COMMANDS = [
    ["list"],
    ["list", "--tools"],
    ["show", "clock"],
    ["toolset"],
    ["call", "clock.now"],
    ["doctor"],
    ["serve"],
    ["lock"],
    ["new", "weather"],
    ["new-tool", "weather"],
    ["trust"],
]


@pytest.mark.usefixtures("clock")
@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_config_naming_a_missing_file_is_an_error(cli: Any, tmp_path: Any, argv: list[str]) -> None:
    """``--config missing.toml`` fails every command, even with a toolpacks.toml at hand."""
    work = tmp_path / "project"
    work.mkdir()
    (work / "toolpacks.toml").write_text(RESEARCHER, encoding="utf-8")
    for args in (["--config", "missing.toml", *argv], [*argv, "--config", "missing.toml"]):
        done = cli.run(*args, cwd=work, input="")
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stdout == ""
        line = cli.error_line(done.stderr)
        assert line == "toolpacks: error: --config missing.toml: no such file"
    assert sorted(p.name for p in work.iterdir()) == ["toolpacks.toml"]  # nothing was created


def test_list_with_an_unreadable_config_is_an_error(cli: Any, place: Any) -> None:
    """``list`` reads the configuration it is given; a broken one is an error, not ignored."""
    place.configure("[agents.a\n")
    done = cli.run(*place.argv("list"), cwd=place.cwd)
    if place.kind == "explicit":
        assert done.returncode == 2
        assert "invalid TOML" in cli.error_line(done.stderr)
    else:  # found implicitly, `list` stays cheap; `doctor` reports it
        assert done.returncode == 0, done.stderr


# -- how errors read ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["call"], "the following arguments are required: name"),
        (["lsit"], "invalid choice: 'lsit'"),
        (["toolset", "--bogus"], "unrecognized arguments: --bogus"),
        (["new", "9lives"], "pack name '9lives' is invalid"),
        (["new-tool", "bad name"], "'bad name' is not a valid tool name"),
        (["show", "nowhere.tool"], "no pack or tool named 'nowhere.tool'"),
        (["call", "nowhere.tool"], "no tool named 'nowhere.tool'"),
    ],
)
def test_every_error_reads_toolpacks_error(
    cli: Any, place: Any, argv: list[str], expected: str
) -> None:
    """Usage errors, invalid names and unknown tools: ``toolpacks: error: ...``, exit 2."""
    place.configure(RESEARCHER)
    done = cli.run(*place.argv(*argv), cwd=place.cwd)
    assert done.returncode == 2, done.stdout + done.stderr
    assert expected in cli.error_line(done.stderr)


@pytest.mark.configured
def test_an_unknown_key_gets_a_suggestion(cli: Any, place: Any) -> None:
    """An unknown configuration key is one error line, then a did-you-mean hint."""
    place.configure('[agents.a]\ninclude_tag = ["read"]\n')
    done = cli.run(*place.argv("toolset", "a"), cwd=place.cwd)
    assert done.returncode == 2
    line = cli.error_line(done.stderr)
    assert "agents.a.include_tag: unknown key" in line
    hint = done.stderr.splitlines()[1]
    assert hint.startswith("  agents.a.include_tag: did you mean 'include_tags'"), done.stderr


def test_an_unexpected_exception_is_short(cli: Any, tmp_path: Any) -> None:
    """A bug's exception reads ``toolpacks: error: unexpected ...`` and points to --debug."""
    boom = (
        "import sys, runpy\n"
        "import toolpacks.cli._commands as c\n"
        "def fail(args): raise KeyError('oops')\n"
        "c.cmd_list.__code__ = fail.__code__\n"
        "sys.argv = ['toolpacks', *sys.argv[1:]]\n"
        "runpy.run_module('toolpacks', run_name='__main__')\n"
    )
    done = cli.run("list", cwd=tmp_path, python=("-c", boom))
    assert done.returncode == 2
    line = cli.error_line(done.stderr)
    assert line == "toolpacks: error: unexpected KeyError: 'oops' (run with --debug for details)"
    debug = cli.run("--debug", "list", cwd=tmp_path, python=("-c", boom))
    assert "Traceback (most recent call last)" in debug.stderr
