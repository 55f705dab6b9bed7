"""``serve_http``: the HTTP app on one process or on N worker processes on one address.

Before anything is bound, the agents' toolsets are built once here, so an unknown agent, a
pack that failed or an untrusted configuration stops the command before it listens. With one
worker that app is served in this process. With more, this process binds the address, starts
the workers (``spawn``: each builds its own host), says where it serves once every worker
answers, and supervises them. On Linux each worker listens on a socket of its own
(``SO_REUSEPORT``, see ``_run``), so new connections spread over the workers and a replacement
takes its share; this process only holds the port. Elsewhere the workers share its socket.

- a worker that dies after it started serving is replaced (the others keep answering): at
  once the first time, then after a delay that doubles with each quick death (up to
  ``BACKOFF_MAX``), back to at once when a worker has stayed up ``STABLE_AFTER`` seconds;
  one that dies before it ever served stops the whole server, since the next would too;
- SIGTERM or SIGINT is passed on to every worker, which drains as a single process does;
  nothing is restarted once stopping has begun; a worker still running after the grace
  period and a margin is killed;
- a worker whose supervisor disappears (its pipe closes) drains and exits by itself;
- the workers share their metrics through ``prometheus_client``'s multiprocess mode, in a
  directory of this server's own, removed when it stops.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolpacks.exceptions import ConfigError
from toolpacks.mcp.http._app import DEFAULT_MAX_BODY_BYTES
from toolpacks.mcp.http._guard import check_token, is_loopback
from toolpacks.mcp.http._limits import BODY_TIMEOUT, HEADER_TIMEOUT, MAX_CONNECTIONS, HttpLimits
from toolpacks.mcp.http._run import (
    PortShare,
    bound_url,
    grace_on_signal,
    listen,
    serve_here,
    worker_listener,
)
from toolpacks.mcp.http._sessions import SESSIONS_NEED_ONE_WORKER
from toolpacks.mcp.http._worker import READY, build_app, exit_abandoning, worker_main
from toolpacks.mcp.http._worker import WorkerSpec as _Spec

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

    from toolpacks.host._host import Host


__all__ = ["serve_http"]

logger = logging.getLogger("toolpacks.mcp")

STOP_MARGIN = 5.0
"""Seconds a worker gets beyond the grace period to exit before it is killed."""
BACKOFF_FIRST = 0.5
"""Seconds before replacing a worker that died soon after the one before it in its place."""
BACKOFF_MAX = 30.0
"""The longest wait before a worker is replaced."""
STABLE_AFTER = 30.0
"""Seconds a worker must stay up for its replacement to be started at once again."""



def _refuse_open_bind(host: str, token: str | None, built: Host, agents: Sequence[str]) -> None:
    config = built.config.config
    open_agents = [a for a in agents if a not in config.agents or config.agents[a].token is None]
    if token is None and config.auth is None and open_agents and not is_loopback(host):
        raise ConfigError(
            f"refusing to serve on {host} without a token: anyone who can reach that address "
            f"could call every tool of {', '.join(open_agents)}. Set a token (toolpacks serve "
            '--token-env VAR, serve_http(token=...), or [agents.NAME] token = { env = "VAR" }), '
            "an [auth] table (issuer, audience), or bind a loopback address such as 127.0.0.1"
        )


def serve_http(
    config: str | os.PathLike[str] | Mapping[str, Any] | None,
    agents: Sequence[str],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: int = 1,
    token: str | None = None,
    allowed_origins: Sequence[str] | None = None,
    allowed_hosts: Sequence[str] | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    expose_errors: bool = False,
    announce: Callable[[str], None] | None = None,
    log_level: int | None = None,
    header_timeout: float = HEADER_TIMEOUT,
    body_timeout: float = BODY_TIMEOUT,
    max_connections: int = MAX_CONNECTIONS,
    max_connections_per_client: int | None = None,
) -> int:
    """Serve the agents of ``config`` over MCP streamable HTTP until SIGTERM or SIGINT.

    What ``toolpacks serve --http`` runs; see ``http_app`` for the endpoints and checks.

    Args:
        config: The configuration (a path or a mapping; None: found in the working directory).
        agents: The agents to serve.
        host: The address to bind. Anything but a loopback address needs a ``token``; then
            any ``Host`` header is accepted unless ``allowed_hosts`` says otherwise.
        port: The port (0: any free port; ``announce`` tells which).
        workers: Worker processes; each builds its own toolsets (``/metrics`` sums them all).
        token: The bearer token every MCP request must carry.
        allowed_origins: As for ``http_app``.
        allowed_hosts: As for ``http_app`` (default: loopback names on a loopback address).
        max_body_bytes: As for ``http_app``.
        expose_errors: As for ``http_app``.
        announce: Called with one line saying where the server listens, once it does.
        log_level: With workers, the level at which each worker prints toolpacks' log
            records to stderr (None: leave logging alone).
        header_timeout: Seconds a client has to send a request's headers (from its
            connection, or from the previous response); then the connection is closed.
        body_timeout: Seconds a client has to send a request's body once its headers are in.
        max_connections: Open connections per worker; more are answered 503 at once. Lowered
            to fit the open-file limit (``ulimit -n``), with a warning.
        max_connections_per_client: Open connections per worker from one client address;
            more are answered 503 at once (None: nine tenths of ``max_connections``).

    Returns:
        The exit status: 0 after a clean stop; ``STUCK_EXIT_CODE`` (3) when calls were
        abandoned after the grace period; 1 when a worker could not start. With one worker
        and calls abandoned, the process exits at once instead (a stuck thread would keep
        it alive).

    Raises:
        ConfigError: A non-loopback address without a token, an unknown agent, or an invalid
            configuration.
        PackError: A pack an agent names failed to load.
        ValueError: Bad arguments (no agent, a token that cannot be sent, ``workers`` < 1).
        OSError: The address cannot be bound.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a whole number of processes, 1 or more, not {workers!r}")
    if token is not None:
        check_token(token)
    if allowed_hosts is None and not is_loopback(host):
        allowed_hosts = ["*"]  # a token protects it; the names clients use are not known here
    spec = _Spec(
        config=os.fspath(config) if isinstance(config, os.PathLike) else config,
        agents=tuple(agents),
        token=token,
        allowed_origins=tuple(allowed_origins) if allowed_origins is not None else None,
        allowed_hosts=tuple(allowed_hosts) if allowed_hosts is not None else None,
        max_body_bytes=max_body_bytes,
        expose_errors=expose_errors,
        grace=grace_on_signal(),
        log_level=log_level,
        limits=HttpLimits(
            header_timeout=header_timeout,
            body_timeout=body_timeout,
            max_connections=max_connections,
            max_connections_per_client=max_connections_per_client,
        ),
    )
    from toolpacks.host._host import Host as HostClass

    with HostClass(spec.config) as built:
        _refuse_open_bind(host, token, built, spec.agents)
        if workers > 1 and built.config.config.settings.http_sessions:
            raise ConfigError(SESSIONS_NEED_ONE_WORKER)
        served = build_app(built, spec)  # fails here, before binding, if an agent cannot serve
        if workers == 1:
            sock = listen(host, port)
            _announce(announce, sock, served.agents, workers)
            outcome = serve_here(served, sock, spec.grace, limits=spec.limits)
            if outcome.abandoned or outcome.stuck_threads:
                built.close()
                exit_abandoning(outcome)
            return 0
    # Each worker builds its own host; this one only proved that the agents can be built.
    sock, where = worker_listener(host, port)
    metrics_dir = tempfile.mkdtemp(prefix="toolpacks-metrics-")
    try:
        with sock:
            return _Supervisor(
                dataclasses.replace(spec, metrics_dir=metrics_dir),
                sock,
                workers,
                share=where if isinstance(where, PortShare) else None,
                on_ready=lambda: _announce(announce, sock, served.agents, workers),
            ).run()
    finally:
        shutil.rmtree(metrics_dir, ignore_errors=True)


