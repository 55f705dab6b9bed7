"""Answering MCP ``prompts/*``, ``resources/*`` and ``completion/complete`` from a toolset.

Both servers ask ``OfferedAnswers``: the SDK-free stdio session (``_rpc``) with the results
as dicts, and the SDK's server (``_server``, the HTTP app's road) wrapped in its models. A
server with no prompts or resources still answers the listings (empty), as the SDK's own
server does. Errors are ``OfferError`` with the JSON-RPC code: -32602 for an unknown prompt,
a missing or unknown argument and bad parameters, -32002 for a URI no resource answers (the
specification's "Resource not found"), -32603 for a prompt or resource function that failed.

A subscription (``resources/subscribe``) belongs to one session (``Subscriptions``): when the
pack calls ``resource.updated()``, the session is sent ``notifications/resources/updated``
on its own event loop, whatever thread the pack called from.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from toolpacks.core.prompts._catalog import (
    Catalog,
    OfferingFailed,
    PromptArgumentsError,
    UnknownPrompt,
    UnknownResource,
)

__all__ = [
    "METHODS",
    "RESOURCE_NOT_FOUND",
    "SUBSCRIBING",
    "OfferError",
    "OfferedAnswers",
    "Subscriptions",
]

logger = logging.getLogger("toolpacks.mcp")

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002
"""The MCP specification's error code of a ``resources/read`` for an unknown URI."""

METHODS = frozenset(
    {
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "completion/complete",
    }
)
"""The methods ``OfferedAnswers.answer`` serves."""
SUBSCRIBING = frozenset({"resources/subscribe", "resources/unsubscribe"})
"""The methods that need a session's ``Subscriptions`` (none on protocol 2026-07-28)."""

Updated = Callable[[str], Awaitable[None]]
"""Sends ``notifications/resources/updated`` for a URI to one session."""


class OfferError(Exception):
    """A JSON-RPC error answer to a prompts/resources/completion request."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class Subscriptions:
    """One session's resource subscriptions, and how to tell it a resource changed."""

    def __init__(self, catalog: Catalog, send: Updated, *, live: bool = True) -> None:
        self._catalog = catalog
        self._send = send
        self._live = live
        """False where nothing can reach the client later (stateless HTTP): subscribing only
        checks the URI, and nothing is kept."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._uris: set[str] = set()
        self._tasks: set[asyncio.Future[None]] = set()

    def _changed(self, uri: str) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        loop.call_soon_threadsafe(self._schedule, uri)

    def _schedule(self, uri: str) -> None:
        async def send() -> None:
            try:
                await self._send(uri)
            except Exception as exc:  # the session ended: forget its subscriptions
                logger.debug("resources/updated for %r not sent (%s)", uri, exc)
                self.close()

        task = asyncio.ensure_future(send())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def subscribe(self, uri: str) -> None:
        """Notify this session when ``uri`` changes (again: nothing more happens)."""
        self._loop = asyncio.get_running_loop()
        if not self._live:
            self._catalog.find(uri)
            return
        if uri not in self._uris:
            self._catalog.subscribe(uri, self._changed)
            self._uris.add(uri)

    def unsubscribe(self, uri: str) -> None:
        """Stop notifying this session about ``uri``."""
        self._catalog.unsubscribe(uri, self._changed)
        self._uris.discard(uri)

    def close(self) -> None:
        """Drop every subscription (the session ended)."""
        for uri in list(self._uris):
            self.unsubscribe(uri)


class OfferedAnswers:
    """The prompts, resources and completion answers of one served toolset."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def capabilities(self) -> dict[str, Any]:
        """The ``prompts``, ``resources`` and ``completions`` server capabilities."""
        return {
            "prompts": {"listChanged": False},
            "resources": {"subscribe": True, "listChanged": False},
            "completions": {},
        }

    async def answer(
        self, method: str, params: Any, subscriptions: Subscriptions | None = None
    ) -> dict[str, Any]:
        """The result of ``method`` (one of ``METHODS``) with ``params``, as a dict.

        Raises:
            OfferError: Bad parameters, an unknown prompt or resource, or a failing function.
        """
        p = params if isinstance(params, dict) else {}
        if params is not None and not isinstance(params, dict):
            raise OfferError(INVALID_PARAMS, "Invalid request parameters", "")
        catalog = self.catalog
        try:
            if method == "prompts/list":
                return {"prompts": catalog.list_prompts()}
            if method == "resources/list":
                return {"resources": catalog.list_resources()}
            if method == "resources/templates/list":
                return {"resourceTemplates": catalog.list_templates()}
            if method == "prompts/get":
                name, arguments = p.get("name"), p.get("arguments")
                if not isinstance(name, str) or not isinstance(arguments, dict | None):
                    raise OfferError(INVALID_PARAMS, "Invalid request parameters", "")
                return await catalog.get_prompt(name, arguments)
            if method == "completion/complete":
                return {"completion": await self._complete(p)}
            uri = p.get("uri")
            if not isinstance(uri, str):
                raise OfferError(INVALID_PARAMS, "Invalid request parameters", "")
            if method == "resources/read":
                return await catalog.read(uri)
            if subscriptions is None:
                raise OfferError(INVALID_PARAMS, f"{method} needs a session to notify")
            if method == "resources/subscribe":
                subscriptions.subscribe(uri)
            else:
                subscriptions.unsubscribe(uri)
            return {}
        except UnknownPrompt as exc:
            raise OfferError(INVALID_PARAMS, str(exc)) from None
        except PromptArgumentsError as exc:
            raise OfferError(INVALID_PARAMS, str(exc)) from None
        except UnknownResource as exc:
            raise OfferError(RESOURCE_NOT_FOUND, str(exc), {"uri": p.get("uri")}) from None
        except OfferingFailed as exc:
            raise OfferError(INTERNAL_ERROR, str(exc)) from None

    async def _complete(self, p: dict[str, Any]) -> dict[str, Any]:
        ref, argument = p.get("ref"), p.get("argument")
        if (
            not isinstance(ref, dict)
            or not isinstance(argument, dict)
            or not isinstance(argument.get("name"), str)
            or not isinstance(argument.get("value", ""), str)
        ):
            raise OfferError(INVALID_PARAMS, "Invalid request parameters", "")
        return await self.catalog.complete(ref, argument["name"], argument.get("value", ""))
