"""Isolated packs under stress: restarts, stops, CPU accounting, environments, leftovers.

Real child processes of a pack written into a fake site directory (``isolate = true``: the
host's own environment, so no environment is built); every wait is bounded.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Host

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

PACK = r"""
import os, shlex, signal, subprocess, sys, threading, time
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

SPIN = "import sys, time\nwhile time.process_time() < float(sys.argv[1]):\n    pass\n"
LEFT = []

@tool(timeout=300)
def spin_threads(seconds: float) -> str:
    '''Use ``seconds`` of CPU in each of two threads, then answer.'''
    def work():
        end = time.thread_time() + seconds
        while time.thread_time() < end:
            pass
    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return "finished"

@tool(timeout=300)
def spin_children(seconds: float, times: int, session: bool = False) -> str:
    '''Run ``times`` subprocesses one after another, each using ``seconds`` of CPU.'''
    for _ in range(times):
        command = [sys.executable, "-c", SPIN, str(seconds)]
        if session:  # a shell that waits for it, in a session of its own
            script = shlex.quote(sys.executable) + ' -c "$0" "$1"; true'
            command = ["/bin/sh", "-c", script, SPIN, str(seconds)]
        subprocess.run(command, check=True, start_new_session=session)
    return "finished"

@tool
def leave(seconds: float) -> str:
    '''Start a process that uses CPU after the call returned (reaped by ``reap``).'''
    done = Path(os.environ["TMPDIR"], "left.done")
    code = SPIN + "open(sys.argv[2], 'w').write('done')\n"
    LEFT.append(subprocess.Popen([sys.executable, "-c", code, str(seconds), str(done)]))
    return "left"

@tool
def reap() -> int:
    '''Wait for the processes ``leave`` started (their CPU was used before this call).'''
    codes = sum(p.wait() for p in LEFT)
    time.sleep(1.5)  # long enough for the host to look at the CPU used
    return codes

@tool
def pid() -> int:
    '''The process id of the tool's process.'''
    return os.getpid()

@tool
def environment() -> dict:
    '''The whole environment the tool sees.'''
    return dict(os.environ)

@tool
def pipes(count: int) -> str:
    '''Open ``count`` pipes (two descriptors each); say how far it got.'''
    held = []
    try:
        for _ in range(count):
            held.append(os.pipe())
    except OSError as exc:
        return f"stopped after {len(held)}: {exc.strerror}"
    finally:
        for a, b in held:
            os.close(a)
            os.close(b)
    return f"opened {count}"

@tool
def write_pidfile(pid: int) -> str:
    '''Write ``pid`` into the launcher's pid file, as a hostile pack would.'''
    Path(os.environ["HOME"]).parent.joinpath("pid").write_text(str(pid))
    return "written"

@tool(timeout=1)
def stubborn(seconds: float) -> str:
    '''Leave a grandchild behind and sleep past the timeout (SIGTERM is ignored).'''
    tmp = os.environ["TMPDIR"]
    Path(tmp, "stubborn.pid").write_text(os.readlink("/proc/self"))
    code = "import os, sys, time; open(sys.argv[1], 'w').write(os.readlink('/proc/self'))"
    code += "; time.sleep(300)"
    subprocess.Popen([sys.executable, "-c", code, str(Path(tmp, "grandchild.pid"))])
    time.sleep(seconds)
    return "woke"

@hookimpl
def register_tools(register):
    marker = register.config.get("marker")
    if marker and Path(marker).exists():
        os._exit(3)
    if register.config.get("ignore_term"):  # the main thread: a tool's thread cannot
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for t in (ping, crash, quick, spin_threads, spin_children, leave, reap, pid, environment,
              pipes, write_pidfile, stubborn):
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


