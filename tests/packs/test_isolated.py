"""Isolated packs in the host's environment (``[packs.NAME] isolate = true``).

Each test runs real child processes (``python -m toolpacks.packs.isolated._launch ... serve
--pack NAME``) of a pack written into a fake site directory, and every wait is bounded.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Host
from toolpacks.exceptions import ConfigError
from toolpacks.host.config._load import untrusted_keys

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

PACK = """
import os, sys, time
from pathlib import Path
from toolpacks import hookimpl, tool

@tool(tags=["net", "demo"], read_only=True, idempotent=True)
def ping(host: str = "localhost") -> str:
    '''Answer pong.'''
    return "pong " + host

@tool(title="Adder")
def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b

@tool(destructive=True)
def info(name: str) -> dict:
    '''Describe a name.'''
    return {"name": name, "length": len(name)}

@tool(timeout=1)
def stuck(seconds: float) -> str:
    '''Sleep in a sync tool, past its timeout.'''
    # /proc/self: the pid as the host sees it (the sandbox runs the pack in a PID namespace)
    Path(os.environ["TMPDIR"], "stuck.pid").write_text(os.readlink("/proc/self"))
    time.sleep(seconds)
    return "woke"

@tool
def spin() -> str:
    '''Use CPU without end.'''
    while True:
        pass

@tool
def hog() -> str:
    '''Allocate without bound.'''
    chunks = []
    while True:
        chunks.append(bytearray(64 * 1024 * 1024))

@tool
def environment(name: str) -> str:
    '''One variable of the environment.'''
    return os.environ.get(name, "<unset>")

@hookimpl
def register_tools(register):
    marker = register.config.get("marker")
    if marker and Path(marker, "exit").exists():
        os._exit(3)
    if marker and Path(marker, "loop").exists():
        while True:
            pass
    if register.config.get("token"):
        os.environ["PACK_TOKEN"] = register.config["token"]
    for t in (ping, add, info, stuck, spin, hog, environment):
        register(t)
"""

OTHER = """
from toolpacks import hookimpl, tool

@tool
def hello(name: str) -> str:
    '''Say hello.'''
    return "hello " + name

@hookimpl
def register_tools(register):
    register(hello)
"""


def call(toolset: Any, name: str, arguments: dict[str, Any]) -> Any:
    return asyncio.run(toolset.call(name, arguments))


@pytest.fixture
def packs(site: Any, tmp_path: Path) -> dict[str, Any]:
    site.pack("iso", PACK)
    site.pack("other", OTHER)
    marker = tmp_path / "marker"
    marker.mkdir()
    return {"site": site, "marker": marker}


def host_of(packs: dict[str, Any], isolate: Any = True, **extra: Any) -> Host:
    table = {"isolate": isolate, "marker": str(packs["marker"]), **extra}
    return packs["site"].host({"packs": {"iso": table}})


def test_the_child_serves_the_same_tools_as_in_process(packs: dict[str, Any]) -> None:
    """Names, tags, hints, titles, descriptions, schemas and timeouts match in-process."""
    site = packs["site"]
    with site.host({"packs": {"iso": {"marker": str(packs["marker"])}}}) as plain:
        here = plain.toolset(packs=["iso"])
        expected = {e.exposed: e for e in here.entries()}
        expected_defs = here.definitions("openai")
    with host_of(packs) as host:
        assert host.load("iso").info.source == "isolated"
        there = host.toolset(packs=["iso"])
        assert there.names() == here.names()
        for entry in there.entries():
            mine, theirs = entry.tool, expected[entry.exposed].tool
            assert entry.qualified == expected[entry.exposed].qualified
            assert mine.tags == theirs.tags
            assert mine.hints == theirs.hints
            assert mine.title == theirs.title
            assert mine.description == theirs.description
            assert mine.input_schema == theirs.input_schema
            assert mine.output_schema == theirs.output_schema
            assert mine.timeout == theirs.timeout
        assert there.definitions("openai") == expected_defs
        assert call(there, "add", {"a": 2, "b": 3}).value == 5
        assert call(there, "info", {"name": "abc"}).value == {"name": "abc", "length": 3}
        assert call(there, "ping", {"host": "x"}).value == "pong x"


def test_a_second_host_lists_from_the_manifest_without_starting_the_child(
    packs: dict[str, Any],
) -> None:
    """The first load writes the manifest; the next host builds its toolset from it alone."""
    with host_of(packs) as first:
        first.toolset(packs=["iso"])
    with host_of(packs) as host:
        toolset = host.toolset(packs=["iso"])
        mount = host.load("iso").tools["iso.ping"].fn.mount
        assert not mount.up
        assert mount.runtime.pid() is None
        assert call(toolset, "ping", {}).value == "pong localhost"
        assert mount.up
        assert mount.runtime.pid() is not None


def _gone(pid: int, within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_a_call_past_its_timeout_kills_the_child_and_the_next_call_answers(
    packs: dict[str, Any],
) -> None:
    with host_of(packs) as host:
        toolset = host.toolset(packs=["iso", "other"])
        mount = host.load("iso").tools["iso.stuck"].fn.mount
        result = call(toolset, "stuck", {"seconds": 120})
        assert result.is_error
        assert "timed out" in result.content
        pid = int(Path(mount.runtime.tmp, "stuck.pid").read_text())
        assert _gone(pid), "the stuck child still runs"
        assert call(toolset, "hello", {"name": "a"}).value == "hello a"
        assert call(toolset, "ping", {}).value == "pong localhost"


def test_a_call_past_its_cpu_seconds_is_stopped(packs: dict[str, Any]) -> None:
    with host_of(packs, {"cpu_seconds": 1}) as host:
        toolset = host.toolset(packs=["iso"])
        result = call(toolset, "spin", {})
        assert result.is_error
        assert "CPU seconds" in result.content
        assert call(toolset, "ping", {}).value == "pong localhost"


def test_allocating_without_bound_is_an_error_result(packs: dict[str, Any]) -> None:
    with host_of(packs, {"memory_mb": 512}) as host:
        toolset = host.toolset(packs=["iso"])
        result = call(toolset, "hog", {})
        assert result.is_error
        assert "MemoryError" in result.content
        assert call(toolset, "add", {"a": 1, "b": 1}).value == 2


@pytest.mark.parametrize("failure", ["exit", "loop"])
def test_a_child_that_dies_or_hangs_at_import_gives_error_results(
    packs: dict[str, Any], failure: str
) -> None:
    """Listed from its manifest, the pack's calls fail clearly; other packs answer."""
    with host_of(packs) as first:
        first.toolset(packs=["iso"])
    (packs["marker"] / failure).touch()
    with host_of(packs, {"timeout": 5}) as host:
        toolset = host.toolset(packs=["iso", "other"])
        result = call(toolset, "ping", {})
        assert result.is_error
        expected = "exited during startup" if failure == "exit" else "did not complete"
        assert expected in result.content
        assert "isolated pack 'iso'" in result.content
        assert call(toolset, "hello", {"name": "b"}).value == "hello b"
        again = call(toolset, "ping", {})
        assert again.is_error
        assert "tried again in" in again.content


