"""The worker supervisor of ``serve --http --workers N``: restarts, backoff, stopping, metrics.

The supervisor tests run ``_Supervisor`` in this process with stand-in workers (small
functions in a module written for the test, started with ``spawn`` like real workers): one
that dies right after it is ready, one that cannot start, one that serves until SIGTERM.
The metrics test runs ``toolpacks serve --workers 2`` for real. Every wait is bounded by
readiness; the only timing assertion is a lower bound the supervisor guarantees.
"""

from __future__ import annotations

import asyncio
import os
import signal
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import HTTP_TIMEOUT, HttpServer, pid_alive, worker_pids

HOOKS = '''
"""Stand-in workers for the supervisor tests."""

import os
import signal
import time
from pathlib import Path

MARKS = Path(os.environ["TOOLPACKS_TEST_MARKS"])


def _mark(name):
    (MARKS / f"{name}-{os.getpid()}").write_text("")


def crash_after_ready(spec, sock, pipe):
    if spec.metrics_dir:  # a live gauge's file, as a real worker leaves one
        Path(spec.metrics_dir, f"gauge_livesum_{os.getpid()}.db").write_bytes(b"")
    pipe.send_bytes(b"ready")
    os._exit(7)


def serve_until_sigterm(spec, sock, pipe):
    code = int(os.environ.get("TOOLPACKS_TEST_EXIT", "0"))

    def on_term(signum, frame):
        _mark("term")
        os._exit(code)

    signal.signal(signal.SIGTERM, on_term)
    pipe.send_bytes(b"ready")
    _mark("ready")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (MARKS / "die").exists():
            os._exit(0)
        time.sleep(0.01)
    os._exit(9)


def first_cannot_start(spec, sock, pipe):
    try:
        os.close(os.open(MARKS / "claimed", os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        serve_until_sigterm(spec, sock, pipe)
    else:
        os._exit(1)
'''


@pytest.fixture
def hooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The stand-in workers' module, importable by spawned children; their marks directory."""
    (tmp_path / "supervisor_hooks.py").write_text(textwrap.dedent(HOOKS))
    monkeypatch.syspath_prepend(str(tmp_path))  # spawn gives children this sys.path
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("TOOLPACKS_TEST_MARKS", str(marks))
    return marks


def supervisor(target: str, count: int, **kwargs: Any) -> Any:
    """A ``_Supervisor`` of ``count`` stand-in workers running ``supervisor_hooks.TARGET``."""
    import importlib

    from toolpacks.mcp.http._limits import HttpLimits
    from toolpacks.mcp.http._run import listen
    from toolpacks.mcp.http._workers import _Spec, _Supervisor

    module = importlib.import_module(kwargs.pop("module", "supervisor_hooks"))
    spec = _Spec(
        config=None,
        agents=("solo",),
        token=None,
        allowed_origins=None,
        allowed_hosts=None,
        max_body_bytes=1024,
        expose_errors=False,
        grace=kwargs.pop("grace", 5.0),
        log_level=None,
        limits=HttpLimits(),
        metrics_dir=kwargs.pop("metrics_dir", None),
    )
    sock = listen("127.0.0.1", 0)
    return _Supervisor(spec, sock, count, target=getattr(module, target), **kwargs)


def run_until(sup: Any, ready: Callable[[], bool], then: Callable[[], None] | None = None) -> int:
    """``sup.run()`` here; from a thread, once ``ready()``: ``then()`` or a stop request."""
    failed: list[str] = []
    finished = threading.Event()

    def watch() -> None:
        deadline = time.monotonic() + HTTP_TIMEOUT
        while not ready():
            if time.monotonic() > deadline:
                failed.append("never ready")
                break
            time.sleep(0.01)
        (then or sup.request_stop)()
        if not finished.wait(HTTP_TIMEOUT):  # bounded: a supervisor that goes on is stopped
            failed.append("the supervisor did not return by itself")
            sup.request_stop()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        code: int = sup.run()
    finally:
        finished.set()
        sup.sock.close()
        watcher.join(HTTP_TIMEOUT)
    assert not failed, failed
    return code


def marks(directory: Path, name: str) -> set[int]:
    return {int(p.name.split("-", 1)[1]) for p in directory.glob(f"{name}-*")}


# -- backoff ----------------------------------------------------------------------------------


