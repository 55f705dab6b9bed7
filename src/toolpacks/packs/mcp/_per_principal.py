"""A mounted server's calls over one connection per principal, for credential headers.

When headers of an ``[mcp_servers.NAME]`` table carry the principal's own credential
(``{ credential = "github", format = "Bearer {}" }``, see ``_credential_headers``), the server's
tools declare those credentials: the toolset resolves the call's principal's own values before
the call, or refuses it with how to connect (a call with no principal fails closed). The call
then goes over a connection of that principal, keyed by its subject, whose requests carry that
principal's values and no one else's.

- **Listing.** The mount's own connection (the host-level one) lists the tools, follows list
  changes and serves prompts and resources. It sends only the other headers (literal and
  ``{ env = ... }``), never a principal's value; a server that needs a user's credential even
  to list its tools needs a literal or ``env`` header as well.
- **Bounds.** At most ``IDLE_LIMIT`` principals' connections stay open while idle (the least
  recently used is closed first); connections in use are never closed under a call. A
  principal whose value changed (set again, an OAuth token refreshed) gets a new connection,
  and the old one is closed once its calls end. All close with the host.
- **Secrets.** Each principal's values (and the headers made of them) are masked in that
  connection's messages and in log records for as long as the connection lives.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from toolpacks.core import _logscrub
from toolpacks.core._credentials import CallCredentials, CredentialError
from toolpacks.core._secrets import REDACTED, scrub
from toolpacks.exceptions import PackError
from toolpacks.packs.mcp._connection import McpConnection, ServerGoneError
from toolpacks.packs.mcp._credential_headers import CredentialHeader, credential_headers
from toolpacks.packs.mcp._spec import ServerSpec

if TYPE_CHECKING:
    import mcp_types

__all__ = ["IDLE_LIMIT", "PrincipalConnections", "connection_for"]

IDLE_LIMIT = 32
"""Principals' connections kept open while idle (least recently used closed first)."""
_OPENERS = 4
"""Principals' connections being opened at once, per server (more calls wait their turn)."""


def connection_for(
    spec: ServerSpec, headers: Mapping[str, str | Mapping[str, str]], **options: Any
) -> McpConnection:
    """The mount's connection: per principal when ``headers`` carry a credential.

    Args:
        spec: How to reach the server (its headers resolved, credential ones left out).
        headers: The ``headers`` table as configured.
        **options: ``McpConnection``'s other arguments.
    """
    found = credential_headers(headers)
    if found:
        return PrincipalConnections(spec, found, **options)
    return McpConnection(spec, **options)


@dataclass(eq=False, slots=True)
class _Held:
    """One principal's connection, and how many calls use it now."""

    connection: McpConnection
    headers: Mapping[str, str]
    busy: int = 0
    retired: bool = False


@dataclass(eq=False, slots=True)
class _Claim:
    """One call's wait for its connection: who releases it if the call is given up."""

    held: _Held | None = None
    abandoned: bool = False


