"""Watching a connection: its tool list (``notifications/tools/list_changed``), its server.

On 2025 protocol revisions a server sends the notification whenever it likes (over stdio, or
the standalone stream of an HTTP session). On 2026-07-28 ones it sends it only on a
``subscriptions/listen`` stream the client opened, so one is kept open while the session
lasts, when the server says it announces changes (``tools.listChanged``). Either way the
tools are listed again (notifications arriving meanwhile coalesce into one more listing) and
the connection is handed the new list.

A stdio server whose stderr closed is asked for its tools: a request that only a closed
connection fails tells that the server is gone.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client

    from toolpacks.packs.mcp._spec import ServerSpec

__all__ = ["ToolWatch", "Watched"]

logger = logging.getLogger("toolpacks.mcp")

_RELISTEN_SECONDS = 1.0
"""Pause before a lost ``subscriptions/listen`` stream is opened again."""
_LIVENESS_SECONDS = 5.0
"""How long the liveness check after a server's stderr closed may take."""


class Watched(Protocol):
    """What the watch needs of its connection."""

    spec: ServerSpec
    generation: int
    tools: dict[str, mcp_types.Tool]

    @property
    def alive(self) -> bool:
        """Whether a session is up."""

    @property
    def client(self) -> Client | None:
        """The current session's client."""

    async def list_tools(self, client: Client) -> list[mcp_types.Tool]:
        """Every tool, all pages."""

    def lost(self, generation: int, reason: str) -> None:
        """The session ``generation`` is gone."""

    def tools_changed(self, tools: list[mcp_types.Tool]) -> None:
        """The server's tool list is now ``tools``."""


class ToolWatch:
    """Lists a connection's tools again when its server says they changed."""

    def __init__(self, connection: Watched) -> None:
        self.connection = connection
        self._refreshing = False
        self._again = False
        self._tasks: set[asyncio.Task[None]] = set()

    async def on_message(self, generation: int, message: Any) -> None:
        """The client's message handler: a list-changed notification starts a refresh."""
        import mcp_types

        if isinstance(message, mcp_types.ToolListChangedNotification):
            task = asyncio.get_running_loop().create_task(self.refresh(generation))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif isinstance(message, Exception):
            # Not its text: a line the SDK could not parse may quote a secret.
            logger.debug(
                "%s: transport reported %s", self.connection.spec.describe(), type(message).__name__
            )

    async def refresh(self, generation: int) -> None:
        """List the tools again, unless the session ``generation`` is over."""
        import anyio

        if self._refreshing:
            self._again = True
            return
        self._refreshing = True
        connection = self.connection
        try:
            while True:
                self._again = False
                client = connection.client
                if client is None or generation != connection.generation or not connection.alive:
                    return
                try:
                    with anyio.fail_after(connection.spec.timeout):
                        tools = await connection.list_tools(client)
                except Exception as exc:
                    logger.warning(
                        "%s: listing its tools after a change failed: %r",
                        connection.spec.describe(),
                        exc,
                    )
                    return
                if generation != connection.generation:
                    return
                where = connection.spec.describe()
                if {t.name: t for t in tools} == connection.tools:
                    logger.debug("%s: its tools are unchanged", where)
                else:
                    logger.info("%s changed its tools; %d listed", where, len(tools))
                    connection.tools_changed(tools)
                if not self._again:
                    return
        finally:
            self._refreshing = False

    async def listen(self, client: Client, generation: int) -> None:
        """Keep a ``subscriptions/listen`` stream open (2026-07-28 servers that offer it).

        Its events reach ``on_message`` too. After a lost stream the tools are listed again,
        since changes made meanwhile were not announced.
        """
        import anyio
        from mcp import MCPError
        from mcp.client.subscriptions import SubscriptionLost
        from mcp_types import CONNECTION_CLOSED
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        connection = self.connection
        where = connection.spec.describe()
        tools = client.server_capabilities.tools
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS or not (
            tools and tools.list_changed
        ):
            return
        while generation == connection.generation and connection.alive:
            try:
                async with client.listen(tools_list_changed=True) as subscription:
                    async for _event in subscription:
                        pass
                return  # the server closed the stream on purpose
            except SubscriptionLost:
                logger.debug("%s: its listen stream was lost", where)
            except MCPError as exc:
                if exc.code == CONNECTION_CLOSED:
                    connection.lost(generation, "its connection closed")
                else:
                    logger.debug("%s refused subscriptions/listen: %s", where, exc)
                return
            except Exception as exc:
                logger.debug("%s: its listen stream failed: %r", where, exc)
                return
            await anyio.sleep(_RELISTEN_SECONDS)
            await self.refresh(generation)

    async def check_alive(self, generation: int) -> None:
        """After a stdio server's stderr closed: is it gone, or did it just close stderr?"""
        import anyio
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        connection = self.connection
        client = connection.client
        if client is None or generation != connection.generation or not connection.alive:
            return
        try:
            with anyio.fail_after(_LIVENESS_SECONDS):
                # tools/list exists in every protocol era (ping does not, after 2026-07-28).
                await client.list_tools()
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                connection.lost(generation, "the server process exited")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError):
            connection.lost(generation, "the server process exited")
        except Exception:
            logger.debug(
                "%s: liveness check inconclusive", connection.spec.describe(), exc_info=True
            )
