"""Every command that runs pack code applies the trust rule, as building a toolset does.

A ``toolpacks.toml`` found in the working directory and not trusted may select packs, but
its ``[packs.NAME]`` settings must not reach pack code: not through ``list --tools``,
``show``, ``doctor`` or ``lock`` (which would also pin what they built). The pack here
writes the settings it receives to a file, so "did not reach" is observed. Each command runs
in-process (``main``) against a fake site-packages (``site``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolpacks.cli._main import main

SPY = """
    import json
    from pathlib import Path

    from toolpacks import hookimpl, tool

    @tool
    def peek() -> str:
        '''Say hello.'''
        return "hello"

    @hookimpl
    def register_tools(register):
        Path({marker!r}).write_text(json.dumps(dict(register.config)))
        register(peek, description="Say " + str(register.config.get("greeting", "hello")))
"""

SETTING = "planted-by-the-repository"

COMMANDS = {
    "list --tools": ["list", "--tools"],
    "list --tools --json": ["list", "--tools", "--json"],
    "show pack": ["show", "spy"],
    "show tool": ["show", "spy.peek"],
    "doctor": ["doctor"],
    "doctor --json": ["doctor", "--json"],
    "lock": ["lock"],
}


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    """Where the spy pack writes the settings it was given."""
    return tmp_path / "spy-settings.json"


@pytest.fixture
def untrusted(site: Any, marker: Path) -> Path:
    """The spy pack installed, and an untrusted toolpacks.toml here that configures it."""
    site.pack("spy", SPY.format(marker=str(marker)))
    config = Path("toolpacks.toml")
    config.write_text(f'[packs.spy]\ngreeting = "{SETTING}"\n', encoding="utf-8")
    return config


def _settings_seen(marker: Path) -> dict[str, Any] | None:
    return json.loads(marker.read_text(encoding="utf-8")) if marker.exists() else None


@pytest.mark.parametrize("argv", list(COMMANDS.values()), ids=list(COMMANDS))
def test_untrusted_pack_settings_reach_no_pack_code(
    argv: list[str],
    untrusted: Path,
    marker: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The command runs without the settings reaching the pack, and says trust is needed."""
    status = main(argv)
    out, err = capsys.readouterr()
    seen = _settings_seen(marker)
    assert seen is None or SETTING not in json.dumps(seen), seen
    assert SETTING not in out.replace(f'greeting = "{SETTING}"', "")
    assert "toolpacks trust" in out + err, out + err
    assert status != 0
    lock = Path("toolpacks.lock")
    assert not lock.exists() or SETTING not in lock.read_text(encoding="utf-8")


@pytest.mark.parametrize("argv", list(COMMANDS.values()), ids=list(COMMANDS))
def test_once_trusted_the_settings_reach_the_pack(
    argv: list[str],
    untrusted: Path,
    marker: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The same command, after ``toolpacks trust``, gives the pack its settings."""
    assert main(["trust"]) == 0
    capsys.readouterr()
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 0, out + err
    assert _settings_seen(marker) == {"greeting": SETTING}


def test_lock_pins_nothing_built_from_untrusted_settings(
    untrusted: Path, marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``write_lock`` itself refuses an untrusted host: no lock file is written."""
    from toolpacks import Host, UntrustedConfigError
    from toolpacks.host._lockfile import write_lock

    host = Host()
    with pytest.raises(UntrustedConfigError, match="toolpacks trust"):
        write_lock(host)
    host.close()
    assert not Path("toolpacks.lock").exists()
    assert _settings_seen(marker) is None


def test_loading_a_pack_directly_withholds_untrusted_settings(
    untrusted: Path, marker: Path
) -> None:
    """``Host.load``, the funnel every command goes through, fails such a pack closed."""
    from toolpacks import Host

    with Host() as host:
        loaded = host.load("spy")
    assert loaded.info.status == "failed"
    assert "toolpacks trust" in (loaded.info.error or "")
    assert _settings_seen(marker) is None


def test_settings_given_in_code_are_not_the_files_to_withhold(
    untrusted: Path, marker: Path, pack_of: Any
) -> None:
    """``add_pack(config=...)`` settings come from the caller, not the untrusted file."""
    from toolpacks import Host

    with Host(discover=False) as host:
        host.add_pack(pack_of(), "mine", config={"greeting": "from code"})
        assert host.load("mine").info.status == "loaded"