def test_a_pack_that_fails_at_its_first_load_is_a_failed_pack(packs: dict[str, Any]) -> None:
    (packs["marker"] / "exit").touch()
    with host_of(packs) as host:
        info = host.load("iso").info
        assert info.status == "failed"
        assert "exited during startup" in (info.error or "")
        assert host.toolset(packs=["other"]).names() == ["hello"]


def test_the_child_sees_no_host_secret_unless_its_table_passes_it(
    packs: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOST_SECRET", "s3cret-value")
    with host_of(packs) as host:
        toolset = host.toolset(packs=["iso"])
        assert call(toolset, "environment", {"name": "HOST_SECRET"}).value == "<unset>"
        assert call(toolset, "environment", {"name": "HOME"}).value != os.environ["HOME"]
    with host_of(packs, {"env": ["HOST_SECRET"]}, token={"env": "HOST_SECRET"}) as host:
        toolset = host.toolset(packs=["iso"])
        assert call(toolset, "environment", {"name": "HOST_SECRET"}).value == "s3cret-value"
        assert call(toolset, "environment", {"name": "PACK_TOKEN"}).value == "s3cret-value"


def test_isolate_must_be_a_boolean_or_a_table_of_limits(site: Any) -> None:
    with pytest.raises(ConfigError, match="isolate"):
        site.host({"packs": {"iso": {"isolate": "yes"}}})
    with pytest.raises(ConfigError, match="memory_mb"):
        site.host({"packs": {"iso": {"isolate": {"memory_mb": 1}}}})


def test_isolated_packs_need_trust_like_mcp_servers() -> None:
    raw = {"isolated": {"w": {"requirement": "toolpacks-w"}}, "agents": {"a": {}}}
    assert untrusted_keys(raw) == ["isolated.w"]


def test_doctor_shows_environment_interpreter_state_and_limits(packs: dict[str, Any]) -> None:
    import sys

    from toolpacks.packs.isolated._pack import isolation_report

    with host_of(packs, {"memory_mb": 1024, "env": ["LANGUAGE"]}) as host:
        shown = isolation_report(host.load("iso"))
        assert shown is not None
        assert "the host's environment" in shown
        assert f"interpreter {sys.executable}" in shown
        assert "state: running" in shown  # no manifest yet: it was started to list its tools
        assert "memory 1024 MiB" in shown
        assert "environment variables passed: LANGUAGE" in shown
    with host_of(packs) as host:
        assert "not started" in (isolation_report(host.load("iso")) or "")
        assert isolation_report(host.load("other")) is None
