"""A tool call's way back to an MCP client through the SDK's session (the HTTP road).

``SdkChannel`` wraps the ``ServerSession`` of one ``tools/call``: progress goes out when the
client sent a progress token, log messages as the SDK sends them (2026-07-28: only to a
request that opted in, at or above its level), elicitation and sampling as server→client
requests where the connection has a back-channel. Where it has none (stateless HTTP), or
the client lacks the capability, the tool gets a ``ChannelError`` that says so: an error
result, never a wait for an answer that cannot come.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolpacks.core._channel import Channel, ChannelError
from toolpacks.mcp._notify import STATELESS, InputChannel

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

__all__ = ["SdkChannel", "input_channel"]

_NO_BACK_CHANNEL = STATELESS


class SdkChannel(Channel):
    """The channel of one ``tools/call`` served by the SDK."""

    def __init__(self, ctx: ServerRequestContext[Any]) -> None:
        self._ctx = ctx
        self.loop = asyncio.get_running_loop()

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """``notifications/progress`` (a no-op when the client sent no progress token)."""
        await self._ctx.session.report_progress(progress, total, message)

    async def log(self, level: str, message: str, logger: str | None) -> None:
        """``notifications/message`` on this request's stream."""
        with warnings.catch_warnings():  # deprecated in 2026-07-28, still the way to log
            warnings.simplefilter("ignore")
            await self._ctx.session.send_log_message(
                level,  # type: ignore[arg-type]
                message,
                logger,
                related_request_id=self._ctx.request_id,
            )

    def _check(self, capability: str, what: str) -> None:
        session = self._ctx.session
        if not session.can_send_request:
            raise ChannelError(f"this call cannot {what}: {_NO_BACK_CHANNEL}")
        caps = session.client_capabilities
        if caps is None or getattr(caps, capability, None) is None:
            raise ChannelError(
                f"this call cannot {what}: the MCP client did not declare the {capability} "
                "capability. Tell the user what you need instead."
            )

    async def elicit(self, message: str, schema: dict[str, Any]) -> Mapping[str, Any]:
        """``elicitation/create`` (form mode)."""
        from mcp import MCPError
        from mcp.shared.exceptions import NoBackChannelError

        self._check("elicitation", "ask the user")
        try:
            result = await self._ctx.session.elicit_form(
                message,
                schema,
                related_request_id=self._ctx.request_id,
            )
        except NoBackChannelError:
            raise ChannelError(f"this call cannot ask the user: {_NO_BACK_CHANNEL}") from None
        except MCPError as exc:
            raise ChannelError(f"the client refused elicitation/create: {exc}") from None
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    async def sample(self, params: dict[str, Any]) -> Mapping[str, Any]:
        """``sampling/createMessage``."""
        import mcp_types
        from mcp import MCPError
        from mcp.shared.exceptions import NoBackChannelError
        from mcp.shared.message import ServerMessageMetadata

        self._check("sampling", "ask the client's model")
        request = mcp_types.CreateMessageRequest(
            params=mcp_types.CreateMessageRequestParams.model_validate(params)
        )
        try:
            result = await self._ctx.session.send_request(
                request,
                mcp_types.CreateMessageResult,
                metadata=ServerMessageMetadata(related_request_id=self._ctx.request_id),
            )
        except NoBackChannelError:
            raise ChannelError(f"this call cannot ask the model: {_NO_BACK_CHANNEL}") from None
        except MCPError as exc:
            raise ChannelError(f"the client refused sampling/createMessage: {exc}") from None
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)


def input_channel(ctx: ServerRequestContext[Any], params: Any) -> InputChannel | None:
    """On protocol 2026-07-28, the call's ``InputChannel`` over its ``SdkChannel``; else None.

    Args:
        ctx: The SDK's request context.
        params: The ``CallToolRequestParams`` (with the client's answers on a retry).
    """
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return None
    caps = ctx.session.client_capabilities
    raw: dict[str, Any] = {
        "_meta": {_CAPABILITIES_KEY: {} if caps is None else caps.model_dump(exclude_none=True)},
        "requestState": params.request_state,
    }
    if params.input_responses:
        raw["inputResponses"] = {
            key: value.model_dump(by_alias=True, mode="json", exclude_none=True)
            for key, value in params.input_responses.items()
        }
    return InputChannel(SdkChannel(ctx), params.name, raw)


_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
