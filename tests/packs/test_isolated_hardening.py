"""Isolated packs under stress: restarts, stops, CPU accounting, environments, leftovers.

Real child processes of a pack written into a fake site directory (``isolate = true``: the
host's own environment, so no environment is built); every wait is bounded.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Host

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

PACK = """
import os, subprocess, sys, threading, time
from pathlib import Path
from toolpacks import hookimpl, tool

@tool
def ping() -> str:
    '''Answer pong.'''
    return "pong"

@tool
def crash() -> str:
    '''Exit the child at once, as a crashing native library would.'''
    os._exit(7)

@tool(timeout=1)
def quick() -> str:
    '''Answer at once, or not at all (a short timeout).'''
    return "quick"

@hookimpl
def register_tools(register):
    marker = register.config.get("marker")
    if marker and Path(marker).exists():
        os._exit(3)
    for t in (ping, crash, quick):
        register(t)
"""


def call(toolset: Any, name: str, arguments: dict[str, Any] | None = None) -> Any:
    return asyncio.run(toolset.call(name, arguments or {}))


@pytest.fixture
def site_pack(site: Any) -> Any:
    site.pack("hard", PACK)
    return site


def host_of(site: Any, isolate: Any = True, **extra: Any) -> Host:
    return site.host({"packs": {"hard": {"isolate": isolate, **extra}}})


def test_the_call_right_after_a_crash_is_served(site_pack: Any) -> None:
    """A child that died by ``os._exit`` is started again for the next call, which answers."""
    with host_of(site_pack) as host:
        toolset = host.toolset(packs=["hard"])
        assert call(toolset, "ping").value == "pong"
        crashed = call(toolset, "crash")
        assert crashed.is_error
        again = call(toolset, "ping")
        assert not again.is_error, again.content
        assert again.value == "pong"


def test_a_crash_loop_still_backs_off_and_a_call_that_cannot_wait_is_told_when(
    site_pack: Any, tmp_path: Path
) -> None:
    """Restarts that fail double the delay; a call whose timeout is shorter is refused at once."""
    marker = tmp_path / "broken"
    with host_of(site_pack, marker=str(marker)) as host:
        toolset = host.toolset(packs=["hard"])
        assert call(toolset, "ping").value == "pong"
        marker.touch()  # from now on the child exits while it starts
        assert call(toolset, "crash").is_error
        mount = host.load("hard").tools["hard.ping"].fn.mount
        for _ in range(2):  # each waits for the restart, which fails: the delay doubles
            failed = call(toolset, "ping")
            assert failed.is_error
            assert "exited during startup" in failed.content, failed.content
        assert mount.connection.failures >= 3
        refused = call(toolset, "quick")
        assert refused.is_error
        assert "is started again in" in refused.content, refused.content
        assert "later than this call may wait (1 s)" in refused.content
