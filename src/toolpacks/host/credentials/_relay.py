"""Credentials relayed to an isolated pack's child, per call, never the store.

The host resolves a tool's declared credentials for the call's principal (``_vault``), and
the isolated pack's connection sends exactly those values with the call, in the request's
``_meta`` under ``META_KEY``, over the pipe to the child the host started. The child
(``toolpacks serve --pack``) serves its toolset with ``RelayedCredentials``: a call gets
the relayed values its tool declared, and nothing else. Mounted MCP servers that are not
the host's own children never get them.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from toolpacks.core._credentials import (
    PRINCIPAL_META_KEY,
    RELAY_META_KEY,
    CallCredentials,
    relayed_meta,
)
from toolpacks.core._principal import Principal
from toolpacks.core._result import ToolResult, error_result

if TYPE_CHECKING:
    from toolpacks.core._context import ToolContext
    from toolpacks.core.define._definition import ToolDefinition

__all__ = [
    "CHILD",
    "META_KEY",
    "RELAYED",
    "RELAYING",
    "RelayedCredentials",
    "relayed_meta",
    "relaying",
    "take",
]

META_KEY = RELAY_META_KEY
"""The ``_meta`` key of a call's relayed credentials (name to value)."""
RELAYED: contextvars.ContextVar[Mapping[str, str] | None] = contextvars.ContextVar(
    "toolpacks_relayed_credentials", default=None
)
"""The credentials the host sent with the request being answered (in the child)."""


RELAYING: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "toolpacks_relaying_credentials", default=False
)
"""True while ``serve --pack`` builds its toolset: credentials come from the host."""


@contextlib.contextmanager
def relaying() -> Iterator[None]:
    """Build toolsets whose credentials the host relays (``toolpacks serve --pack``).

    Their tools' credential names need no ``[credentials]`` table here (the host checked
    them), and a call gets only what the host sent with it.
    """
    reset = RELAYING.set(True)
    try:
        yield
    finally:
        RELAYING.reset(reset)


CHILD: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "toolpacks_isolated_child", default=False
)
"""True while ``serve --pack`` serves: the host that started it says who each call is for."""


def take(params: Any) -> Principal | None:
    """Note the credentials a request's ``_meta`` relays (in a child serving ``--pack``).

    Returns:
        The call's principal the host relayed, only in a child serving ``--pack`` (``CHILD``);
        any other server ignores a principal a client writes in ``_meta``.
    """
    meta = params.get("_meta") if isinstance(params, dict) else None
    values = meta.get(META_KEY) if isinstance(meta, dict) else None
    if isinstance(values, dict) and all(isinstance(v, str) for v in values.values()):
        RELAYED.set(values)
    else:
        RELAYED.set(None)
    who = meta.get(PRINCIPAL_META_KEY) if isinstance(meta, dict) and CHILD.get() else None
    if not isinstance(who, dict):
        return None
    subject, scopes = who.get("subject"), who.get("scopes")
    if not isinstance(subject, str) or not subject or not isinstance(scopes, list):
        return None
    if not all(isinstance(scope, str) for scope in scopes):
        return None
    return Principal(subject, scopes=frozenset(scopes))


class RelayedCredentials:
    """The child's side: a call gets what the host relayed for it, of its declared ones."""

    async def attach(
        self, exposed: str, tool: ToolDefinition, ctx: ToolContext
    ) -> ToolContext | ToolResult:
        """The call's context with the relayed values, or an error result without them."""
        from toolpacks.core import _logscrub

        values = RELAYED.get() or {}
        absent = [n for n in tool.credentials if n not in values]
        if absent:
            return error_result(
                "denied",
                f"Tool '{exposed}' needs the user's credential(s) {', '.join(absent)}, and "
                "the host sent none with this call.",
                tool_name=exposed,
                call_id=ctx.call_id,
            )
        held = CallCredentials(tool.credentials, None, values)
        _logscrub.remember(held, held.values().values())
        return replace(ctx, credentials=held)
