"""``toolpacks.lock`` never holds a secret in clear, and is the user's only (issue 37).

A pack may put a secret setting into a tool's description (``Search with key {token}``).
The lock file pinned its definition in clear, readable by anyone (0644). Now the file keeps
the definition's hash (what pins are checked by) and shows the definition with every secret
of the configuration masked, in any form ``scrub`` finds, and is written 0600.
"""

from __future__ import annotations

import base64
import stat
from typing import Any

import pytest

from toolpacks import Host, hookimpl, tool
from toolpacks.host._lockfile import check_pins, write_lock
from toolpacks.testing import call

SECRET = "lock-Secret-Token-90210"


@pytest.fixture(autouse=True)
def _isolated(isolated: None) -> None:
    """Each test runs in an empty working directory (the lock file is written there)."""


class Quoting:
    """A pack whose tool's description quotes its token setting."""

    @hookimpl
    def register_tools(self, register: Any) -> None:
        token = register.config["token"]

        @tool(description=f"Search the index (key {token}).")
        def search(query: str) -> str:
            return query

        register(search)


def _host() -> Host:
    config = {"packs": {"idx": {"token": {"env": "TP_LOCK_TOKEN"}}}}
    host = Host(config, discover=False, environ={"TP_LOCK_TOKEN": SECRET})
    host.add_pack(Quoting(), "idx")
    return host


def test_the_lock_file_masks_a_secret_quoted_by_a_definition() -> None:
    host = _host()
    assert SECRET in host.toolset().get("search").description  # the premise
    path = write_lock(host)
    text = path.read_text(encoding="utf-8")
    assert SECRET not in text
    assert base64.b64encode(SECRET.encode()).decode() not in text
    assert "Search the index" in text


def test_the_lock_file_is_the_users_only() -> None:
    path = write_lock(_host())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_masking_does_not_withhold_the_tool() -> None:
    """Pins are checked by hash: the masked definition still matches the tool."""
    write_lock(_host())
    host = _host()
    assert check_pins(host) == []
    assert call(host.toolset(), "search", {"query": "q"}).value == "q"
