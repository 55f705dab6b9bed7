"""What one connection may cost a worker: read timeouts, a connection cap, bounded logs.

uvicorn bounds the idle time between requests (``timeout_keep_alive``) and the size of a
request's headers (``h11_max_incomplete_event_size``), but not the time a client takes to
send them: a client that sends half a header, or a body one byte a second, holds a
connection, and its file descriptor, for ever. A thousand of them exhaust the usual limit of
1,024 open files, and then asyncio fails every ``accept()`` and logs each failure. So:

- ``LimitedH11Protocol`` closes a connection whose request headers are not all in within
  ``header_timeout`` seconds of the connection (or of the previous response), or whose body
  is not all in within ``body_timeout`` seconds of its headers;
- it answers ``503`` and closes at once a connection beyond the cap (``max_connections``,
  lowered to fit the process's open-file limit, so ``accept()`` never runs out), and one
  beyond the cap of its client address (``max_connections_per_client``, by default nine
  tenths of the cap), so one address holding half-open connections cannot take every
  connection of a worker (a reverse proxy in front is one address: raise it, or set it to
  the cap, there);
- asyncio accepts at most ``ACCEPT_BATCH`` connections per loop turn (not uvicorn's 2,048),
  so the connections accepted and not yet counted stay few;
- a keep-alive connection is answered ``Connection: close`` on its ``max_requests``-th request
  (as nginx's ``keepalive_requests``): clients that stay connected reconnect now and then, so
  with several workers their connections spread again over the workers that listen then (a
  worker started in place of a dead one gets its share of them, not only of new clients);
- ``quiet_logs`` collapses a log record repeated many times a second into a few, and a count
  of those suppressed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ACCEPT_BATCH",
    "HttpLimits",
    "RateLimit",
    "connection_cap",
    "per_client_cap",
    "protocol_class",
    "quiet_logs",
]

logger = logging.getLogger("toolpacks.mcp")

ACCEPT_BATCH = 16
"""Connections asyncio accepts per turn of the event loop (uvicorn's ``backlog``)."""
FD_RESERVE = 64
"""Open files kept free for what tools and the server open besides connections."""
HEADER_TIMEOUT = 10.0
"""Default seconds a request's headers may take."""
BODY_TIMEOUT = 30.0
"""Default seconds a request's body may take once its headers are in."""
MAX_CONNECTIONS = 1000
"""Default open connections per worker."""
MAX_REQUESTS = 1000
"""Default requests one keep-alive connection serves before it is closed."""
_CLOSE = (b"connection", b"close")


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """The per-connection bounds of one worker (see the module docstring)."""

    header_timeout: float = HEADER_TIMEOUT
    """Seconds a request's headers may take, from the connection or the previous response."""
    body_timeout: float = BODY_TIMEOUT
    """Seconds a request's body may take once its headers are in."""
    keep_alive: float = 5.0
    """Seconds an idle connection is kept open between requests."""
    max_connections: int = MAX_CONNECTIONS
    """Open connections per worker; more are answered 503 (lowered to fit the file limit)."""
    max_header_bytes: int = 16 * 1024
    """The largest request head (request line and headers) read before answering 400."""
    max_requests: int = MAX_REQUESTS
    """Requests a keep-alive connection serves; the last is answered ``Connection: close``."""
    max_connections_per_client: int | None = None
    """Open connections per worker from one client address; more are answered 503. None:
    nine tenths of the worker's cap (at least 1), so one address never holds them all."""

    def __post_init__(self) -> None:
        for name in ("header_timeout", "body_timeout", "keep_alive"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
        for name in (
            "max_connections",
            "max_header_bytes",
            "max_requests",
            "max_connections_per_client",
        ):
            value = getattr(self, name)
            if name == "max_connections_per_client" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number, 1 or more, not {value!r}")


def connection_cap(wanted: int) -> int:
    """``wanted``, lowered so that the connections fit in this process's open-file limit.

    Room is kept for the files open now, for ``FD_RESERVE`` more, and for the connections
    asyncio may accept in a few loop turns before they are counted (and refused).
    """
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):  # pragma: no cover - not POSIX
        return wanted
    if soft == resource.RLIM_INFINITY:
        return wanted
    budget = soft - _open_files() - FD_RESERVE - 3 * ACCEPT_BATCH
    if budget < wanted:
        logger.warning(
            "toolpacks serve: the open-file limit (%s) allows %s connections per worker, "
            "not %s; raise it (ulimit -n) to serve more",
            soft,
            max(budget, 1),
            wanted,
        )
    return max(1, min(wanted, budget))


def _open_files() -> int:
    for directory in ("/proc/self/fd", "/dev/fd"):
        with contextlib.suppress(OSError):
            return len(os.listdir(directory))
    return 0  # pragma: no cover


def per_client_cap(limits: HttpLimits, cap: int) -> int:
    """Connections one client address may hold open in a worker whose cap is ``cap``."""
    wanted = limits.max_connections_per_client
    if wanted is None:
        wanted = cap - cap // 10
    return max(1, min(wanted, cap))


_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"retry-after: 1\r\n"
    b"connection: close\r\n"
    b"content-length: 47\r\n\r\n"
    b"Too many connections to this worker; try again\n"
)


