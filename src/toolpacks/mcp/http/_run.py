"""Running the HTTP app in this process: the listening sockets, uvicorn, signals and the drain.

The listening socket is created here rather than by uvicorn, with ``IPPROTO_TCP`` named:
asyncio sets ``TCP_NODELAY`` only on accepted sockets whose listening socket says it is TCP,
and a socket made with protocol 0 (as uvicorn makes it for ``--workers``) leaves Nagle's
algorithm on, which holds every response's last segment for a delayed ACK (~40 ms a request).

With several workers on Linux, each worker listens on a socket of its own bound to the same
address with ``SO_REUSEPORT`` (``PortShare``): the kernel spreads new connections over the
sockets that listen, so a worker started in place of a dead one takes its share as soon as it
listens, which it does only once its app is built. The supervisor holds the port with a socket
that is bound but never listens (``reserve``): it learns the port when 0 was asked, and keeps
it for the replacements, while taking no connection nobody would accept. Only processes of the
same user can bind a port held with ``SO_REUSEPORT``. Elsewhere (no ``SO_REUSEPORT``, or one
that does not spread connections) the workers share one listening socket.

SIGTERM or SIGINT stops accepting connections; requests in flight get the grace period
(``TOOLPACKS_SERVE_GRACE`` seconds, else 10 s) to be answered, then they are cancelled.
The same signal a second time ends the grace at once. The event loop is closed without
waiting for a sync tool's thread that is still running; such threads, and calls cancelled
after the grace, are reported in the ``ServeOutcome``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from toolpacks.mcp._stdio import ServeOutcome
    from toolpacks.mcp.http._app import HttpServed
    from toolpacks.mcp.http._limits import HttpLimits

__all__ = [
    "BACKLOG",
    "REUSE_PORT",
    "PortShare",
    "grace_on_signal",
    "listen",
    "parse_bind",
    "reserve",
    "serve_here",
    "worker_listener",
]

logger = logging.getLogger("toolpacks.mcp")

BACKLOG = 2048
"""Connections the kernel queues for the listening socket before refusing more."""
REUSE_PORT = sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")
"""Whether each worker gets a listening socket of its own (Linux spreads connections over
sockets sharing a port with ``SO_REUSEPORT``; BSD and macOS do not)."""


def grace_on_signal() -> float:
    """Seconds calls in flight get after SIGTERM: ``TOOLPACKS_SERVE_GRACE``, else 10."""
    from toolpacks.mcp._stdio import GRACE_ENV, GRACE_ON_SIGNAL

    value = os.environ.get(GRACE_ENV, "")
    try:
        return max(0.0, float(value)) if value.strip() else GRACE_ON_SIGNAL
    except ValueError:
        logger.warning(
            "%s=%r is not a number of seconds; using %s", GRACE_ENV, value, GRACE_ON_SIGNAL
        )
        return GRACE_ON_SIGNAL


def parse_bind(text: str) -> tuple[str, int]:
    """``[HOST:]PORT`` as (host, port); the host defaults to ``127.0.0.1``.

    IPv6 addresses go in brackets (``[::1]:8000``). Port 0 picks a free port.

    Raises:
        ValueError: ``text`` is not of that form, or the port is out of range.
    """
    usage = f"{text!r} is not [HOST:]PORT (examples: 8000, 127.0.0.1:8000, [::1]:8000)"
    host, sep, port = text.strip().rpartition(":")
    if not sep:
        host = "127.0.0.1"
    elif host.startswith("["):
        if not host.endswith("]") or len(host) < 3:
            raise ValueError(usage)
        host = host[1:-1]
    elif not host or ":" in host:
        raise ValueError(usage + "; put an IPv6 address in brackets" if ":" in host else usage)
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{usage}; the port is a number from 0 to 65535")
    return host, int(port)


def _bound(
    family: int, address: Any, *, reuse_port: bool, backlog: int | None
) -> socket.socket:
    """A TCP socket bound to ``address``, listening unless ``backlog`` is None."""
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
        if backlog is not None:
            sock.listen(backlog)
    except BaseException:
        sock.close()
        raise
    return sock


def _resolve(host: str, port: int) -> tuple[int, Any]:
    family, _, _, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP, flags=socket.AI_PASSIVE
    )[0]
    return family, address


def listen(host: str, port: int, backlog: int = BACKLOG) -> socket.socket:
    """A TCP socket bound to ``host:port`` and listening (``SO_REUSEADDR`` set).

    Raises:
        OSError: The address cannot be resolved or bound (in use, not local, no permission).
    """
    family, address = _resolve(host, port)
    return _bound(family, address, reuse_port=False, backlog=backlog)


def reserve(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` with ``SO_REUSEPORT``, not listening.

    It holds the port (the one the kernel picked, when ``port`` is 0) for the workers'
    sockets, and, never listening, is never handed a connection.

    Raises:
        OSError: The address cannot be resolved or bound (in use, not local, no permission).
    """
    family, address = _resolve(host, port)
    return _bound(family, address, reuse_port=True, backlog=None)