def _gone(pid: int, within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def _mount(host: Host) -> Any:
    return host.load("hard").tools["hard.ping"].fn.mount


# -- CPU seconds: the whole tree of the call, and only the call's ------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("spin_threads", {"seconds": 4}),
        ("spin_children", {"seconds": 0.4, "times": 20}),
        ("spin_children", {"seconds": 0.4, "times": 20, "session": True}),
    ],
    ids=["threads", "awaited-subprocesses", "subprocesses-in-own-session"],
)
def test_cpu_seconds_counts_threads_and_subprocesses_of_the_call(
    site_pack: Any, tool: str, arguments: dict[str, Any]
) -> None:
    """8 CPU seconds of work is stopped by a 1 s limit (100 s would let it finish)."""
    with host_of(site_pack, {"cpu_seconds": 1}) as host:
        toolset = host.toolset(packs=["hard"])
        result = call(toolset, tool, arguments)
        assert result.is_error, "the work finished: its CPU was not counted"
        assert "CPU seconds" in result.content, result.content
        assert call(toolset, "ping").value == "pong"


def test_cpu_used_before_a_call_is_not_charged_to_it(site_pack: Any) -> None:
    """A process left running by one call and reaped by the next does not stop the next."""
    with host_of(site_pack, {"cpu_seconds": 1}) as host:
        toolset = host.toolset(packs=["hard"])
        assert call(toolset, "leave", {"seconds": 2.5}).value == "left"
        done = Path(_mount(host).runtime.tmp, "left.done")
        deadline = time.monotonic() + 120
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert done.exists()
        reaped = call(toolset, "reap")
        assert not reaped.is_error, reaped.content
        assert reaped.value == 0


# -- issue 36's isolated survivors ------------------------------------------------------------


def test_an_empty_isolate_table_still_runs_the_pack_in_a_child(site_pack: Any) -> None:
    """``isolate = {}`` (a table of defaults) is isolation, never the host's own process."""
    with host_of(site_pack, {}) as host:
        assert host.load("hard").info.source == "isolated"
        toolset = host.toolset(packs=["hard"])
        assert call(toolset, "pid").value != os.getpid()