def protocol_class(
    limits: HttpLimits, cap: int, on_refused: Callable[[str], None]
) -> type[asyncio.Protocol]:
    """The h11 protocol of uvicorn, with the header and body deadlines and the connection cap.

    Args:
        limits: The timeouts.
        cap: Open connections allowed (see ``connection_cap``); beyond it: 503 and close.
        on_refused: Called with ``"busy"``, ``"busy_client"``, ``"header_timeout"`` or
            ``"body_timeout"`` for each connection closed for that reason (the metrics count
            them).
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    per_client = per_client_cap(limits, cap)
    by_client: dict[str, int] = {}  # open connections per client address, in this worker

    class LimitedH11Protocol(H11Protocol):
        """Closes connections that are too many or too slow to send their request."""

        _deadline: asyncio.TimerHandle | None = None
        _phase: tuple[object, object] | None = None
        _served: int = 0
        _counted: object = None
        _address: str | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > cap:
                on_refused("busy")
                quiet_log(
                    logging.WARNING,
                    "toolpacks serve: %s connections are open, the most this worker takes; "
                    "answering 503",
                    cap,
                )
                self._refuse(transport)
                return
            peer = transport.get_extra_info("peername")
            address = peer[0] if isinstance(peer, tuple) and peer else None
            if isinstance(address, str):
                held = by_client.get(address, 0)
                if held >= per_client:
                    on_refused("busy_client")
                    quiet_log(
                        logging.WARNING,
                        "toolpacks serve: %s holds %s connections, the most one client "
                        "address may (--max-connections-per-client); answering 503",
                        address,
                        per_client,
                    )
                    self._refuse(transport)
                    return
                by_client[address] = held + 1
                self._address = address
            self._watch()

        def _refuse(self, transport: asyncio.Transport) -> None:
            transport.write(_BUSY)
            self.conn.send(h11.ConnectionClosed())
            transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._watch()

        def handle_events(self) -> None:
            super().handle_events()  # from data_received, or after a pipelined response
            if self.cycle is not self._counted and self.cycle is not None:
                self._count_request()

        def _count_request(self) -> None:
            """Count a new request; make the last one allowed close the connection.

            uvicorn answers ``Connection: close`` to a request that carries it, and closes
            the connection once that response is sent.
            """
            self._counted = self.cycle
            self._served += 1
            if self._served >= limits.max_requests and _CLOSE not in self.headers:
                self.headers.append(_CLOSE)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._watch()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel()
            address, self._address = self._address, None
            if address is not None:
                left = by_client.get(address, 1) - 1
                if left > 0:
                    by_client[address] = left
                else:
                    by_client.pop(address, None)
            super().connection_lost(exc)

        def _watch(self) -> None:
            """Arm the deadline of what the client must send now, once per phase."""
            state = self.conn.their_state
            if self.transport.is_closing() or state not in (h11.IDLE, h11.SEND_BODY):
                self._cancel()
                return
            phase = (state, self.cycle)  # a new cycle is a new request: a new deadline
            if phase == self._phase:
                return
            self._cancel()
            self._phase = phase
            if state is h11.IDLE:
                self._deadline = self.loop.call_later(
                    limits.header_timeout, self._expire, "header_timeout"
                )
            else:
                self._deadline = self.loop.call_later(
                    limits.body_timeout, self._expire, "body_timeout"
                )

        def _cancel(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            self._deadline = None
            self._phase = None

        def _expire(self, reason: str) -> None:
            self._deadline = None
            if self.transport.is_closing():
                return
            waiting = self.conn.their_state is h11.IDLE and not self.conn.trailing_data[0]
            if reason == "header_timeout" and waiting and self.cycle is not None:
                reason = ""  # an idle keep-alive connection: closed without a word
            if reason:
                on_refused(reason)
                quiet_log(logging.INFO, "toolpacks serve: closing a connection: %s", reason)
            self.transport.close()

    return LimitedH11Protocol


def uvicorn_options(limits: HttpLimits) -> dict[str, Any]:
    """The ``uvicorn.Config`` arguments that carry ``limits``."""
    return {
        "timeout_keep_alive": limits.keep_alive,
        "h11_max_incomplete_event_size": limits.max_header_bytes,
        "backlog": ACCEPT_BATCH,
    }


# -- bounded logs -------------------------------------------------------------------------------


class RateLimit(logging.Filter):
    """At most ``burst`` records of each message per ``period`` seconds, then a count.

    A message is its logger, level and format string (not the formatted text, so a flood of
    the same failure from many clients is one message). The first record passed after some
    were suppressed says how many were.
    """

    def __init__(
        self, burst: int = 5, period: float = 10.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.burst = burst
        self.period = period
        self.clock = clock
        self._seen: dict[tuple[str, int, str], list[float]] = {}
        """By message: [start of its period, records passed in it, records suppressed]."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether ``record`` is written (it may gain the count of those suppressed)."""
        key = (record.name, record.levelno, str(record.msg))
        now = self.clock()
        seen = self._seen.get(key)
        if seen is None or now - seen[0] >= self.period:
            suppressed = int(seen[2]) if seen is not None else 0
            if len(self._seen) > 1000:  # many distinct messages: forget the old periods
                self._seen = {k: v for k, v in self._seen.items() if now - v[0] < self.period}
            self._seen[key] = [now, 1, 0]
            if suppressed:
                record.msg = f"{record.getMessage()} ({suppressed} similar records suppressed)"
                record.args = None
            return True
        if seen[1] < self.burst:
            seen[1] += 1
            return True
        seen[2] += 1
        return False


_quiet = logging.getLogger("toolpacks.mcp.http")
_QUIETED = ("uvicorn.error", "asyncio", "toolpacks.mcp.http", "mcp.server.streamable_http")
"""Loggers that write per connection or per request: the floods a client can cause."""


def quiet_log(level: int, message: str, *args: object) -> None:
    """Log on a rate-limited logger (see ``quiet_logs``)."""
    _quiet.log(level, message, *args)


@contextlib.contextmanager
def quiet_logs(limit: RateLimit | None = None) -> Iterator[RateLimit]:
    """Rate-limit the per-connection loggers, and the event loop's error reports, while in.

    Must be entered in the loop's thread, with the loop running.
    """
    limit = limit or RateLimit()
    loggers = [logging.getLogger(name) for name in _QUIETED]
    for each in loggers:
        each.addFilter(limit)
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        record = logging.LogRecord("asyncio", logging.ERROR, "", 0, context["message"], None, None)
        if not limit.filter(record):
            return
        context = {**context, "message": record.getMessage()}
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handle)
    try:
        yield limit
    finally:
        loop.set_exception_handler(previous)
        for each in loggers:
            each.removeFilter(limit)
