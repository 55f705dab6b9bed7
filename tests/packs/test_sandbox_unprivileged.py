"""The sandbox launcher run by an unprivileged user, as most users will run it.

CI runs as root, where a PID namespace needs no user namespace; every other test of the
sandbox takes that road. Here the real launcher (``toolpacks.packs.sandbox._exec``, what a
stdio MCP server with ``sandbox = true`` goes through) runs as an unprivileged user (as
``nobody`` through ``setpriv`` when the tests run as root, with an interpreter that user can
run): Landlock refuses a file the user may read, a granted directory takes a write, the
program is the init of a PID namespace made inside a user namespace, and a daemon it starts
in a new session dies when the launcher is SIGKILLed.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from toolpacks.packs.sandbox import available
from toolpacks.packs.sandbox._rules import Rules

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="Landlock and namespaces are Linux's"),
    pytest.mark.skipif(available() is not None, reason=f"no sandbox here: {available()}"),
    pytest.mark.timeout(120),
]

PROGRAM = """\
import json, os, subprocess, sys, time
secret, inside, marker = sys.argv[1:4]
with open("/proc/self/uid_map", encoding="ascii") as src:
    seen = {"uid_map": src.read().split(), "pid": os.getpid(), "uid": os.getuid()}
try:
    with open(secret, encoding="utf-8") as src:
        seen["outside"] = src.read()
except PermissionError:
    seen["outside"] = "refused"
with open(os.path.join(inside, "made.txt"), "w", encoding="utf-8") as out:
    out.write("written")
subprocess.Popen(["sleep", marker], start_new_session=True)
print(json.dumps(seen), flush=True)
time.sleep(120)
"""


NOBODY = 65534
SETPRIV = shutil.which("setpriv")
AS_NOBODY = ["--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups", "--"]
CANDIDATES = ("/usr/bin/python3", "/usr/local/bin/python3", "/usr/bin/python3.11", sys.executable)


PROBE = "import ctypes, json, os, sys; os.stat(os.path.realpath(sys.executable))"


def _nobodys_python() -> str:
    """An interpreter ``nobody`` can run (the tests' own may live in root's home)."""
    assert SETPRIV is not None
    for candidate in CANDIDATES:
        if not os.path.exists(candidate):
            continue
        probe = subprocess.run(
            [SETPRIV, *AS_NOBODY, candidate, "-c", PROBE],
            capture_output=True, timeout=60, cwd="/",
        )  # fmt: skip
        if probe.returncode == 0:
            return candidate
    pytest.skip(f"running as root and no interpreter nobody can run among {CANDIDATES}")


@pytest.fixture(scope="module")
def unprivileged() -> Callable[[list[str]], list[str]]:
    """Prefix a command (its first word ``python``) to run it as an unprivileged user."""
    if os.geteuid() != 0:
        return lambda command: [sys.executable if w == "python" else w for w in command]
    if SETPRIV is None:
        pytest.skip("running as root and util-linux's setpriv is missing to become nobody")
    python = _nobodys_python()
    return lambda command: [SETPRIV, *AS_NOBODY, *(python if w == "python" else w for w in command)]


def _uid() -> int:
    return NOBODY if os.geteuid() == 0 else os.geteuid()


def _userns_expected() -> bool:
    """Whether this kernel lets an unprivileged process make a user namespace."""
    try:
        if int(Path("/proc/sys/user/max_user_namespaces").read_text().strip()) <= 0:
            return False
    except (OSError, ValueError):
        return False
    restrict = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
    return not (restrict.exists() and restrict.read_text().strip() == "1")


@pytest.fixture
def place() -> Iterator[Path]:
    """A directory the unprivileged user can reach (pytest's are root's, 0700)."""
    root = Path(tempfile.mkdtemp(prefix="toolpacks-unprivileged-"))
    root.chmod(0o755)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _environ() -> dict[str, str]:
    source = str(Path(__file__).resolve().parents[2] / "src")
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
    return {**keep, "PYTHONPATH": source, "HOME": "/nonexistent"}


def _readline(proc: subprocess.Popen[bytes], within: float = 60.0) -> bytes:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], within)
    assert ready, f"no line within {within} s"
    return proc.stdout.readline()


def _running(marker: str) -> list[int]:
    """Process ids (as this /proc numbers them) whose command line is ``sleep MARKER``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            words = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if words[:2] == [b"sleep", marker.encode()]:
            found.append(int(entry))
    return found