def test_the_backoff_doubles_with_each_quick_death_up_to_its_cap_and_resets_when_stable() -> None:
    """The first death is replaced at once; quick deaths wait longer; a stable worker resets."""
    from toolpacks.mcp.http._workers import _Backoff

    backoff = _Backoff(first=0.5, cap=3.0, stable_after=30.0)
    assert [backoff.delay(1.0) for _ in range(6)] == [0.0, 0.5, 1.0, 2.0, 3.0, 3.0]
    assert backoff.delay(30.0) == 0.0  # it stayed up: start again at once
    assert backoff.delay(0.1) == 0.5


def test_a_worker_that_keeps_crashing_is_restarted_ever_later(hooks: Path, tmp_path: Path) -> None:
    """Each quick death waits longer before the next start; dead workers' gauges are dropped."""
    from toolpacks.mcp.http._workers import _Backoff

    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    sup = supervisor(
        "crash_after_ready",
        1,
        backoff=lambda: _Backoff(first=0.05, cap=0.2, stable_after=60.0),
        metrics_dir=str(metrics_dir),
    )
    run_until(sup, lambda: len(sup.starts) >= 6)
    delays = [delay for _, _, delay, _ in sup.starts[:6]]
    assert delays == [0.0, 0.0, 0.05, 0.1, 0.2, 0.2]
    for (_, before, _, _), (_, after, delay, _) in zip(sup.starts, sup.starts[1:], strict=False):
        assert after - before >= delay  # the supervisor waited at least that long
    assert not list(metrics_dir.glob("gauge_livesum_*.db"))


# -- starting and stopping --------------------------------------------------------------------


def test_sigterm_reaches_every_worker_and_a_clean_stop_is_status_0(hooks: Path) -> None:
    """A stop request is passed to all the workers; each drains; the exit status is 0."""
    sup = supervisor("serve_until_sigterm", 3)
    code = run_until(sup, lambda: len(marks(hooks, "ready")) == 3)
    assert code == 0
    assert marks(hooks, "term") == marks(hooks, "ready")
    assert len(sup.starts) == 3