class PrincipalConnections(McpConnection):
    """The mount's connection (lists tools), routing each call to its principal's own.

    Args:
        spec: How to reach the server, without the credential headers.
        headers: The headers whose values are the principal's credentials.
        limit: Idle principals' connections kept open (``IDLE_LIMIT`` by default).
        **options: ``McpConnection``'s other arguments (``on_lost``, ``on_tools``, ``elicit``,
            ``may_restart``, ``scrub``); principals' connections get ``elicit``,
            ``may_restart`` and ``scrub``.
    """

    def __init__(
        self,
        spec: ServerSpec,
        headers: tuple[CredentialHeader, ...],
        *,
        limit: int | None = None,
        **options: Any,
    ) -> None:
        super().__init__(spec, **options)
        self.credential_headers = headers
        """The headers carrying the call's principal's credentials."""
        self.credentials = tuple(dict.fromkeys(h.credential for h in headers))
        """The credential names the server's tools declare."""
        self.limit = IDLE_LIMIT if limit is None else limit
        self._elicit = options.get("elicit")
        self._base_scrub: Callable[[str], str] | None = options.get("scrub")
        self._held: OrderedDict[str, _Held] = OrderedDict()
        self._retired: set[_Held] = set()
        self._starting: dict[str, threading.Lock] = {}
        self._pool_lock = threading.Lock()
        self._shut = False
        self._opener = concurrent.futures.ThreadPoolExecutor(
            _OPENERS, thread_name_prefix=f"toolpacks-mcp-open:{spec.name}"
        )
        """Opens principals' connections (each start blocks a thread until it is up), so
        that slow starts never hold the event loop's default executor."""

    def start(self) -> list[mcp_types.Tool]:
        """Connect and list the tools, with no principal's value (see the module's notes).

        Raises:
            PackError: As ``McpConnection.start``; a refusal (HTTP 401/403) says that the
                listing carries no user's credential.
        """
        try:
            return super().start()
        except PackError as exc:
            if "refused the request (HTTP 40" not in str(exc):
                raise
            headers = ", ".join(h.header for h in self.credential_headers)
            raise PackError(
                f"{exc}. Its tools are listed without any user's credential ({headers} "
                "carry each call's principal's own value, per call only): a server that "
                "needs one even to list its tools needs a literal or { env = ... } header "
                "as well"
            ) from None

    def open_subjects(self) -> list[str]:
        """The subjects with a connection open now, least recently used first."""
        with self._pool_lock:
            return list(self._held)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        tag: Any = None,
        check: Callable[[], None] | None = None,
    ) -> mcp_types.CallToolResult:
        """Call ``name`` over the connection of the call's principal (``tag.context``).

        Raises:
            CredentialError: The call carries no principal's credentials (fail closed), or
                a value cannot be sent in a header.
            ServerGoneError: The principal's connection could not be opened (the message
                names the server, never a value), or the host closed.
        """
        subject, headers, secrets = self._headers_of(tag)
        spec = replace(self.spec, headers={**self.spec.headers, **headers})
        with self._pool_lock:  # open already: no thread needed
            held = self._reuse(subject, spec)
        if held is None:
            held = await self._opened(subject, spec, secrets)
        try:
            return await held.connection.call_tool(name, arguments, tag, check)
        finally:
            done = self._release(held)
            if done:
                await asyncio.to_thread(_close_all, done)

    async def _opened(self, subject: str, spec: ServerSpec, secrets: list[str]) -> _Held:
        """The principal's connection, opened on an opener thread; busy for this call."""
        claim = _Claim()
        try:
            opening = self._opener.submit(self._claim, claim, subject, spec, secrets)
        except RuntimeError:  # the opener was shut down: the host closed
            raise ServerGoneError(self._gone_message()) from None
        try:
            return await asyncio.wrap_future(opening)
        except asyncio.CancelledError:  # the caller gave up while it opened: not busy after all
            with self._pool_lock:
                claim.abandoned, opened = True, claim.held
            if opened is not None:  # opened before the thread could see it was given up
                await asyncio.to_thread(_close_all, self._release(opened))
            raise

    def _headers_of(self, tag: Any) -> tuple[str, dict[str, str], list[str]]:
        """The subject, its credential headers and the values to mask, from the call."""
        server = self.spec.name
        context = getattr(tag, "context", None)
        held = getattr(context, "credentials", None)
        if not isinstance(held, CallCredentials) or not held.subject:
            raise CredentialError(
                f"The MCP server '{server}' is called with the user's own credential(s) "
                f"{', '.join(self.credentials)} (mcp_servers.{server}.headers), and this call "
                "carries none for a principal: call it through a Toolset whose host has "
                "[credentials] configured, with ToolContext(principal=Principal(...)) or "
                "through an authenticated server."
            )
        values = held.values()
        headers: dict[str, str] = {}
        secrets: list[str] = []
        for header in self.credential_headers:
            value = values.get(header.credential)
            if value is None:
                raise CredentialError(
                    f"The credential {header.credential!r} (sent by the MCP server "
                    f"'{server}' in {header.header}) is not connected for {held.subject!r}."
                )
            if any(ch in value for ch in "\r\n\0"):
                raise CredentialError(
                    f"The value of the credential {header.credential!r} of {held.subject!r} "
                    f"holds a line break or NUL, so it cannot be sent in the header "
                    f"{header.header} of the MCP server '{server}'; set it again with "
                    f"`toolpacks credentials set {header.credential} --subject {held.subject}`."
                )
            headers[header.header] = header.value(value)
            secrets += [value, headers[header.header]]
        return held.subject, headers, secrets

    # -- the pool (worker threads) ---------------------------------------------------------

    def _claim(self, claim: _Claim, subject: str, spec: ServerSpec, secrets: list[str]) -> _Held:
        """``_acquire`` for a call that may be given up meanwhile (then released here)."""
        held = self._acquire(subject, spec, secrets)
        with self._pool_lock:
            claim.held, abandoned = held, claim.abandoned
        if abandoned:
            _close_all(self._release(held))
        return held

    def _acquire(self, subject: str, spec: ServerSpec, secrets: list[str]) -> _Held:
        """The principal's connection for ``spec``'s headers, opened if needed; marked busy."""
        with self._pool_lock:
            held = self._reuse(subject, spec)
            if held is not None:
                return held
            gate = self._starting.setdefault(subject, threading.Lock())
        with gate:  # one start per subject at a time; the others then reuse it
            with self._pool_lock:
                held = self._reuse(subject, spec)
            if held is not None:
                return held
            connection = self._connect(subject, spec, secrets)
            with self._pool_lock:
                doomed: list[_Held] = []
                if self._shut:
                    doomed.append(_Held(connection, spec.headers))
                else:
                    old = self._held.pop(subject, None)
                    if old is not None:  # its value changed: closed once its calls end
                        self._retire(old, doomed)
                    held = self._held[subject] = _Held(connection, spec.headers, busy=1)
                    doomed += self._evict()
        _close_all(doomed)
        if held is None:
            raise ServerGoneError(self._gone_message())
        return held

    def _reuse(self, subject: str, spec: ServerSpec) -> _Held | None:
        """The open connection of ``subject`` with these very headers (under the lock)."""
        if self._shut:
            raise ServerGoneError(self._gone_message())
        held = self._held.get(subject)
        if held is None or held.headers != spec.headers:
            return None
        held.busy += 1
        self._held.move_to_end(subject)
        return held

    def _connect(self, subject: str, spec: ServerSpec, secrets: list[str]) -> McpConnection:
        """Start a connection for ``subject`` (its headers in ``spec``)."""
        masked = [s for s in dict.fromkeys(secrets) if s]

        def scrubbed(text: str) -> str:
            base = self._base_scrub(text) if self._base_scrub is not None else text
            return scrub(base, masked, REDACTED)

        connection = McpConnection(
            spec, elicit=self._elicit, may_restart=self.may_restart, scrub=scrubbed
        )
        _logscrub.remember(connection, masked)
        try:
            connection.start()
        except PackError as exc:
            raise ServerGoneError(
                f"{scrubbed(str(exc))} (the call was made for {subject!r}, with its own "
                f"credential(s) {', '.join(self.credentials)})"
            ) from None
        except Exception as exc:  # a fault of ours or the SDK's: an error result, not a crash
            raise ServerGoneError(
                scrubbed(f"{spec.describe()} could not be reached for {subject!r} ({exc!r})")
            ) from None
        return connection

    def _retire(self, held: _Held, doomed: list[_Held]) -> None:
        if held.busy:
            held.retired = True
            self._retired.add(held)
        else:
            doomed.append(held)

    def _evict(self) -> list[_Held]:
        """Idle connections beyond ``limit``, least recently used first (under the lock)."""
        idle = [subject for subject, held in self._held.items() if held.busy == 0]
        return [self._held.pop(subject) for subject in idle[: max(0, len(idle) - self.limit)]]

    def _release(self, held: _Held) -> list[_Held]:
        """A call on ``held`` ended: what to close now."""
        with self._pool_lock:
            held.busy -= 1
            if held.busy == 0 and held.retired:
                self._retired.discard(held)
                return [held]
            if self._shut:
                return []
            return self._evict()

    def close(self, timeout: float = 10.0) -> None:
        """Close every principal's connection, then the mount's own."""
        with self._pool_lock:
            self._shut = True
            doomed = [*self._held.values(), *self._retired]
            self._held.clear()
            self._retired.clear()
        _close_all(doomed, timeout)
        self._opener.shutdown(wait=False, cancel_futures=True)
        super().close(timeout)


def _close_all(doomed: list[_Held], timeout: float = 10.0) -> None:
    for held in doomed:
        held.connection.close(timeout)
