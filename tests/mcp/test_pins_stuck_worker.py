"""A worker that will not stop is killed when the server stops (issue 36, turn-3 survivors).

The supervisor of ``serve --http --workers N`` passes SIGTERM to its workers and waits their
grace (plus a margin). A worker that ignores SIGTERM — a tool blocking its loop, a library
that swallowed the signal — must not keep the server alive: it is killed, the server's status
is 3 (something did not stop cleanly), and no worker process is left behind.
"""

from __future__ import annotations

import os
import textwrap
import threading
import time
from pathlib import Path

import pytest

from .conftest import HTTP_TIMEOUT, pid_alive

STUCK = '''
"""A stand-in worker that ignores SIGTERM."""
import os
import signal
import time
from pathlib import Path

MARKS = Path(os.environ["TOOLPACKS_TEST_MARKS"])


def ignore_sigterm(spec, sock, pipe):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    pipe.send_bytes(b"ready")
    (MARKS / f"ready-{os.getpid()}").write_text("")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.05)
    (MARKS / f"outlasted-{os.getpid()}").write_text("")  # nobody killed it in 60 s
    os._exit(9)
'''


@pytest.fixture
def marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "stuck_worker_hooks.py").write_text(textwrap.dedent(STUCK))
    monkeypatch.syspath_prepend(str(tmp_path))
    found = tmp_path / "marks"
    found.mkdir()
    monkeypatch.setenv("TOOLPACKS_TEST_MARKS", str(found))
    return found


def test_a_worker_ignoring_sigterm_is_killed_and_the_status_is_3(marks: Path) -> None:
    from .test_http_workers import supervisor

    sup = supervisor("ignore_sigterm", 2, module="stuck_worker_hooks", grace=0.5)
    sock = sup.sock

    def ready() -> set[int]:
        return {int(p.name.split("-", 1)[1]) for p in marks.glob("ready-*")}

    def stop_when_ready() -> None:
        deadline = time.monotonic() + HTTP_TIMEOUT
        while len(ready()) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        sup.request_stop()

    watcher = threading.Thread(target=stop_when_ready, daemon=True)
    watcher.start()
    try:
        code = sup.run()  # the main thread's: the supervisor routes signals
    finally:
        watcher.join(HTTP_TIMEOUT)
        sock.close()
        pids = ready()
        alive = [pid for pid in pids if pid_alive(pid)]
        for pid in alive:  # never leave a stand-in behind, whatever the assertions say
            os.kill(pid, 9)
    assert len(pids) == 2
    assert not list(marks.glob("outlasted-*")), "the stuck workers were never killed"
    assert code == 3
    assert not alive, "a worker outlived the server"
