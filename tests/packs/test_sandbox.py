"""The sandbox of isolated packs (issue 32): files, /proc, network, process tree.

Real child processes of a probe pack written into a fake site directory (the host's own
environment, ``[packs.NAME] isolate = {...}``: no new virtual environment), real Landlock
rules, a real PID namespace, a real loopback listener and a real host process SIGKILLed.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from toolpacks.packs.sandbox import UNAVAILABLE_ENV, checked_grant
from toolpacks.packs.sandbox._landlock import abi

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(180),
    pytest.mark.skipif(abi() < 4, reason="needs Landlock ABI 4 (Linux 6.7)"),
]

PROBE = """
import os, socket, subprocess, sys
from pathlib import Path
from toolpacks import hookimpl, tool

@tool
def read(path: str) -> str:
    '''The start of a file.'''
    with open(path, encoding="utf-8", errors="replace") as src:
        return src.read(200)

@tool
def write(path: str, text: str) -> str:
    '''Write a file.'''
    Path(path).write_text(text)
    return "written"

@tool
def connect(port: int) -> str:
    '''Connect to a loopback TCP port.'''
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        return "connected"

DAEMON = '''
import os, sys, time
from pathlib import Path
if sys.argv[1] == "double":
    if os.fork():
        os._exit(0)
    os.setsid()
    if os.fork():
        os._exit(0)
Path(sys.argv[2]).write_text(os.readlink("/proc/self"))
time.sleep(600)
'''

@tool
def spawn() -> list:
    '''Start a process in its own session and a double-forked daemon; their host pids.'''
    tmp = Path(os.environ["TMPDIR"])
    files = [tmp / "session.pid", tmp / "daemon.pid"]
    subprocess.Popen([sys.executable, "-c", DAEMON, "session", str(files[0])],
                     start_new_session=True)
    subprocess.run([sys.executable, "-c", DAEMON, "double", str(files[1])], check=True)
    import time
    for _ in range(200):
        if all(f.exists() and f.read_text() for f in files):
            break
        time.sleep(0.05)
    return [int(f.read_text()) for f in files]

@hookimpl
def register_tools(register):
    for t in (read, write, connect, spawn):
        register(t)
"""


def call(toolset: Any, name: str, arguments: dict[str, Any]) -> Any:
    return asyncio.run(toolset.call(name, arguments))


@pytest.fixture
def probe(site: Any, tmp_path: Path) -> dict[str, Any]:
    site.pack("probe", PROBE)
    granted = tmp_path / "granted"
    granted.mkdir()
    (granted / "data.txt").write_text("granted data")
    private = tmp_path / "private"
    private.mkdir()
    (private / "secret.txt").write_text("private secret")
    config = tmp_path / "toolpacks.toml"
    config.write_text('[packs.probe]\napi_key = "sk-config-secret"\n')
    return {"site": site, "granted": granted, "private": private, "config": config}


def host_of(probe: dict[str, Any], **isolate: Any) -> Any:
    return probe["site"].host({"packs": {"probe": {"isolate": isolate or True}}})


def refused(result: Any) -> bool:
    return bool(result.is_error) and "PermissionError" in str(result.content)


def test_reads_outside_the_grants_fail_and_a_granted_directory_reads(
    probe: dict[str, Any],
) -> None:
    home_file = Path.home() / f".toolpacks-sandbox-probe-{os.getpid()}"
    home_file.write_text("home secret")
    try:
        with host_of(probe, read=[str(probe["granted"])]) as host:
            toolset = host.toolset(packs=["probe"])
            for path in (
                probe["config"],
                home_file,
                probe["private"] / "secret.txt",
                Path(f"/proc/{os.getpid()}/environ"),
            ):
                result = call(toolset, "read", {"path": str(path)})
                assert refused(result), (path, result.content)
            good = call(toolset, "read", {"path": str(probe["granted"] / "data.txt")})
            assert good.value == "granted data"
    finally:
        home_file.unlink()


def test_writing_outside_the_grants_fails_and_leaves_no_file(probe: dict[str, Any]) -> None:
    outside = probe["private"] / "planted.txt"
    out_dir = probe["granted"].parent / "out"
    out_dir.mkdir()
    with host_of(probe, read=[str(probe["granted"])], write=[str(out_dir)]) as host:
        toolset = host.toolset(packs=["probe"])
        assert refused(call(toolset, "write", {"path": str(outside), "text": "x"}))
        assert not outside.exists()
        into_read_grant = probe["granted"] / "planted.txt"
        assert refused(call(toolset, "write", {"path": str(into_read_grant), "text": "x"}))
        assert not into_read_grant.exists()
        ok = call(toolset, "write", {"path": str(out_dir / "ok.txt"), "text": "fine"})
        assert ok.value == "written"
    assert (out_dir / "ok.txt").read_text() == "fine"


def test_a_symlink_inside_a_grant_pointing_outside_is_refused(probe: dict[str, Any]) -> None:
    link = probe["granted"] / "escape"
    link.symlink_to(probe["private"])
    with host_of(probe, read=[str(probe["granted"])]) as host:
        toolset = host.toolset(packs=["probe"])
        assert refused(call(toolset, "read", {"path": str(link / "secret.txt")}))
    # a grant that is itself a symlink grants its real path only
    alias = probe["private"].parent / "alias"
    alias.symlink_to(probe["granted"])
    assert checked_grant(str(alias), "read") == str(probe["granted"].resolve())


@pytest.mark.parametrize(
    ("entry", "words"),
    [("relative/dir", "relative"), ("/no/such/dir", "does not exist"), ("/", "whole")],
)
def test_bad_grants_are_config_errors(probe: dict[str, Any], entry: str, words: str) -> None:
    from toolpacks.exceptions import ConfigError

    with pytest.raises((ConfigError, ValueError), match=words):
        host_of(probe, read=[entry]).load("probe")
    with pytest.raises(ValueError, match="home"):
        checked_grant(str(Path.home()), "write")


def _listener() -> socket.socket:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    return server


def test_network_false_refuses_a_loopback_connection_and_default_allows(
    probe: dict[str, Any],
) -> None:
    with _listener() as server:
        port = server.getsockname()[1]
        with host_of(probe, network=False) as host:
            result = call(host.toolset(packs=["probe"]), "connect", {"port": port})
            assert refused(result)
        with host_of(probe) as host:
            assert call(host.toolset(packs=["probe"]), "connect", {"port": port}).value == (
                "connected"
            )


def test_required_where_unavailable_refuses_to_start(
    probe: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(UNAVAILABLE_ENV, "1")
    with host_of(probe, sandbox="required") as host:
        info = host.load("probe").info
        assert info.status == "failed"
        assert "required" in str(info.error)
        assert UNAVAILABLE_ENV in str(info.error)
    with host_of(probe) as host:  # auto: runs without, and says so
        toolset = host.toolset(packs=["probe"])
        assert call(toolset, "read", {"path": str(probe["config"])}).value.startswith("[packs")


def test_the_host_secrets_never_reach_the_pack(
    probe: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guide's red-team checks: the config's secret and the host's environment."""
    monkeypatch.setenv("HOST_SECRET", "s3cret-env-value")
    with host_of(probe) as host:
        toolset = host.toolset(packs=["probe"])
        for path in (
            probe["config"],
            Path(f"/proc/{os.getpid()}/environ"),
            Path(f"/proc/{os.getppid()}/environ"),
        ):
            result = call(toolset, "read", {"path": str(path)})
            assert refused(result)
            assert "s3cret" not in str(result.content)
            assert "sk-config" not in str(result.content)