def _until(done: Callable[[], bool], within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(0.05)
    return False


def test_an_unprivileged_user_is_sandboxed_and_its_tree_ends_with_the_launcher(
    place: Path, unprivileged: Callable[[list[str]], list[str]]
) -> None:
    outside, inside, code = place / "outside", place / "inside", place / "code"
    for folder in (outside, inside, code):
        folder.mkdir(mode=0o755)
    secret = outside / "secret.txt"
    secret.write_text("the host's file")
    secret.chmod(0o644)
    if os.geteuid() == 0:
        os.chown(inside, NOBODY, NOBODY)
    program = code / "program.py"
    program.write_text(PROGRAM)
    program.chmod(0o644)

    # Without the sandbox the same user reads the file: a refusal below is Landlock's.
    control = subprocess.run(
        unprivileged(["python", "-c", f"print(open({str(secret)!r}).read())"]),
        capture_output=True, timeout=60, cwd=place, env=_environ(),
    )  # fmt: skip
    assert control.stdout.decode().strip() == "the host's file", control.stderr

    marker = f"3600.{uuid.uuid4().int % 10**9:09d}"
    rules = Rules(read=[str(code)], write=[str(inside)], network=False, mode="required")
    launcher = subprocess.Popen(
        unprivileged(
            ["python", "-m", "toolpacks.packs.sandbox._exec", "--rules", rules.dumps(),
             "--", "python", str(program), str(secret), str(inside), marker]
        ),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=place, env=_environ(),
    )  # fmt: skip
    try:
        line = _readline(launcher)
        assert line, launcher.stderr.read().decode() if launcher.stderr else ""
        seen = json.loads(line)
        assert seen["uid"] == _uid()
        assert seen["outside"] == "refused"
        assert (inside / "made.txt").read_text() == "written"
        # Popen returns once exec has begun; /proc shows the new command line a moment later
        assert _until(lambda: bool(_running(marker))), f"the daemon did not start: {seen}"
        if _userns_expected():
            assert seen["pid"] == 1, "the program is not the init of a PID namespace"
            assert seen["uid_map"] == [str(_uid()), str(_uid()), "1"], "not in a user namespace"
            launcher.send_signal(signal.SIGKILL)  # no cleanup code of ours runs
            launcher.wait(timeout=30)
            assert _until(lambda: not _running(marker)), "a daemon outlived its SIGKILLed sandbox"
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait(timeout=30)
        for pid in _running(marker):
            os.kill(pid, signal.SIGKILL)
        if launcher.stdout is not None:
            launcher.stdout.close()
        if launcher.stderr is not None:
            launcher.stderr.close()


def test_an_unprivileged_user_without_landlock_and_required_is_refused(
    place: Path, unprivileged: Callable[[list[str]], list[str]]
) -> None:
    """``required`` where the host found no sandbox: status 126 and why, nothing run."""
    rules = Rules(mode="required", unavailable="this system offers no Landlock")
    ran = place / "ran"
    proc = subprocess.run(
        unprivileged(
            ["python", "-m", "toolpacks.packs.sandbox._exec", "--rules", rules.dumps(),
             "--", "touch", str(ran)]
        ),
        capture_output=True, timeout=60, cwd=place, env=_environ(),
    )  # fmt: skip
    assert proc.returncode == 126
    assert b"required but this system offers no Landlock" in proc.stderr
    assert not ran.exists()


NO_CAPABILITIES = [
    "--securebits", "+noroot,+noroot_locked,+no_setuid_fixup,+no_setuid_fixup_locked",
    "--bounding-set", "-all", "--inh-caps", "-all", "--",
]  # fmt: skip
"""``setpriv`` words for root without any capability (a service with an empty bounding set)."""

FORKS = """\
import os, subprocess, sys
with open(os.path.join(sys.argv[1], "made.txt"), "w", encoding="utf-8") as out:
    out.write("written")
print([subprocess.run(["true"]).returncode for _ in range(3)], flush=True)
subprocess.Popen(["sleep", sys.argv[2]], start_new_session=True)
"""


@pytest.mark.skipif(os.geteuid() != 0 or SETPRIV is None, reason="root without capabilities")
def test_root_without_capabilities_gets_a_working_program_not_an_unmapped_namespace(
    place: Path,
) -> None:
    """Root may not map uid 0 into a user namespace without ``CAP_SETFCAP``.

    Entered anyway, the program ran unmapped (files could not be created) in a pending PID
    namespace whose first child was its init, so its second subprocess failed with ENOMEM.
    The launcher now tries the mapping in a throwaway child first and falls back to a
    subreaper, staying the command's parent so that the daemon it leaves ends with it.
    """
    inside, code = place / "inside", place / "code"
    inside.mkdir()
    code.mkdir()
    program = code / "forks.py"
    program.write_text(FORKS)
    rules = Rules(read=[str(code)], write=[str(inside)], mode="required")
    marker = f"3600.{uuid.uuid4().int % 10**9:09d}"
    try:
        proc = subprocess.run(
            [SETPRIV or "setpriv", *NO_CAPABILITIES, sys.executable, "-m",
             "toolpacks.packs.sandbox._exec", "--rules", rules.dumps(),
             "--", sys.executable, str(program), str(inside), marker],
            capture_output=True, timeout=60, cwd=place, env=_environ(),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr.decode()
        assert proc.stdout.decode().split() == ["[0,", "0,", "0]"]
        assert (inside / "made.txt").read_text() == "written"
        assert b"process-tree guard: subreaper" in proc.stderr
        assert _until(lambda: not _running(marker)), "a daemon outlived its subreaper"
    finally:
        for pid in _running(marker):
            os.kill(pid, signal.SIGKILL)
