"""One worker process of ``serve_http``: build the host and the app, listen, serve.

A worker is started with ``spawn``, so it builds its own host from the configuration file (a
pack with a valid manifest is not imported until one of its tools is called). On Linux it then
binds a listening socket of its own to the server's address (``PortShare``), only now that it
can answer, so no connection waits on a worker that is still starting; elsewhere it serves the
socket the supervisor shares. It tells the supervisor it is ready through a pipe, and drains and
exits by itself when that pipe closes (the supervisor is gone).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolpacks.mcp.http._app import build_http_app
from toolpacks.mcp.http._limits import HttpLimits
from toolpacks.mcp.http._run import PortShare, serve_here

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from toolpacks.host._host import Host
    from toolpacks.mcp._stdio import ServeOutcome
    from toolpacks.mcp.http._app import HttpServed

__all__ = ["READY", "WorkerSpec", "build_app", "exit_abandoning", "worker_main"]

logger = logging.getLogger("toolpacks.mcp")

READY = b"ready"
"""What a worker sends the supervisor once it serves."""


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker needs to build and serve the app (sent to it pickled)."""

    config: str | Mapping[str, Any] | None
    agents: tuple[str, ...]
    token: str | None = field(repr=False)
    allowed_origins: tuple[str, ...] | None
    allowed_hosts: tuple[str, ...] | None
    max_body_bytes: int
    expose_errors: bool
    grace: float
    log_level: int | None
    limits: HttpLimits = field(default_factory=HttpLimits)
    metrics_dir: str | None = None


def build_app(host: Host, spec: WorkerSpec) -> HttpServed:
    """The HTTP app of ``spec``'s agents on ``host``."""
    return build_http_app(
        host,
        spec.agents,
        spec.token,
        allowed_origins=spec.allowed_origins,
        allowed_hosts=spec.allowed_hosts,
        max_body_bytes=spec.max_body_bytes,
        expose_errors=spec.expose_errors,
    )


def exit_abandoning(outcome: ServeOutcome) -> None:
    """Leave the process now: calls were abandoned or threads are stuck (see ``_server``)."""
    from toolpacks.mcp._server import _exit_abandoning

    _exit_abandoning(outcome)


def _worker_logging(level: int | None, secrets: tuple[str, ...]) -> None:
    """Print toolpacks' log records on stderr, redacted, as the command line does."""
    if level is None:
        return
    from toolpacks.core._logscrub import scrub_record

    class Redact(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            scrub_record(record, secrets)  # the token, and token-like strings
            return True

    class Format(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            text = super().format(record)
            return f"toolpacks: {record.levelname.lower()}: [worker {os.getpid()}] {text}"

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(Format("%(message)s"))
    handler.addFilter(Redact())
    root = logging.getLogger("toolpacks")
    root.addHandler(handler)
    root.setLevel(level)


def _own_socket(share: PortShare) -> socket.socket:
    """This worker's listening socket on ``share``'s address; exit 1 when it cannot bind."""
    try:
        return share.listen()
    except OSError as exc:
        logger.error("toolpacks serve: this worker cannot listen on %s: %s", share.address, exc)
        sys.exit(1)


def worker_main(spec: WorkerSpec, where: socket.socket | PortShare, pipe: Connection) -> None:
    """One worker process: build the host and app, serve ``where``, exit with the outcome.

    ``where`` is the listening socket all workers share, or the address this worker listens
    on with a socket of its own.
    """
    if spec.metrics_dir is not None:  # before prometheus_client is imported: it reads it then
        from toolpacks.mcp.http._metrics import MULTIPROC_ENV

        os.environ[MULTIPROC_ENV] = spec.metrics_dir
    _worker_logging(spec.log_level, (spec.token,) if spec.token else ())
    from toolpacks.host._host import Host as HostClass

    try:
        host = HostClass(spec.config)
        served = build_app(host, spec)
    except Exception:
        logger.exception("toolpacks serve: this worker cannot build the agents' toolsets")
        sys.exit(1)
    sock = _own_socket(where) if isinstance(where, PortShare) else where
    server: list[Any] = []

    def started() -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        pipe.send_bytes(READY)

        def watch_supervisor() -> None:
            with contextlib.suppress(EOFError, OSError):
                while True:
                    pipe.recv_bytes()
            with contextlib.suppress(RuntimeError):  # the loop has closed: nothing to stop
                loop.call_soon_threadsafe(lambda: server[0].stop(reason="supervisor gone"))

        threading.Thread(target=watch_supervisor, name="toolpacks-supervisor", daemon=True).start()

    outcome = serve_here(
        served,
        sock,
        spec.grace,
        on_started=started,
        on_server=server.append,
        limits=spec.limits,
    )
    if outcome.abandoned or outcome.stuck_threads:
        host.close()
        exit_abandoning(outcome)
    host.close()
