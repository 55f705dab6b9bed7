"""The SDK server's handlers of ``prompts/*``, ``resources/*`` and ``completion/complete``.

Each handler asks ``_offered.OfferedAnswers`` (the answers the stdio server gives too) and
wraps the dict in the SDK's result model; an ``OfferError`` becomes the SDK's ``MCPError``
with the same code. Registering them makes the SDK advertise the ``prompts``, ``resources``
(with ``subscribe``) and ``completions`` capabilities. Imported only where the SDK is.

``accept_log_level`` makes a server accept ``logging/setLevel`` (and advertise ``logging``;
added after construction, so the SDK warns of nothing): the SDK's server answers
it with "Method not found" otherwise, though its tools send log messages. Over stateless
HTTP no session outlives the request, so the level is not kept: a 2025-11-25 call's stream
carries its log messages at every level, a 2026-07-28 call those at its own opt-in level.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolpacks.core.prompts._catalog import Catalog
from toolpacks.mcp._offered import SUBSCRIBING, OfferedAnswers, OfferError, Subscriptions

if TYPE_CHECKING:
    from mcp.server import Server
    from mcp.server.context import ServerRequestContext

__all__ = ["accept_log_level", "offered_handlers"]


def offered_handlers(catalog: Catalog, expose_errors: bool) -> dict[str, Any]:
    """The ``Server(...)`` keyword arguments serving ``catalog`` (``on_list_prompts``, ...)."""
    import mcp_types
    from mcp import MCPError

    answers = OfferedAnswers(catalog.exposing(expose_errors))
    sessions: weakref.WeakKeyDictionary[Any, Subscriptions] = weakref.WeakKeyDictionary()

    def subscriptions(ctx: ServerRequestContext[Any]) -> Subscriptions:
        session = ctx.session

        async def updated(uri: str) -> None:
            await session.send_resource_updated(uri)  # on the connection's standalone stream

        if not session.can_send_request:  # stateless HTTP: no stream outlives the request
            return Subscriptions(answers.catalog, updated, live=False)
        # Each request has a session object of its own; the connection behind them is the
        # client's (a private attribute of the SDK: without it, one session per request).
        key = getattr(session, "_connection", session)
        found = sessions.get(key)
        if found is None:
            found = sessions[key] = Subscriptions(answers.catalog, updated)
        return found

    def handler(method: str, model: Any) -> Callable[..., Any]:
        async def handle(ctx: ServerRequestContext[Any], params: Any) -> Any:
            raw = None if params is None else params.model_dump(by_alias=True, exclude_none=True)
            subs = subscriptions(ctx) if method in SUBSCRIBING else None
            try:
                result = await answers.answer(method, raw, subs)
            except OfferError as exc:
                raise MCPError(code=exc.code, message=exc.message, data=exc.data) from None
            return model.model_validate(result)

        return handle

    return {
        "on_list_prompts": handler("prompts/list", mcp_types.ListPromptsResult),
        "on_get_prompt": handler("prompts/get", mcp_types.GetPromptResult),
        "on_list_resources": handler("resources/list", mcp_types.ListResourcesResult),
        "on_list_resource_templates": handler(
            "resources/templates/list", mcp_types.ListResourceTemplatesResult
        ),
        "on_read_resource": handler("resources/read", mcp_types.ReadResourceResult),
        "on_subscribe_resource": handler("resources/subscribe", mcp_types.EmptyResult),
        "on_unsubscribe_resource": handler("resources/unsubscribe", mcp_types.EmptyResult),
        "on_completion": handler("completion/complete", mcp_types.CompleteResult),
    }


def accept_log_level(server: Server[Any]) -> None:
    """Answer ``logging/setLevel`` with ``{}`` on ``server`` (see the module doc)."""
    import mcp_types

    async def set_level(ctx: ServerRequestContext[Any], params: Any) -> Any:
        return mcp_types.EmptyResult()

    server.add_request_handler("logging/setLevel", mcp_types.SetLevelRequestParams, set_level)