def test_the_child_environment_from_an_env_table_copies_nothing_of_the_host(
    site_pack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``env`` as a table the child gets those values and the minimal set, nothing else."""
    host_values = {"HOST_SECRET": "s3cret-host-value", "TERM": "host-term", "USER": "host-user"}
    host_values |= {"SHELL": "/host/shell", "LOGNAME": "host-logname"}
    for name, value in host_values.items():  # the MCP SDK's stdio client copies the last four
        monkeypatch.setenv(name, value)
    with host_of(site_pack, {"env": {"GIVEN": "given-value"}}) as host:
        seen = call(host.toolset(packs=["hard"]), "environment").value
    assert seen["GIVEN"] == "given-value"
    for name, value in host_values.items():
        assert seen.get(name) != value, f"the host's {name} reached the child"
    minimal = {"PATH", "LANG", "HOME", "TMPDIR", "PYTHONSAFEPATH", "PYTHONDONTWRITEBYTECODE"}
    expected = minimal | {"TERM", "SHELL", "USER", "LOGNAME", "GIVEN"}
    assert set(seen) - expected - {"LC_CTYPE"} == set(), seen
    assert seen["HOME"] != os.environ.get("HOME")


def test_open_files_is_enforced_in_the_child(site_pack: Any) -> None:
    """``open_files = 32``: the 16th pipe pair cannot be opened; the default allows 100."""
    with host_of(site_pack, {"open_files": 32}) as host:
        stopped = call(host.toolset(packs=["hard"]), "pipes", {"count": 50}).value
        assert stopped.startswith("stopped after"), stopped
        assert int(stopped.split()[2].rstrip(":")) < 16
    with host_of(site_pack) as host:
        assert call(host.toolset(packs=["hard"]), "pipes", {"count": 50}).value == "opened 50"


def test_repr_of_limits_never_shows_env_values() -> None:
    """Secrets given in ``env`` stay out of ``repr()`` and ``shown()`` (names only)."""
    from toolpacks.packs.isolated._settings import IsolatedConfig, IsolationLimits

    env = {"API_KEY": "sk-live-abcdef0123456789", "PLAIN": "hunter2"}
    for limits in (
        IsolationLimits(env=env),
        IsolatedConfig(requirement="toolpacks-w", env=env),
    ):
        text = repr(limits) + str(limits) + str(limits.shown())
        assert "API_KEY" in text
        assert "PLAIN" in text
        assert "sk-live-abcdef0123456789" not in text
        assert "hunter2" not in text


@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_a_stop_kills_the_childs_group_even_if_it_ignores_sigterm(
    site_pack: Any, sandbox: str
) -> None:
    """A pack that ignores SIGTERM and leaves a grandchild: after the timeout both are gone."""
    with host_of(site_pack, {"sandbox": sandbox}, ignore_term=True) as host:
        toolset = host.toolset(packs=["hard"])
        result = call(toolset, "stubborn", {"seconds": 120})
        assert result.is_error
        assert "timed out" in result.content, result.content
        tmp = _mount(host).runtime.tmp
        deadline = time.monotonic() + 30
        while not Path(tmp, "grandchild.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        child = int(Path(tmp, "stubborn.pid").read_text())
        grandchild = int(Path(tmp, "grandchild.pid").read_text())
        assert _gone(child), "the child that ignores SIGTERM still runs"
        assert _gone(grandchild), "its grandchild still runs"
        assert call(toolset, "ping").value == "pong"


def test_a_pid_a_hostile_pack_writes_into_its_pid_file_is_never_killed(site_pack: Any) -> None:
    """On a timeout the host kills only its own child, not the process the pid file names."""
    import subprocess
    import sys

    victim = subprocess.Popen(  # its own process group, in the host's session: not our child's
        [sys.executable, "-c", "import time; time.sleep(300)"], process_group=0
    )
    try:
        with host_of(site_pack, {"sandbox": "off"}) as host:
            toolset = host.toolset(packs=["hard"])
            written = call(toolset, "write_pidfile", {"pid": victim.pid})
            assert written.value == "written", written.content
            assert _mount(host).runtime.pid() is None  # the file no longer names our child
            result = call(toolset, "stubborn", {"seconds": 5})
            assert result.is_error
            time.sleep(0.5)
            assert victim.poll() is None, "the host killed a process the pack named"
    finally:
        victim.kill()
        victim.wait(30)


# -- private directories never outlive their host ---------------------------------------------

HOST_SCRIPT = """
import asyncio, os, signal, sys
from toolpacks import Host
site, how = sys.argv[1], sys.argv[2]
sys.path.insert(0, site)
host = Host({"packs": {"hard": {"isolate": True}}}, path=[site])
toolset = host.toolset(packs=["hard"])
print(asyncio.run(toolset.call("ping", {})).value, flush=True)
if how == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
# else: the interpreter exits without host.close()
"""


def _private_dirs(temp: Path) -> list[Path]:
    return sorted(temp.glob("toolpacks-hard-*"))


def _run_host(site: Any, temp: Path, how: str) -> None:
    import subprocess
    import sys

    env = {**os.environ, "TMPDIR": str(temp)}
    done = subprocess.run(
        [sys.executable, "-c", HOST_SCRIPT, str(site.root), how],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert "pong" in done.stdout, done.stderr


def test_a_host_that_exits_without_close_leaves_no_private_directory(
    site_pack: Any, tmp_path: Path
) -> None:
    """The interpreter's exit removes the directory ``close()`` would have removed."""
    temp = tmp_path / "temp"
    temp.mkdir()
    _run_host(site_pack, temp, "exit")
    assert _private_dirs(temp) == []


def test_gc_removes_the_private_directory_of_a_killed_host(
    site_pack: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host killed by SIGKILL leaves its directory; ``gc`` removes it, not a live host's."""
    import tempfile

    from toolpacks.cli._main import main

    temp = tmp_path / "temp"
    temp.mkdir()
    _run_host(site_pack, temp, "kill")
    left = _private_dirs(temp)
    assert len(left) == 1
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    with host_of(site_pack) as host:  # a live host's directory is kept
        call(host.toolset(packs=["hard"]), "ping")
        mine = _mount(host).runtime.root
        assert mine.parent == temp
        assert main(["gc"]) == 0
        assert not left[0].exists()
        assert mine.is_dir()
    assert _private_dirs(temp) == []
