"""A tool call's way back to an MCP client, without the SDK: notifications and requests.

``ClientState`` is what one session knows of its client: the capabilities it declared and
the level ``logging/setLevel`` asked for. ``Outgoing`` sends server→client requests
(``elicitation/create``, ``sampling/createMessage``) and settles each when the client's
response comes back. ``PeerChannel`` is the ``Channel`` each ``tools/call`` gets: progress
goes out as ``notifications/progress`` when the request carried a progress token, log
messages as ``notifications/message`` at or above the client's level, and asking needs the
client's capability (without it the tool gets a ``ChannelError``, so the call ends with an
error result rather than waiting for an answer that cannot come).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from toolpacks.core._channel import LOG_LEVELS, Channel, ChannelError
from toolpacks.mcp._direct import UnknownTool

if TYPE_CHECKING:
    from toolpacks.core._principal import Principal

__all__ = [
    "STATELESS",
    "ClientState",
    "InputChannel",
    "Outgoing",
    "PeerChannel",
    "RequestStateRefused",
    "Send",
    "StatelessChannel",
]

Send = Callable[[dict[str, Any]], Awaitable[None]]
"""Writes one JSON-RPC message to the client."""


class ClientState:
    """What a session knows of its client: capabilities, and the log level it asked for."""

    def __init__(self) -> None:
        self.capabilities: Mapping[str, Any] = {}
        """The capabilities of ``initialize`` (or of the request's envelope)."""
        self.log_level: str | None = None
        """The least severe level sent (``logging/setLevel``); None: every level."""
        self.logging = True
        """Whether log messages are sent at all (2026-07-28: only to a request that opts in)."""

    def wants(self, level: str) -> bool:
        """Whether a message at ``level`` is sent."""
        if not self.logging:
            return False
        if self.log_level is None:
            return True
        return LOG_LEVELS.index(level) >= LOG_LEVELS.index(self.log_level)


class Outgoing:
    """Server→client requests in flight over one connection, settled by the responses."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._ids = itertools.count(1)
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request and wait for the client's result.

        Raises:
            ChannelError: The client answered with an error.
        """
        request_id = f"toolpacks-{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        try:
            await self._send(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
            response = await future
        finally:
            self._waiting.pop(request_id, None)
        error = response.get("error")
        if error is not None:
            text = error.get("message") if isinstance(error, dict) else error
            raise ChannelError(f"the client refused {method}: {text}")
        result = response.get("result")
        if not isinstance(result, dict):
            raise ChannelError(f"the client answered {method} without a result object")
        return result

    def settle(self, message: Mapping[str, Any]) -> bool:
        """Hand a response to the request it answers; whether it answered one."""
        future = self._waiting.get(str(message.get("id")))
        if future is None or future.done():
            return False
        future.set_result(dict(message))
        return True


class PeerChannel(Channel):
    """The channel of one ``tools/call``: notifications, and requests when the era allows."""

    def __init__(
        self,
        send: Send,
        state: ClientState,
        *,
        progress_token: Any = None,
        request: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]] | None = None,
        why_not: str = "",
    ) -> None:
        self._send = send
        self._state = state
        self._token = progress_token
        self._request = request
        self._why_not = why_not
        self.loop = asyncio.get_running_loop()

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """``notifications/progress``, when the client sent a progress token."""
        if self._token is None:
            return
        params: dict[str, Any] = {"progressToken": self._token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    async def log(self, level: str, message: str, logger: str | None) -> None:
        """``notifications/message``, at or above the client's level."""
        if not self._state.wants(level):
            return
        params: dict[str, Any] = {"level": level, "data": message}
        if logger:
            params["logger"] = logger
        await self._send({"jsonrpc": "2.0", "method": "notifications/message", "params": params})

    def _can(self, capability: str, what: str) -> Callable[[str, dict[str, Any]], Awaitable[Any]]:
        if self._request is None:
            raise ChannelError(f"this call cannot {what}: {self._why_not}")
        if capability not in self._state.capabilities:
            raise ChannelError(
                f"this call cannot {what}: the MCP client did not declare the {capability} "
                "capability. Tell the user what you need instead."
            )
        return self._request

    async def elicit(self, message: str, schema: dict[str, Any]) -> Mapping[str, Any]:
        """``elicitation/create`` (form mode)."""
        request = self._can("elicitation", "ask the user")
        params = {"mode": "form", "message": message, "requestedSchema": schema}
        return await request("elicitation/create", params)  # type: ignore[no-any-return]

    async def sample(self, params: dict[str, Any]) -> Mapping[str, Any]:
        """``sampling/createMessage``."""
        request = self._can("sampling", "ask the client's model")
        return await request("sampling/createMessage", params)  # type: ignore[no-any-return]


STATELESS = (
    "this server answers over stateless HTTP, where a tool cannot wait for the client's "
    "answer; connect over stdio to be asked"
)


class StatelessChannel(Channel):
    """The channel of a call answered in one JSON reply: nothing to send on, no asking."""

    async def elicit(self, message: str, schema: dict[str, Any]) -> Mapping[str, Any]:
        """Refuse: a stateless reply cannot wait for the user."""
        raise ChannelError(f"this call cannot ask the user: {STATELESS}")

    async def sample(self, params: dict[str, Any]) -> Mapping[str, Any]:
        """Refuse: a stateless reply cannot wait for the client's model."""
        raise ChannelError(f"this call cannot ask the client's model: {STATELESS}")


STATELESS_CHANNEL = StatelessChannel()
"""One for every call of the direct HTTP route (it holds nothing per call)."""


class InputChannel(Channel):
    """Asking on protocol 2026-07-28: input-required results, the call run again per round.

    A tool that asks gets the answer when the client's retry carries it (``inputResponses``,
    or an earlier round's answers kept in ``requestState``); otherwise the question is
    recorded in ``needed`` and the tool gets a ``ChannelError``, and the server answers the
    call with an ``input_required`` result instead of the tool's result. The client asks its
    user or model and calls again; the tool runs again from the start, and this time its
    question is answered. Progress and logs go to ``base``.

    ``requestState`` holds the answers so far, sealed (``_state_seal``) and bound to the call:
    ``bind`` refuses a state issued for another tool, other arguments or another principal,
    changed, or expired (``RequestStateRefused``: a -32602 error, the tool not run). Only
    answers to the questions the state says were asked are taken from ``inputResponses``.
    """

    def __init__(self, base: Channel, name: str, params: Mapping[str, Any]) -> None:
        self._base = base
        self._name = name
        meta = params.get("_meta")
        capabilities = meta.get(_CAPABILITIES_KEY) if isinstance(meta, dict) else None
        self._capabilities = capabilities if isinstance(capabilities, dict) else {}
        self._state = params.get("requestState")
        responses = params.get("inputResponses")
        self._responses = dict(responses) if isinstance(responses, dict) else {}
        self._answers: dict[str, Any] = {}
        self._binding: dict[str, Any] = {"tool": name, "args": "", "sub": None}
        self._asked = 0
        self.needed: dict[str, Any] | None = None
        """The question the client must answer before the call can finish, if any."""
        self.loop = base.loop

    def bind(self, arguments: Mapping[str, Any], principal: Principal | None) -> None:
        """Bind the call's state to its arguments and principal; take the answers it holds.

        Called before the tool runs (``ToolAnswers.call``).

        Raises:
            RequestStateRefused: The call carries a ``requestState`` this server did not
                issue for this call (this tool, these arguments, this principal), changed,
                or expired.
        """
        from toolpacks.mcp._state_seal import arguments_digest, open_state

        subject = None if principal is None else principal.subject
        self._binding = {"tool": self._name, "args": arguments_digest(arguments), "sub": subject}
        if self._state is None:  # a first round: nothing was asked yet
            return
        value = open_state(self._state)
        if value is None or any(value.get(k) != v for k, v in self._binding.items()):
            raise RequestStateRefused(
                f"the requestState of this call of {self._name!r} does not verify: this "
                "server did not issue it for a call of this tool with these arguments by this "
                "caller, or it was changed, or it expired. Call the tool again without "
                "requestState and inputResponses to start over."
            )
        answers, asked = value.get("answers"), value.get("asked")
        self._answers = dict(answers) if isinstance(answers, dict) else {}
        asked = asked if isinstance(asked, list) else []
        self._answers.update({k: v for k, v in self._responses.items() if k in asked})

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """Progress, through the base channel."""
        await self._base.progress(progress, total, message)

    async def log(self, level: str, message: str, logger: str | None) -> None:
        """A log message, through the base channel."""
        await self._base.log(level, message, logger)

    async def _ask(self, method: str, params: dict[str, Any], capability: str, what: str) -> Any:
        if capability not in self._capabilities:
            raise ChannelError(
                f"this call cannot {what}: the MCP client did not declare the {capability} "
                "capability. Tell the user what you need instead."
            )
        key = f"{capability}-{self._asked}"
        self._asked += 1
        if key in self._answers:
            return self._answers[key]
        if self.needed is None:
            self.needed = {key: {"method": method, "params": params}}
        raise ChannelError(f"this call needs the client's answer first ({key})")

    async def elicit(self, message: str, schema: dict[str, Any]) -> Mapping[str, Any]:
        """The answer the client sent, or an input-required round."""
        params = {"mode": "form", "message": message, "requestedSchema": schema}
        answer = await self._ask("elicitation/create", params, "elicitation", "ask the user")
        return answer  # type: ignore[no-any-return]

    async def sample(self, params: dict[str, Any]) -> Mapping[str, Any]:
        """The answer the client's model gave, or an input-required round."""
        answer = await self._ask("sampling/createMessage", params, "sampling", "ask the model")
        return answer  # type: ignore[no-any-return]

    def input_required(self) -> dict[str, Any]:
        """The ``input_required`` result: the question, and the answers so far as state."""
        from toolpacks.mcp._state_seal import seal_state

        asked = sorted(self.needed or {})
        state = seal_state({**self._binding, "answers": self._answers, "asked": asked})
        return {"resultType": "input_required", "inputRequests": self.needed, "requestState": state}


class RequestStateRefused(UnknownTool):
    """A ``requestState`` that does not verify for its call: answered -32602, as bad params."""


_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