@dataclass(frozen=True)
class PortShare:
    """Where a worker listens on a socket of its own: the address ``reserve`` holds."""

    family: int
    address: tuple[Any, ...]

    @classmethod
    def of(cls, reserved: socket.socket) -> PortShare:
        """The address ``reserved`` is bound to (with the port the kernel picked)."""
        return cls(reserved.family, tuple(reserved.getsockname()))

    def listen(self, backlog: int = BACKLOG) -> socket.socket:
        """A new socket listening on the address, next to the other workers' (SO_REUSEPORT).

        Raises:
            OSError: The port cannot be bound (the supervisor's hold on it is gone).
        """
        return _bound(self.family, self.address, reuse_port=True, backlog=backlog)


def worker_listener(host: str, port: int) -> tuple[socket.socket, socket.socket | PortShare]:
    """The supervisor's socket on ``host:port`` and what each worker is given to serve.

    With ``REUSE_PORT``: a reserved socket, and the ``PortShare`` each worker listens on
    itself; elsewhere: one listening socket, which every worker serves.

    Raises:
        OSError: The address cannot be resolved or bound.
    """
    if REUSE_PORT:
        reserved = reserve(host, port)
        return reserved, PortShare.of(reserved)
    sock = listen(host, port)
    return sock, sock


def tcp_listener(sock: socket.socket) -> socket.socket:
    """``sock`` as a socket that says it is TCP, so accepted connections get ``TCP_NODELAY``."""
    if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.proto != socket.IPPROTO_TCP:
        return socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())
    return sock


def bound_url(sock: socket.socket) -> str:
    """``http://HOST:PORT`` of a bound socket (the port it really got when asked for 0)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _server_class() -> type[Any]:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server with our signal handling: drain, no re-raised signal."""

        def __init__(self, config: uvicorn.Config, on_started: Callable[[], None] | None) -> None:
            super().__init__(config)
            self.on_started = on_started
            self.reason = "stopped"
            self._first_signal: int | None = None

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            """Route SIGTERM and SIGINT to ``stop`` while serving (main thread only)."""
            from toolpacks.mcp._stdio import signals_routed

            with signals_routed(self.stop):
                yield

        def stop(self, sig: signal.Signals | None = None, reason: str = "") -> None:
            """Stop accepting and drain (first call); the same signal again: stop at once."""
            if not self.should_exit:
                self.reason = sig.name if sig is not None else reason or "stopped"
                self._first_signal = sig
                logger.info("toolpacks serve: %s; finishing calls in flight", self.reason)
                self.should_exit = True
            elif sig is not None and sig == self._first_signal:
                logger.warning("toolpacks serve: %s again; stopping now", sig.name)
                self.force_exit = True

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            for sock in sockets or ():
                # asyncio listened with uvicorn's backlog, which is also how many connections
                # it accepts per loop turn (kept small); the kernel's queue stays long.
                with contextlib.suppress(OSError):
                    sock.listen(BACKLOG)
            if self.started and self.on_started is not None:
                self.on_started()

    return Server


def serve_here(
    served: HttpServed,
    sock: socket.socket,
    grace: float,
    *,
    on_started: Callable[[], None] | None = None,
    on_server: Callable[[Any], None] | None = None,
    limits: HttpLimits | None = None,
) -> ServeOutcome:
    """Serve ``served.app`` on ``sock`` until SIGTERM or SIGINT; how it ended.

    Args:
        served: The app and its counters.
        sock: A listening socket (see ``listen``).
        grace: Seconds requests in flight get once a signal arrives.
        on_started: Called once the app's lifespan has started and the socket is served.
        on_server: Given the uvicorn server before it starts (its ``stop(reason=...)`` can be
            called from the loop's thread to stop it).
        limits: The per-connection timeouts and the connection cap (default: ``HttpLimits()``).
    """
    import uvicorn

    from toolpacks.mcp._stdio import CLOSE_TIMEOUT, ServeOutcome, run_loop
    from toolpacks.mcp.http._limits import (
        HttpLimits,
        connection_cap,
        protocol_class,
        quiet_logs,
        uvicorn_options,
    )

    limits = limits or HttpLimits()
    config = uvicorn.Config(
        served.app,
        log_config=None,
        access_log=False,
        lifespan="on",
        server_header=False,
        # uvicorn types it as int, but waits with asyncio.wait_for, which takes any seconds.
        timeout_graceful_shutdown=cast("int", grace),
        http=protocol_class(limits, connection_cap(limits.max_connections), served.metrics.refuse),
        **uvicorn_options(limits),
    )
    server = _server_class()(config, on_started)
    if on_server is not None:
        on_server(server)
    listener = tcp_listener(sock)

    async def main() -> ServeOutcome:
        with quiet_logs():
            await server.serve(sockets=[listener])
        if server.force_exit and server.started:
            # uvicorn skips the app's shutdown when forced; run it, briefly, so what the
            # session managers run is cancelled in order rather than torn down with the loop.
            with contextlib.suppress(Exception, asyncio.TimeoutError):
                await asyncio.wait_for(server.lifespan.shutdown(), CLOSE_TIMEOUT)
        return ServeOutcome(server.reason, tuple(served.metrics.cancelled))

    return run_loop(main)