def _gone(pids: list[int], within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        alive = []
        for pid in pids:
            try:
                os.kill(pid, 0)
                stat = Path(f"/proc/{pid}/stat").read_text()
                if stat[stat.rfind(")") + 2] != "Z":
                    alive.append(pid)
            except (ProcessLookupError, FileNotFoundError):
                pass
        if not alive:
            return True
        time.sleep(0.05)
    return False


def test_sessions_and_daemons_end_when_the_host_closes(probe: dict[str, Any]) -> None:
    with host_of(probe) as host:
        result = call(host.toolset(packs=["probe"]), "spawn", {})
        pids = result.value
        assert pids, result
        assert len(pids) == 2
        assert all(isinstance(p, int) for p in pids)
        os.kill(pids[0], 0)
        os.kill(pids[1], 0)
    assert _gone(pids)


HOST = """
import asyncio, json, sys
from toolpacks import Host
host = Host({"packs": {"probe": {"isolate": True}}}, path=[sys.argv[1]])
pids = asyncio.run(host.toolset(packs=["probe"]).call("spawn", {})).value
print(json.dumps(pids), flush=True)
sys.stdin.read()
"""


def test_sessions_and_daemons_end_when_the_host_is_sigkilled(
    probe: dict[str, Any], tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, str(probe["site"].root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        assert host.stdout is not None
        line = host.stdout.readline()
        pids = json.loads(line)
        os.kill(pids[0], 0)
        os.kill(pids[1], 0)
        host.send_signal(signal.SIGKILL)
        host.wait(30)
        assert _gone(pids), "a process the pack started outlived the SIGKILLed host"
    finally:
        if host.poll() is None:
            host.kill()
            host.wait(30)


def test_doctor_says_whether_sandbox_tree_kill_and_network_rule_are_in_force(
    probe: dict[str, Any], tmp_path: Path
) -> None:
    config = tmp_path / "doctor.toml"
    site = str(probe["site"].root)  # the host and its child find the pack through PYTHONPATH
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLPACKS_SANDBOX")}
    env["PYTHONPATH"] = site

    def doctor(keys: str, **more: str) -> str:
        table = f"{{ env = {{ PYTHONPATH = {site!r} }}, read = [{site!r}], {keys} }}"
        config.write_text(f"[packs.probe]\nisolate = {table}\n")
        out = subprocess.run(
            [sys.executable, "-m", "toolpacks", "--config", str(config), "doctor"],
            capture_output=True,
            text=True,
            env={**env, **more},
            cwd=tmp_path,
            timeout=120,
        )
        out = out.stdout + out.stderr
        return next((line for line in out.splitlines() if "probe: sandbox:" in line), out)

    shown = doctor("network = false")
    assert "sandbox: in force (Landlock ABI" in shown
    assert "network: TCP connect/bind refused" in shown
    assert "process-tree kill: in force" in shown
    assert "network: allowed" in doctor("network = true")
    assert "sandbox: off" in doctor('sandbox = "off"')
    off = {UNAVAILABLE_ENV: "1"}
    assert "runs WITHOUT a sandbox" in doctor("network = true", **off)
    assert "refuses to start" in doctor('sandbox = "required"', **off)
