"""Pinning: `toolpacks lock` records tool definitions; a changed definition is withheld."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolpacks import ConfigError, Host, tool
from toolpacks.host._lockfile import check_pins, write_lock
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