def test_a_worker_that_fails_its_drain_makes_the_status_3(
    hooks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker exiting non-zero after SIGTERM (calls abandoned) is reported: status 3."""
    monkeypatch.setenv("TOOLPACKS_TEST_EXIT", "3")
    sup = supervisor("serve_until_sigterm", 2)
    assert run_until(sup, lambda: len(marks(hooks, "ready")) == 2) == 3


def test_a_worker_that_cannot_start_stops_the_others_with_status_1(hooks: Path) -> None:
    """One worker exits before it is ready: no replacement, the others are stopped, status 1."""
    sup = supervisor("first_cannot_start", 2)
    code = run_until(sup, lambda: True, then=lambda: None)
    assert code == 1
    assert len(sup.starts) == 2
    assert not any(pid_alive(pid) for *_, pid in sup.starts)  # the one serving was stopped


def test_nothing_is_restarted_once_stopping_has_begun(
    hooks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that dies while the supervisor is stopping is not replaced.

    The death and the stop request are both put between the supervisor's wake-up and its
    look at the workers, where a signal can land in a real server.
    """
    import multiprocessing.connection

    real_wait = multiprocessing.connection.wait
    sup = supervisor("serve_until_sigterm", 1)

    def wait(objects: list[Any], timeout: float | None = None) -> list[Any]:
        if not marks(hooks, "ready"):
            return list(real_wait(objects, 0.05))  # look again soon
        if not (hooks / "die").exists():
            (hooks / "die").write_text("")  # the worker exits 0 by itself
            pid = sup.starts[-1][3]
            deadline = time.monotonic() + HTTP_TIMEOUT
            while pid_alive(pid):  # gone, not only its pipes closed: is_alive() says False
                assert time.monotonic() < deadline, "the worker did not exit"
                time.sleep(0.01)
            sup.signals.append(signal.SIGTERM)
        return list(real_wait(objects, timeout))

    monkeypatch.setattr(multiprocessing.connection, "wait", wait)
    code = run_until(sup, lambda: True, then=lambda: None)
    assert code == 0
    assert len(sup.starts) == 1


# -- metrics across workers -------------------------------------------------------------------


def _total(text: str, name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` whose labels include ``labels``."""
    total = 0.0
    wanted = [f'{k}="{v}"' for k, v in labels.items()]
    for line in text.splitlines():
        if line.startswith(name + "{") and all(w in line for w in wanted):
            total += float(line.rsplit(" ", 1)[1])
    return total


@pytest.fixture
def two_workers(tmp_path: Path) -> Iterator[HttpServer]:
    server = HttpServer(tmp_path, ["--agent", "alpha", "--workers", "2"])
    try:
        yield server
    finally:
        server.kill()


def test_metrics_sum_every_worker_and_never_go_backwards(
    two_workers: HttpServer, tmp_path: Path
) -> None:
    """Whichever worker takes the scrape, it counts every worker's calls, dead ones included."""
    server = two_workers
    url = server.url()
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
    }

    def call(name: str, **arguments: Any) -> Any:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        body["params"] = {"name": name, "arguments": arguments}  # type: ignore[assignment]
        answer = httpx.post(url, json=body, headers=headers, timeout=HTTP_TIMEOUT)
        return answer.json()["result"]["structuredContent"]["result"]

    def scrape() -> str:
        return httpx.get(f"{server.base}/metrics", timeout=HTTP_TIMEOUT).text

    def on_the_free_worker() -> httpx.Client:
        """A keep-alive connection a worker whose loop is free has taken.

        With a socket per worker (SO_REUSEPORT) the kernel may hand a new connection to the
        blocked worker: a probe that gets no answer is dropped and a new connection tried.
        The probe is ``/healthz``, so a dropped one changes no count when it is answered late.
        """
        for _ in range(60):
            client = httpx.Client(timeout=HTTP_TIMEOUT)
            try:
                client.get(f"{server.base}/healthz", timeout=1.0)
                return client
            except httpx.TimeoutException:
                client.close()
        raise AssertionError(f"no free worker answered: {server.stderr()}")

    def adds_on_the_free_worker() -> None:
        client = on_the_free_worker()
        try:
            for i in range(3):
                body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
                body["params"] = {"name": "add", "arguments": {"a": i, "b": 1}}  # type: ignore[assignment]
                answer = client.post(url, json=body, headers=headers)
                assert answer.json()["result"]["structuredContent"]["result"] == i + 1
        finally:
            client.close()

    def scrape_the_free_worker() -> str:
        client = on_the_free_worker()
        try:
            return client.get(f"{server.base}/metrics").text
        finally:
            client.close()

    def wait_for(path: Path) -> None:
        deadline = time.monotonic() + HTTP_TIMEOUT
        while not path.exists():
            assert time.monotonic() < deadline, server.stderr()
            time.sleep(0.01)

    async def blocked(index: int, during: Callable[[], Any]) -> tuple[int, Any]:
        """Block one worker's loop with ``block_loop``; ``during()`` runs on the other."""
        started, release = tmp_path / f"started{index}", tmp_path / f"release{index}"
        held = asyncio.ensure_future(
            asyncio.to_thread(call, "block_loop", started=str(started), release=str(release))
        )
        await asyncio.to_thread(wait_for, started)
        try:
            seen = await asyncio.to_thread(during)
        finally:
            release.write_text("go")
        return await held, seen

    # Phase 1: one worker is blocked; three adds go to the other. The counts are now split.
    first_blocked, _ = asyncio.run(
        asyncio.wait_for(blocked(1, adds_on_the_free_worker), 60)
    )
    # Phase 2: block either worker and scrape the other: it must see both workers' counts.
    _, text = asyncio.run(asyncio.wait_for(blocked(2, scrape_the_free_worker), 60))
    assert _total(text, "toolpacks_mcp_calls_total", tool="add", outcome="ok") == 3
    assert _total(text, "toolpacks_mcp_calls_total", tool="block_loop", outcome="ok") == 1
    assert _total(text, "toolpacks_mcp_call_duration_seconds_count", tool="add") == 3
    assert _total(text, "toolpacks_mcp_call_duration_seconds_bucket", tool="add", le="+Inf") == 3

    seen = []
    for i in range(6):
        call("add", a=i, b=1)
        seen.append(_total(scrape(), "toolpacks_mcp_calls_total", tool="add", outcome="ok"))
    assert seen == [4, 5, 6, 7, 8, 9]

    os.kill(first_blocked, signal.SIGKILL)  # its counts stay: a dead worker's are kept
    deadline = time.monotonic() + HTTP_TIMEOUT
    while len(worker_pids(server.proc.pid, "spawn_main")) != 2 or first_blocked in worker_pids(
        server.proc.pid, "spawn_main"
    ):
        assert time.monotonic() < deadline, server.stderr()
        time.sleep(0.05)
    after = [
        _total(scrape(), "toolpacks_mcp_calls_total", tool="add", outcome="ok") for _ in range(4)
    ]
    assert after == [9, 9, 9, 9]
