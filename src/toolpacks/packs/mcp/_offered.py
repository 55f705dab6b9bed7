"""A mounted MCP server's prompts and resources, passed through its pack.

When the server declares the ``prompts`` or ``resources`` capability, its prompts, static
resources and resource templates are listed once, at mount time, and each becomes a
``Prompt`` or ``Resource`` of the pack whose function asks the server (``prompts/get``,
``resources/read``, ``completion/complete``) on the connection's own event loop. So an agent
that uses the pack offers them as its own, selected by ``prompts``/``resources`` globs
(``NAME.prompt``). A refusal of the server (an unknown prompt, a missing argument) reaches
the caller with the server's message. Not passed through: list changes after mounting, and
resource subscriptions (the server's ``notifications/resources/updated``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from toolpacks.core.prompts._catalog import OfferingFailed
from toolpacks.core.prompts._prompt import Prompt, PromptArgument, PromptMessage
from toolpacks.core.prompts._resource import Resource

if TYPE_CHECKING:
    from mcp import Client

    from toolpacks.packs.mcp._connection import McpConnection

__all__ = ["remote_offerings"]

logger = logging.getLogger("toolpacks.mcp")


class _Remote:
    """Runs requests of one mounted server's client on the connection's loop."""

    def __init__(self, connection: McpConnection, server: str) -> None:
        self.connection = connection
        self.server = server

    async def ask(self, request: Callable[[Client], Coroutine[Any, Any, Any]]) -> Any:
        """``request(client)``'s answer; a protocol error becomes ``OfferingFailed``."""
        from mcp import MCPError

        client, loop = self.connection.client, self.connection._loop
        if client is None or loop is None:
            raise OfferingFailed(f"the MCP server '{self.server}' is not available now")
        future = asyncio.run_coroutine_threadsafe(request(client), loop)
        try:
            return await asyncio.wrap_future(future)
        except MCPError as exc:
            raise OfferingFailed(
                f"the MCP server '{self.server}' refused: {exc.message}"
            ) from None

    def completer(self, ref: Any) -> Callable[[str, str], Any]:
        async def complete(argument: str, value: str) -> list[str]:
            async def request(client: Client) -> Any:
                return await client.complete(ref, {"name": argument, "value": value})

            answer = await self.ask(request)
            return list(answer.completion.values)

        return complete


def _prompt(remote: _Remote, listed: Any) -> Prompt:
    import mcp_types

    name = listed.name

    async def get(**arguments: str) -> list[PromptMessage]:
        async def request(client: Client) -> Any:
            return await client.get_prompt(name, arguments)

        answer = await remote.ask(request)
        return [
            PromptMessage(m.role, m.content.model_dump(by_alias=True, exclude_none=True))
            for m in answer.messages
        ]

    arguments = tuple(
        PromptArgument(a.name, a.description, bool(a.required)) for a in listed.arguments or ()
    )
    ref = mcp_types.PromptReference(type="ref/prompt", name=name)
    return Prompt(
        name, get, listed.description or "", arguments, remote.completer(ref), listed.title
    )


def _resource(remote: _Remote, listed: Any, template: bool) -> Resource:
    import mcp_types

    uri = listed.uri_template if template else str(listed.uri)

    async def read(**params: str) -> list[dict[str, Any]]:
        wanted = uri.format(**params) if params else uri

        async def request(client: Client) -> Any:
            return await client.read_resource(wanted)

        answer = await remote.ask(request)
        dump = {"by_alias": True, "exclude_none": True, "mode": "json"}
        return [c.model_dump(**dump) for c in answer.contents]

    ref = mcp_types.ResourceTemplateReference(type="ref/resource", uri=uri) if template else None
    return Resource(
        uri,
        read,
        listed.name,
        listed.description or "",
        listed.mime_type,
        remote.completer(ref) if ref is not None else None,
        listed.title,
    )


def remote_offerings(
    connection: McpConnection, server: str, timeout: float
) -> tuple[list[Prompt], list[Resource]]:
    """The prompts and resources of the server behind ``connection`` (none on failure).

    Args:
        connection: The started connection.
        server: The pack's name (for messages).
        timeout: Seconds the listing may take.
    """
    client, loop = connection.client, connection._loop
    if client is None or loop is None:
        return [], []
    caps = client.server_capabilities
    remote = _Remote(connection, server)

    async def listed() -> tuple[list[Any], list[Any], list[Any]]:
        prompts = (await client.list_prompts()).prompts if caps and caps.prompts else []
        if not (caps and caps.resources):
            return prompts, [], []
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        return prompts, resources, templates

    try:
        prompts, resources, templates = asyncio.run_coroutine_threadsafe(
            listed(), loop
        ).result(timeout)
    except Exception as exc:  # the tools still work: a warning, not a failed pack
        logger.warning("MCP server %r: its prompts and resources were not listed (%s)",
                       server, exc)
        return [], []
    return (
        [_prompt(remote, p) for p in prompts],
        [_resource(remote, r, False) for r in resources]
        + [_resource(remote, t, True) for t in templates],
    )