def _announce(
    announce: Callable[[str], None] | None,
    sock: socket.socket,
    agents: tuple[str, ...],
    workers: int,
) -> None:
    if announce is None:
        return
    url = bound_url(sock)
    paths = ", ".join(f"{url}/agents/{a}/mcp" for a in agents)
    single = f" (also {url}/mcp)" if len(agents) == 1 else ""
    plural = "s" if workers > 1 else ""
    announce(f"serving {paths}{single} with {workers} worker{plural}; SIGTERM or Ctrl-C stops")


# -- the supervisor ----------------------------------------------------------------------------


@dataclass
class _Worker:
    process: BaseProcess
    pipe: Connection
    started: float
    ready: bool = False


class _Backoff:
    """How long to wait before replacing a worker of one slot, from how long the last lasted."""

    def __init__(
        self,
        first: float = BACKOFF_FIRST,
        cap: float = BACKOFF_MAX,
        stable_after: float = STABLE_AFTER,
    ) -> None:
        self.first = first
        self.cap = cap
        self.stable_after = stable_after
        self.quick_deaths = 0

    def delay(self, uptime: float) -> float:
        """Seconds to wait before starting the next worker, after one that ran ``uptime`` s."""
        if uptime >= self.stable_after:
            self.quick_deaths = 0
        self.quick_deaths += 1
        if self.quick_deaths == 1:
            return 0.0
        return float(min(self.cap, self.first * 2 ** (self.quick_deaths - 2)))


