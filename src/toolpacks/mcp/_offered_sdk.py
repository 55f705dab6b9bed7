"""The SDK server's handlers of ``prompts/*``, ``resources/*`` and ``completion/complete``.

Each handler asks ``_offered.OfferedAnswers`` (the answers the stdio server gives too) and
wraps the dict in the SDK's result model; an ``OfferError`` becomes the SDK's ``MCPError``
with the same code. Registering them makes the SDK advertise the ``prompts``, ``resources``
(with ``subscribe``) and ``completions`` capabilities. Imported only where the SDK is.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolpacks.core.prompts._catalog import Catalog
from toolpacks.mcp._offered import SUBSCRIBING, OfferedAnswers, OfferError, Subscriptions

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

__all__ = ["offered_handlers"]


def offered_handlers(catalog: Catalog, expose_errors: bool) -> dict[str, Any]:
    """The ``Server(...)`` keyword arguments serving ``catalog`` (``on_list_prompts``, ...)."""
    import mcp_types
    from mcp import MCPError

    answers = OfferedAnswers(catalog.exposing(expose_errors))
    sessions: weakref.WeakKeyDictionary[Any, Subscriptions] = weakref.WeakKeyDictionary()

    def subscriptions(ctx: ServerRequestContext[Any]) -> Subscriptions:
        session = ctx.session
        found = sessions.get(session)
        if found is None:
            alive = weakref.ref(session)  # a subscription does not keep a session alive

            async def updated(uri: str) -> None:
                live = alive()
                if live is None:
                    raise LookupError("the session ended")
                await live.send_resource_updated(uri)

            found = sessions[session] = Subscriptions(answers.catalog, updated)
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
