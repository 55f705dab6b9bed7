"""Pinning (toolpacks.lock withholds changed or new tools) and trust of implicit configs."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolpacks import ConfigError, Host, tool
from toolpacks.host._lockfile import check_pins, write_lock
from toolpacks.packs._trust import is_trusted, trust, untrust
from toolpacks.testing import call


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return key


@tool(name="lookup")
def lookup_changed(key: str) -> str:
    """Look a key up, and send it to a third party."""  # a rewritten description
    return key


@tool
def extra() -> str:
    """A tool that appeared after locking."""
    return "new"


def _host(pack: Any) -> Host:
    host = Host({}, discover=False)
    host.add_pack(pack, "kv")
    return host


def test_lock_pins_current_tools(pack_of: Callable[..., Any]) -> None:
    """After locking, unchanged tools are served as before."""
    path = write_lock(_host(pack_of(lookup)))
    assert path == Path.cwd() / "toolpacks.lock"
    assert call(_host(pack_of(lookup)).toolset(), "lookup", {"key": "k"}).value == "k"


def test_changed_definition_is_withheld_and_reported(
    pack_of: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    """A tool whose definition changed since locking is withheld; the check shows old and new."""
    write_lock(_host(pack_of(lookup)))
    changed = _host(pack_of(lookup_changed))
    with caplog.at_level(logging.WARNING, logger="toolpacks"):
        assert changed.toolset().names() == []
    assert "withheld: definition of kv.lookup changed" in caplog.text
    ((name, message),) = check_pins(changed)
    assert name == "kv.lookup"
    assert "--- locked" in message
    assert "+++ now" in message
    assert "Look a key up." in message
    assert "send it to a third party" in message


def test_new_tool_after_locking_is_withheld(pack_of: Callable[..., Any]) -> None:
    """A tool that was not there when locking is withheld until locking again."""
    write_lock(_host(pack_of(lookup)))
    grown = _host(pack_of(lookup, extra))
    assert grown.toolset().names() == ["lookup"]
    assert [name for name, _ in check_pins(grown)] == ["kv.extra"]
    write_lock(grown)
    assert _host(pack_of(lookup, extra)).toolset().names() == ["extra", "lookup"]


def test_corrupt_lock_file_is_a_config_error(pack_of: Callable[..., Any]) -> None:
    """A lock file that is not JSON is reported, not ignored."""
    Path("toolpacks.lock").write_text("{nope", encoding="utf-8")
    with pytest.raises(ConfigError, match="not a valid lock file"):
        _host(pack_of(lookup)).toolset()


IMPLICIT_WITH_CODE = """
[files]
dirs = ["tools"]

[mcp_servers.remote]
command = "definitely-not-run"
"""


def test_implicit_config_with_code_is_refused_until_trusted() -> None:
    """An implicit config may not start MCP servers or load local tools until trusted."""
    Path("tools").mkdir()
    Path("toolpacks.toml").write_text(IMPLICIT_WITH_CODE, encoding="utf-8")
    host = Host(discover=False)
    assert not host.trusted
    ts = host.toolset()
    assert ts.names() == []
    for name in ("local", "remote"):
        info = host.pack(name)
        assert info.status == "failed"
        assert "not trusted" in (info.error or "")
        assert "toolpacks trust" in (info.error or "")


def test_trusted_implicit_config_loads_local_tools() -> None:
    """Once trusted, the implicit config's local tools directory is loaded."""
    Path("tools").mkdir()
    Path("toolpacks.toml").write_text('[files]\ndirs = ["tools"]\n', encoding="utf-8")
    trust(Path("toolpacks.toml"))
    host = Host(discover=False)
    assert host.trusted
    host.toolset()
    assert host.pack("local").status == "loaded"


def test_changed_config_needs_trust_again() -> None:
    """Editing a trusted file withdraws the trust; untrust withdraws it explicitly."""
    path = Path("toolpacks.toml")
    path.write_text('[files]\ndirs = ["tools"]\n', encoding="utf-8")
    trust(path)
    assert is_trusted(path)
    path.write_text('[files]\ndirs = ["tools", "more"]\n', encoding="utf-8")
    assert not is_trusted(path)
    assert not Host(discover=False).trusted
    trust(path)
    assert Host(discover=False).trusted
    assert untrust(path)
    assert not Host(discover=False).trusted


def test_explicit_config_is_trusted(tmp_path: Path) -> None:
    """A configuration passed explicitly is trusted without `toolpacks trust`."""
    path = tmp_path / "explicit.toml"
    path.write_text('[files]\ndirs = ["tools"]\n', encoding="utf-8")
    assert Host(path, discover=False).trusted
    assert Host({"files": {"dirs": ["tools"]}}, discover=False).trusted


def test_trust_store_location_is_overridable(tmp_path: Path) -> None:
    """TOOLPACKS_TRUST_FILE decides where trust is recorded (the fixture points into tmp)."""
    path = Path("toolpacks.toml")
    path.write_text("", encoding="utf-8")
    trust(path)
    assert (tmp_path / "trusted.json").is_file()
