"""Resolving a tool's declared credentials for the call's principal, before it runs.

A ``CredentialVault`` holds the ``[credentials]`` tables and a store. For a call of a tool
that declares credentials it reads exactly those, for the call's principal only, refreshes
an expired OAuth access token (keeping the rotated refresh token), and hands the tool a
``CallCredentials`` in its context. Missing ones end the call before it runs with an error
result naming each credential and how to connect it. Values read are registered with the log
scrubber for as long as the call's credentials live.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from toolpacks.core._credentials import CallCredentials
from toolpacks.core._result import ToolResult, error_result
from toolpacks.exceptions import ConfigError
from toolpacks.hookspecs import CredentialStore

if TYPE_CHECKING:
    from toolpacks.core._context import ToolContext
    from toolpacks.core.define._definition import ToolDefinition
    from toolpacks.host.credentials._settings import CredentialConfig

__all__ = ["CredentialVault", "attach", "check_declared", "equipped", "store_of"]

logger = logging.getLogger("toolpacks.credentials")


def check_declared(
    tools: Iterable[ToolDefinition], configs: Mapping[str, CredentialConfig]
) -> None:
    """Refuse tools declaring a credential no ``[credentials.NAME]`` table defines.

    Raises:
        ConfigError: Naming the tool, the credential and the table to add.
    """
    for tool in tools:
        for name in getattr(tool, "credentials", ()):
            if name not in configs:
                where = f"{tool.pack}.{tool.name}" if tool.pack else tool.name
                raise ConfigError(
                    f"tool {where!r} declares the credential {name!r}, which no "
                    f'[credentials.{name}] table defines; add one (kind = "secret" or '
                    f'kind = "oauth2") to the configuration, or leave the tool out'
                )


class CredentialVault:
    """The ``[credentials]`` tables and their store, as a toolset uses them.

    Args:
        configs: ``[credentials.NAME]`` tables by name.
        store: The store, or a function making it on first use (so that a toolset whose
            tools are never called opens no file).
        connect_url: A function giving the URL where a subject connects a credential (the
            HTTP server's ``/connect/NAME`` page), or None.
    """

    def __init__(
        self,
        configs: Mapping[str, CredentialConfig],
        store: CredentialStore | Callable[[], CredentialStore],
        *,
        connect_url: Callable[[str], str | None] | None = None,
    ) -> None:
        self.configs = dict(configs)
        made = hasattr(store, "get") and not isinstance(store, type)  # a store, not a maker
        self._store: CredentialStore | None = store if made else None  # type: ignore[assignment]
        self._make: Callable[[], CredentialStore] | None = None if made else store  # type: ignore[assignment]
        self.connect_url = connect_url
        self.elicit: Callable[[str, str], str | None] | None = None
        """Set by an HTTP server: the URL where ``subject`` connects ``name`` (a ticket bound
        to the subject in it); a call missing only ``oauth2`` credentials then raises
        ``ConnectRequired`` (an MCP URL elicitation) instead of returning an error result."""

    @property
    def store(self) -> CredentialStore:
        """The store (opened on first use)."""
        if self._store is None:
            assert self._make is not None
            self._store = self._make()
        return self._store

    def how_to_connect(self, name: str, subject: str | None) -> str:
        """What a user does to connect ``name``: the command, or the connect URL."""
        config = self.configs.get(name)
        url = self.connect_url(name) if self.connect_url else None
        url = url or (config.connect_url if config else None)
        who = subject or "SUBJECT"
        verb = "login" if config is not None and config.kind == "oauth2" else "set"
        command = f"`toolpacks credentials {verb} {name} --subject {who}`"
        if url:
            return f"connect it at {url} (or run {command})"
        return f"connect it with {command}" + (
            " (the value is read from stdin)" if verb == "set" else ""
        )

    def value(self, name: str, subject: str) -> str | None:
        """The value a tool gets for ``name`` and ``subject``, or None when there is none.

        For ``oauth2``, a fresh access token: an expired one is refreshed (the rotated
        refresh token stored); a refused refresh forgets the token, so the user connects again.
        """
        from toolpacks.host.credentials import _oauth

        stored = self.store.get(name, subject)
        config = self.configs[name]
        if stored is None or config.kind != "oauth2":
            return stored
        token, expired = _oauth.access_token(stored)
        if not expired:
            return token
        try:
            renewed = _oauth.refresh(name, config, stored)
        except _oauth.OAuthError as exc:
            logger.info("credential %r of %r must be connected again: %s", name, subject, exc)
            self.store.delete(name, subject)
            return None
        self.store.set(name, subject, renewed)
        return _oauth.access_token(renewed)[0]

    def _ask_to_connect(self, exposed: str, absent: list[str], subject: str) -> None:
        """Raise ``ConnectRequired`` when a server can send the user to connect them all."""
        from toolpacks.core._credentials import ConnectRequired

        if self.elicit is None or any(self.configs[n].kind != "oauth2" for n in absent):
            return
        asks = []
        for name in absent:
            url = self.elicit(name, subject)
            if url is None:
                return
            text = f"Connect your {self.configs[name].description or name} account"
            asks.append({"name": name, "url": url, "message": f"{text} for tool '{exposed}'."})
        raise ConnectRequired(f"Tool '{exposed}' needs {', '.join(absent)} connected", asks)

    def missing(self, tool: ToolDefinition, subject: str) -> list[str]:
        """The tool's declared credentials ``subject`` has not connected."""
        return [n for n in tool.credentials if self.store.get(n, subject) is None]

    async def attach(
        self, exposed: str, tool: ToolDefinition, ctx: ToolContext
    ) -> ToolContext | ToolResult:
        """The call's context with the tool's credentials, or the error result refusing it."""
        from toolpacks.core import _logscrub
        from toolpacks.host.credentials._store import CredentialStoreError

        principal = ctx.principal
        if principal is None:
            return error_result(
                "denied",
                f"Tool '{exposed}' acts for a user (it uses the credential(s) "
                f"{', '.join(tool.credentials)}) and this call has no principal; call it with "
                "ToolContext(principal=Principal(...)) or through an authenticated server.",
                tool_name=exposed,
                call_id=ctx.call_id,
            )
        values: dict[str, str] = {}
        absent: list[str] = []
        for name in tool.credentials:
            try:
                got = await asyncio.to_thread(self.value, name, principal.subject)
            except CredentialStoreError as exc:
                logger.error("credential %r of %r: %s", name, principal.subject, exc)
                got = None
            if got is None:
                absent.append(name)
            else:
                values[name] = got
        if absent:
            self._ask_to_connect(exposed, absent, principal.subject)
            steps = "; ".join(f"{n}: {self.how_to_connect(n, principal.subject)}" for n in absent)
            return error_result(
                "denied",
                f"Tool '{exposed}' needs the user's credential(s) {', '.join(absent)}, not "
                f"connected for {principal.subject!r}. Ask the user to connect: {steps}. "
                "Then call the tool again.",
                tool_name=exposed,
                call_id=ctx.call_id,
                exception_type="toolpacks.CredentialRequired",
            )
        held = CallCredentials(tool.credentials, principal.subject, values)
        _logscrub.remember(held, values.values())
        return replace(ctx, credentials=held)


async def attach(
    vault: CredentialVault | None, exposed: str, tool: ToolDefinition, ctx: ToolContext
) -> ToolContext | ToolResult:
    """``vault.attach``, or the refusal of a toolset that has no credentials configured."""
    if vault is None:
        return error_result(
            "denied",
            f"Tool '{exposed}' uses the user's credential(s) {', '.join(tool.credentials)}, "
            "and this toolset has none configured: build it with a Host whose configuration "
            "has a [credentials.NAME] table for each (or set toolset.credentials).",
            tool_name=exposed,
            call_id=ctx.call_id,
        )
    return await vault.attach(exposed, tool, ctx)


_T = TypeVar("_T")


def store_of(hook: Any) -> CredentialStore:
    """A pack's store (``toolpacks_credential_store``), else the default one."""
    from toolpacks.host.credentials._store import SqliteCredentialStore

    supplied = None if hook is None else hook.toolpacks_credential_store()
    return supplied if supplied is not None else SqliteCredentialStore()


def equipped(toolset: _T, configs: Mapping[str, CredentialConfig], hook: Any = None) -> _T:
    """``toolset`` with the credentials of ``[credentials]`` (a step of ``Host.toolset``).

    ``hook`` is the host's pluggy hook relay: the first loaded pack's
    ``toolpacks_credential_store`` serves, else the default encrypted SQLite store.

    Raises:
        ConfigError: A tool declares a credential no ``[credentials.NAME]`` table defines.
    """
    held: Any = toolset  # a Toolset (not imported: it imports this module)
    tools = [entry.tool for entry in held.entries()]
    from toolpacks.host.credentials._relay import RELAYING, RelayedCredentials

    if RELAYING.get():  # an isolated pack's child: the host resolves and sends them
        if any(t.credentials for t in tools):
            held.credentials = RelayedCredentials()
        return toolset
    check_declared(tools, configs)
    if configs and any(t.credentials for t in tools):
        held.credentials = CredentialVault(configs, lambda: store_of(hook))
    return toolset