WorkerTarget = Callable[["_Spec", "socket.socket | PortShare", "Connection"], None]
"""What a worker process runs: ``worker_main`` (tests give another)."""


class _Supervisor:
    """Starts the workers, replaces those that die, and stops them all on a signal.

    ``sock`` is the listening socket the workers share, or, with ``share``, the socket that
    holds the port while each worker listens on ``share`` itself. ``on_ready`` is called once,
    when every first worker has said it serves.
    """

    def __init__(
        self,
        spec: _Spec,
        sock: socket.socket,
        count: int,
        *,
        target: WorkerTarget | None = None,
        backoff: Callable[[], _Backoff] = _Backoff,
        share: PortShare | None = None,
        on_ready: Callable[[], None] | None = None,
    ) -> None:
        self.spec = spec
        self.sock = sock
        self.share = share
        self.on_ready = on_ready
        self.count = count
        self.target = target or worker_main
        self.backoffs = [backoff() for _ in range(count)]
        import multiprocessing

        self.context = multiprocessing.get_context("spawn")
        self.signals: list[signal.Signals] = []
        self.starts: list[tuple[int, float, float, int | None]] = []
        """Each worker started: (slot, when (monotonic), the delay it waited for, its pid)."""
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_write, False)

    def _start(self, slot: int, delay: float = 0.0) -> _Worker:
        parent_end, child_end = self.context.Pipe()
        process = self.context.Process(
            target=self.target,
            args=(self.spec, self.share or self.sock, child_end),
            name="toolpacks-serve-worker",
            daemon=False,
        )
        process.start()
        child_end.close()
        now = time.monotonic()
        self.starts.append((slot, now, delay, process.pid))
        return _Worker(process, parent_end, now)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.request_stop(signal.Signals(signum))

    def request_stop(self, sig: signal.Signals = signal.SIGTERM) -> None:
        """Stop as on ``sig`` (safe from a signal handler or another thread)."""
        self.signals.append(sig)
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b"\0")

    def run(self) -> int:
        """Serve until a signal; the exit status."""
        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        workers: list[_Worker] = []
        try:
            workers = [self._start(slot) for slot in range(self.count)]
            if not self._watch(workers):
                self._stop(workers, signal.SIGTERM)
                return 1
            # SIGTERM whatever this process got: on Ctrl-C the workers had SIGINT from the
            # terminal already, and the same signal twice would end their grace at once.
            return self._stop(workers, signal.SIGTERM)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            for worker in workers:
                worker.pipe.close()
                self._forget(worker)
            os.close(self._wake_read)
            os.close(self._wake_write)

    def _watch(self, workers: list[_Worker]) -> bool:
        """Keep the workers running until a signal (True), or until one cannot start (False)."""
        from multiprocessing.connection import wait

        due: dict[int, tuple[float, float]] = {}  # slot -> (when to start its worker, delay)
        while not self.signals:
            objects: list[Any] = [self._wake_read]
            for slot, worker in enumerate(workers):
                if slot in due:
                    continue
                objects += [worker.process.sentinel] + ([] if worker.ready else [worker.pipe])
            now = time.monotonic()
            timeout = min([5.0] + [max(0.0, when - now) for when, _ in due.values()])
            wait(objects, timeout=timeout)
            if self.signals:
                break  # stopping: nothing is restarted now
            for slot, (when, delay) in list(due.items()):
                if time.monotonic() >= when:
                    del due[slot]
                    workers[slot] = self._start(slot, delay)
            for slot, worker in enumerate(workers):
                if slot in due:
                    continue
                if not worker.ready and _poll(worker.pipe):
                    worker.ready = True
                    self._all_ready(workers, due)
                if worker.process.is_alive() or self.signals:
                    continue
                worker.process.join()
                code = worker.process.exitcode
                self._forget(worker)
                if not worker.ready:
                    logger.error(
                        "toolpacks serve: worker %s could not start (exit status %s); stopping",
                        worker.process.pid,
                        code,
                    )
                    return False
                delay = self.backoffs[slot].delay(time.monotonic() - worker.started)
                logger.warning(
                    "toolpacks serve: worker %s exited (status %s); starting another%s",
                    worker.process.pid,
                    code,
                    f" in {delay:g} s" if delay else "",
                )
                worker.pipe.close()
                if delay:
                    due[slot] = (time.monotonic() + delay, delay)
                else:
                    workers[slot] = self._start(slot)
        return True

    def _all_ready(self, workers: list[_Worker], due: Mapping[int, object]) -> None:
        """Call ``on_ready`` (once) when every worker serves."""
        if self.on_ready is not None and not due and all(w.ready for w in workers):
            on_ready, self.on_ready = self.on_ready, None
            on_ready()

    def _forget(self, worker: _Worker) -> None:
        """Drop a dead worker's live gauges from the shared metrics."""
        pid = worker.process.pid
        if self.spec.metrics_dir is None or pid is None or worker.process.is_alive():
            return
        from prometheus_client import multiprocess

        with contextlib.suppress(OSError):
            multiprocess.mark_process_dead(pid, self.spec.metrics_dir)  # type: ignore[no-untyped-call]

    def _stop(self, workers: list[_Worker], sig: signal.Signals) -> int:
        """Pass ``sig`` on, wait for every worker (a bounded time), and sum up their exits."""
        sent = len(self.signals)
        for worker in workers:
            _signal(worker.process, sig)
        deadline = time.monotonic() + self.spec.grace + STOP_MARGIN
        for worker in workers:
            while worker.process.is_alive() and time.monotonic() < deadline:
                worker.process.join(min(0.2, max(0.0, deadline - time.monotonic())))
                if len(self.signals) > sent:  # signalled again: end the workers' grace now
                    sent = len(self.signals)
                    for other in workers:
                        _signal(other.process, sig)
            if worker.process.is_alive():
                logger.error(
                    "toolpacks serve: worker %s did not stop; killing it", worker.process.pid
                )
                worker.process.kill()
                worker.process.join()
        clean = [_stopped_cleanly(w, sig) for w in workers]
        if all(clean):
            return 0
        from toolpacks.mcp._server import STUCK_EXIT_CODE

        return STUCK_EXIT_CODE


def _stopped_cleanly(worker: _Worker, sig: signal.Signals) -> bool:
    """Exit status 0, or stopped by ``sig`` before it served (its handlers were not set yet)."""
    code = worker.process.exitcode
    if code == 0 or (not worker.ready and code == -sig):
        return True
    logger.error("toolpacks serve: worker %s exited with status %s", worker.process.pid, code)
    return False


def _poll(pipe: Connection) -> bool:
    try:
        return pipe.poll() and pipe.recv_bytes() == READY
    except (EOFError, OSError):
        return False


def _signal(process: BaseProcess, sig: signal.Signals) -> None:
    if process.pid is not None and process.is_alive():
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, sig)


