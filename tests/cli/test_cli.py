"""The ``toolpacks`` command line, run in-process."""

from __future__ import annotations

import builtins
import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from toolpacks import __version__
from toolpacks.cli._main import COMMANDS, main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the CLI; returns the exit status, stdout and stderr."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


# -- basics -------------------------------------------------------------------------------------


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    """--version prints the version and exits 0."""
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"toolpacks {__version__}"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_help_has_an_example(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``toolpacks COMMAND --help`` ends with an example invocation."""
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "example:" in out
    assert f"toolpacks {command}" in out.split("example:", 1)[1]


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    """Without a command, the help (with examples) is printed."""
    status, out, _ = run(capsys)
    assert status == 0
    assert "examples:" in out


# -- list ---------------------------------------------------------------------------------------


def test_list_reads_metadata_only(
    site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``list`` shows installed packs with status and distribution without importing them."""
    module = site.pack("clock", clock_source, version="1.4")
    status, out, _ = run(capsys, "list")
    assert status == 0
    assert "clock" in out
    assert "available" in out
    assert "toolpacks-clock 1.4" in out
    assert not hasattr(builtins, "CLI_PACK_IMPORTED")
    assert module not in sys.modules


def test_list_json_is_stable(
    site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``list --json`` gives one object per pack with fixed keys."""
    module = site.pack("clock", clock_source)
    status, out, _ = run(capsys, "list", "--json")
    assert status == 0
    (row,) = [p for p in json.loads(out)["packs"] if p["name"] == "clock"]
    assert row == {
        "name": "clock",
        "distribution": "toolpacks-clock",
        "version": "1.0",
        "module": module,
        "status": "available",
        "error": None,
        "source": "entry_point",
        "alias_of": None,
    }


def test_list_shows_disabled_and_config_packs(
    site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``list`` applies ``[packs] disabled`` and shows aliases and MCP servers of the config."""
    site.pack("clock", clock_source)
    site.pack("clock2", clock_source)
    Path("toolpacks.toml").write_text(
        '[packs]\ndisabled = ["clock2"]\n\n[packs.tokyo]\npack = "clock"\n\n'
        '[mcp_servers.remote]\ncommand = "srv"\n',
        encoding="utf-8",
    )
    _status, out, _ = run(capsys, "list", "--json")
    rows = {p["name"]: p for p in json.loads(out)["packs"]}
    assert rows["clock2"]["status"] == "disabled"
    assert rows["tokyo"]["source"] == "alias"
    assert rows["tokyo"]["alias_of"] == "clock"
    assert rows["remote"]["source"] == "mcp"


def test_list_tools_imports_and_shows_qualified_names_and_tags(
    site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``list --tools`` loads packs and lists tools with qualified names and tags."""
    site.pack("clock", clock_source)
    status, out, _ = run(capsys, "list", "--tools")
    assert status == 0
    assert "clock.now  [read, time]" in out
    status, out, _ = run(capsys, "list", "--tools", "--json")
    data = json.loads(out)
    row = {"name": "clock.now", "tags": ["read", "time"], "scopes": [], "credentials": []}
    assert row in data["tools"]
    (pack,) = [p for p in data["packs"] if p["name"] == "clock"]
    assert pack["status"] == "loaded"
    assert pack["tools"] == ["clock.now"]


# -- show ---------------------------------------------------------------------------------------


def test_show_pack_redacts_secrets(
    site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``show PACK --json`` gives the pack with its settings, secrets redacted."""
    site.pack("clock", clock_source)
    Path("toolpacks.toml").write_text(
        '[packs.clock]\napi_key = "sk-abcdef"\nregion = "eu"\n', encoding="utf-8"
    )
    assert run(capsys, "trust")[0] == 0  # untrusted, [packs.clock] would be withheld
    status, out, _ = run(capsys, "show", "clock", "--json")
    assert status == 0
    data = json.loads(out)
    assert data["settings"] == {"api_key": "****", "region": "eu"}
    assert data["tools"] == ["clock.now"]
    assert "sk-abcdef" not in out
    status, out, _ = run(capsys, "show", "clock")
    assert "setting api_key = '****'" in out
    assert "sk-abcdef" not in out


def test_show_tool(site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``show pack.tool --json`` gives its description, tags and input schema."""
    site.pack("clock", clock_source)
    status, out, _ = run(capsys, "show", "clock.now", "--json")
    assert status == 0
    data = json.loads(out)
    assert data["name"] == "clock.now"
    assert data["description"] == "Tell the time in a zone."
    assert data["tags"] == ["read", "time"]
    assert data["input_schema"]["properties"]["zone"]["description"] == "An IANA time-zone name."


def test_show_unknown_is_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    """``show`` of an unknown name fails with one line and exit 2."""
    status, _out, err = run(capsys, "show", "nope")
    assert status == 2
    assert err.count("\n") == 1
    assert "no pack or tool named 'nope'" in err


# -- toolset and call ---------------------------------------------------------------------------


AGENTS = """
[agents.timekeeper]
packs = ["clock"]

[agents.nobody]
packs = ["clock"]
exclude_tags = ["time"]
"""


def test_toolset_json(site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``toolset AGENT --json`` lists the agent's tools with exposed and qualified names."""
    site.pack("clock", clock_source)
    Path("toolpacks.toml").write_text(AGENTS, encoding="utf-8")
    status, out, _ = run(capsys, "toolset", "timekeeper", "--json")
    assert status == 0
    assert json.loads(out) == {
        "agent": "timekeeper",
        "tools": [
            {
                "name": "now",
                "qualified": "clock.now",
                "pack": "clock",
                "tags": ["read", "time"],
                "require_approval": False,
            }
        ],
        "left_out": {},  # what the agent's selection removed, and by which key (issue 35)
    }
    status, out, _ = run(capsys, "toolset", "nobody")
    assert "0 tools" in out


def test_toolset_format(site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``toolset --format openai`` prints provider definitions."""
    site.pack("clock", clock_source)
    status, out, _ = run(capsys, "toolset", "--format", "openai")
    assert status == 0
    assert "now" in out


def test_call_prints_result(
    site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``call`` runs a tool by qualified name and prints its content; exit 0."""
    site.pack("clock", clock_source)
    status, out, _ = run(capsys, "call", "clock.now", "--args", '{"zone": "Asia/Tokyo"}')
    assert (status, out.strip()) == (0, "12:00 Asia/Tokyo")


def test_call_error_result_exits_1(
    site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An error result exits 1 and prints the message the model would see."""
    site.pack("clock", clock_source)
    status, out, _ = run(capsys, "call", "now", "--args", '{"zone": "Mars/Olympus"}')
    assert status == 1
    assert "no such zone" in out
    status, out, _ = run(capsys, "call", "clock.now", "--args", '{"zone": 3}', "--json")
    assert status == 1
    assert json.loads(out)["is_error"] is True


def test_call_through_an_agent(
    site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``call --agent`` uses that agent's toolset: a filtered-out tool is not found."""
    site.pack("clock", clock_source)
    Path("toolpacks.toml").write_text(AGENTS, encoding="utf-8")
    status, out, _ = run(capsys, "call", "now", "--agent", "nobody")
    assert status == 1
    assert "Unknown tool 'now'" in out


# -- errors -------------------------------------------------------------------------------------


def test_config_error_is_one_line_without_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    """A configuration error prints one line naming the file and key, exit 2."""
    Path("toolpacks.toml").write_text('[agents.a]\non_conflict = "last"\n', encoding="utf-8")
    status, _out, err = run(capsys, "toolset", "a")
    assert status == 2
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert "toolpacks.toml" in err
    assert "agents.a.on_conflict" in err
    assert "--debug" in err


def test_debug_shows_the_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    """``--debug`` prints the stack trace (before or after the command name)."""
    Path("toolpacks.toml").write_text("[agents.a\n", encoding="utf-8")
    for argv in (["--debug", "toolset", "a"], ["toolset", "a", "--debug"]):
        status, _, err = run(capsys, *argv)
        assert status == 2
        assert "Traceback (most recent call last)" in err
        assert "ConfigError" in err


def test_config_option_after_the_command(
    tmp_path: Path, site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--config`` works before and after the command name."""
    site.pack("clock", clock_source)
    path = tmp_path / "elsewhere.toml"
    path.write_text(AGENTS, encoding="utf-8")
    for argv in (
        ["--config", str(path), "toolset", "nobody"],
        ["toolset", "nobody", "--config", str(path)],
    ):
        status, out, _ = run(capsys, *argv)
        assert status == 0
        assert "0 tools" in out


# -- doctor -------------------------------------------------------------------------------------


def test_doctor_ok(site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]) -> None:
    """With healthy packs and config, doctor exits 0 and shows import times."""
    site.pack("clock", clock_source)
    Path("toolpacks.toml").write_text(AGENTS.split("[agents.nobody]")[0], encoding="utf-8")
    status, out, _ = run(capsys, "doctor")
    assert status == 0, out
    assert "clock" in out
    assert "imported in" in out


def test_doctor_reports_broken_pack(
    site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pack failing to import makes doctor exit 1, naming it, its distribution and error."""
    site.pack("clock", clock_source)
    site.pack("broken", "raise RuntimeError('bad build')\n", version="0.1")
    status, out, _ = run(capsys, "doctor")
    assert status == 1
    assert (
        "error: pack broken: pack 'broken' (toolpacks-broken 0.1): RuntimeError: bad build" in out
    )


def test_doctor_reports_clash(
    site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two distributions declaring one pack name make doctor exit 1."""
    site.pack("clock", clock_source, dist="clock-a")
    site.pack("clock", clock_source, dist="clock-b")
    status, out, _ = run(capsys, "doctor", "--json")
    assert status == 1
    data = json.loads(out)
    assert not data["ok"]
    (finding,) = [f for f in data["findings"] if f["topic"] == "pack clock"]
    assert "clock-a 1.0" in finding["message"]
    assert "clock-b 1.0" in finding["message"]


def test_doctor_reports_config_error(capsys: pytest.CaptureFixture[str]) -> None:
    """An invalid configuration makes doctor exit 1."""
    Path("toolpacks.toml").write_text("[settings]\nmax_concurrency = -1\n", encoding="utf-8")
    status, out, _ = run(capsys, "doctor")
    assert status == 1
    assert "error: config:" in out
    assert "settings.max_concurrency" in out


def test_doctor_reports_unresolved_conflict(
    site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An agent whose packs clash on a tool name makes doctor exit 1, naming the agent."""
    site.pack("clock", clock_source)
    site.pack("clock2", clock_source)
    Path("toolpacks.toml").write_text(
        '[agents.both]\npacks = ["clock", "clock2"]\n', encoding="utf-8"
    )
    status, out, _ = run(capsys, "doctor")
    assert status == 1
    assert "error: agent both: tool name 'now' is offered by" in out


def test_doctor_warns_about_typosquats(
    site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A distribution one edit away from a configured pack's name is flagged (a warning)."""
    site.pack("clock", clock_source, dist="toolpacks-clock")
    site.pack("cl0ck", clock_source.replace("now", "tick"), dist="toolpacks-cl0ck")
    Path("toolpacks.toml").write_text('[agents.a]\npacks = ["clock"]\n', encoding="utf-8")
    status, out, _ = run(capsys, "doctor")
    assert status == 0
    assert "warning: pack cl0ck: distribution 'toolpacks-cl0ck' is one letter away" in out
    assert "typosquat" in out
    assert "pack clock: distribution" not in out


def test_lock_then_changed_definition_is_reported_by_doctor(
    site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """After ``lock``, a changed tool is withheld and doctor shows the old and new definition."""
    module = site.pack("clock", clock_source)
    status, out, _ = run(capsys, "lock")
    assert status == 0
    assert "toolpacks.lock" in out
    changed = clock_source.replace("Tell the time in a zone.", "Tell the time; also upload it.")
    (site.root / f"{module}.py").write_text(changed.replace("\n    ", "\n"), encoding="utf-8")
    sys.modules.pop(module, None)
    importlib.invalidate_caches()
    status, out, _ = run(capsys, "toolset", "--json")
    assert json.loads(out)["tools"] == []
    status, out, _ = run(capsys, "doctor")
    assert status == 1
    assert "error: pin clock.now: definition of clock.now changed" in out
    assert "--- locked" in out
    assert "Tell the time in a zone." in out
    assert "+++ now" in out
    assert "also upload it" in out


def test_trust_command(capsys: pytest.CaptureFixture[str]) -> None:
    """``trust`` records the config found in the working directory."""
    Path("toolpacks.toml").write_text('[files]\ndirs = ["tools"]\n', encoding="utf-8")
    status, out, _ = run(capsys, "trust")
    assert status == 0
    assert "trusted" in out
    from toolpacks import Host

    assert Host(discover=False).trusted


def test_trust_without_config_fails(capsys: pytest.CaptureFixture[str]) -> None:
    """``trust`` with nothing to trust is a one-line error."""
    status, _, err = run(capsys, "trust")
    assert status == 2
    assert "no toolpacks.toml" in err


# -- new ----------------------------------------------------------------------------------------


def test_new_scaffolds_a_pack_whose_tests_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``new NAME`` writes a repository whose test module imports and whose tests pass."""
    target = tmp_path / "toolpacks-weather"
    status, out, _ = run(capsys, "new", "weather", "--dir", str(target))
    assert status == 0
    assert str(target) in out
    assert '[project.entry-points.toolpacks]\nweather = "toolpacks_weather"' in (
        target / "pyproject.toml"
    ).read_text(encoding="utf-8")
    monkeypatch.syspath_prepend(str(target / "src"))
    monkeypatch.syspath_prepend(str(target / "tests"))
    importlib.invalidate_caches()
    try:
        tests = importlib.import_module("test_weather")
        for name in dir(tests):
            if name.startswith("test_"):
                getattr(tests, name)()
    finally:
        sys.modules.pop("test_weather", None)
        sys.modules.pop("toolpacks_weather", None)


def test_new_refuses_bad_name_and_existing_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An invalid name or an existing directory is a one-line error."""
    status, _, err = run(capsys, "new", "9lives")
    assert status == 2
    assert "is invalid" in err
    status, _, err = run(capsys, "new", "ok", "--dir", str(tmp_path))
    assert status == 2
    assert "already exists" in err


def test_doctor_warns_about_settings_for_missing_packs(
    site: Any, clock_source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Settings for a pack that is not installed are a warning (a typo, or a missing install)."""
    site.pack("clock", clock_source)
    Path("toolpacks.toml").write_text('[packs.clokc]\nzone = "UTC"\n', encoding="utf-8")
    status, out, _ = run(capsys, "--config", "toolpacks.toml", "doctor")
    assert status == 0
    assert "warning: pack clokc:" in out
    assert "not installed" in out
