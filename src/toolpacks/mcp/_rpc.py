"""The MCP methods a stdio server answers, as plain JSON-RPC dicts, without the MCP SDK.

One ``Session`` per stdio client. The first message decides the protocol era, as the SDK's
own server decides it: a request carrying the 2026-07-28 envelope (``params._meta`` with the
protocol version) opens a *modern* session, anything else a *handshake* one.

- Handshake era (2024-11-05 to 2025-11-25): ``initialize`` answers the client's version
  when it is one of those, else the latest, with the ``tools`` capability (``listChanged``
  when tools are deferred) and the server's name and version; ``ping``; ``tools/list`` and
  ``tools/call`` once initialized (before, the SDK's -32602). A request carrying the
  2026-07-28 envelope is refused (-32600).
- Modern era (2026-07-28): ``server/discover``, ``tools/list`` and ``tools/call``, each
  checked for the envelope (-32602 without it, -32022 for a version not served); results
  carry ``resultType`` and the server's ``_meta``; ``initialize`` is refused (-32022) and
  ``ping`` does not exist (-32601).

Every other method is -32601 (``Method not found``, the method as ``data``); parameters of
the wrong shape are -32602 (``Invalid request parameters``); notifications are never
answered. The wording of every error is the SDK's, so a client sees the same server.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from toolpacks._version import __version__
from toolpacks.core._channel import LOG_LEVELS
from toolpacks.host.credentials._relay import CHILD, take
from toolpacks.mcp._direct import (
    INVALID_PARAMS,
    SERVED_PRINCIPAL,
    Notify,
    ToolAnswers,
    UnknownTool,
)
from toolpacks.mcp._notify import ClientState, InputChannel, Outgoing, PeerChannel, Send
from toolpacks.mcp._offered import METHODS as OFFERED
from toolpacks.mcp._offered import SUBSCRIBING, OfferedAnswers, OfferError, Subscriptions

__all__ = ["HANDSHAKE_VERSIONS", "MODERN_VERSIONS", "Reply", "Session"]

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The protocol revisions negotiated with ``initialize`` (oldest first)."""
MODERN_VERSIONS = ("2026-07-28",)
"""The protocol revisions whose requests carry their own envelope."""

METHOD_NOT_FOUND = -32601
INVALID_REQUEST = -32600
UNSUPPORTED_VERSION = -32022
_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
_INFO_KEY = "io.modelcontextprotocol/serverInfo"
_LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"

Message = dict[str, Any]
Reply = Message | list[bytes] | Coroutine[Any, Any, Message | None] | None
"""A response now (a dict, or its JSON text in parts), a coroutine giving one (a tool call),
or nothing (a notification)."""


def _error(request_id: Any, code: int, message: str, data: Any = None) -> Message:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _result(request_id: Any, result: Message) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _bad_params(request_id: Any) -> Message:
    return _error(request_id, INVALID_PARAMS, "Invalid request parameters", "")


def _has_envelope(params: Any) -> bool:
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and _VERSION_KEY in meta


class Session:
    """The protocol state of one stdio client, and the answer to each message it sends."""

    def __init__(self, answers: ToolAnswers, name: str, *, list_changed: bool) -> None:
        self.answers = answers
        self.name = name
        self.list_changed = list_changed
        """Whether ``initialize`` says the tool list can change (some tools are deferred)."""
        self.era: str | None = None
        """``"handshake"`` or ``"modern"``, set by the first message."""
        self.initialized = False
        self._server_meta = {_INFO_KEY: {"name": name, "version": __version__}}
        self.offered = OfferedAnswers(answers.toolset.catalog.exposing(answers.expose_errors))
        """Answers prompts/*, resources/* and completion/complete (empty when none)."""
        self._subscriptions: Subscriptions | None = None
        self.client = ClientState()
        """The client's capabilities and log level (handshake era)."""
        self._send: Send | None = None
        self._outgoing: Outgoing | None = None

    def attach(self, send: Send) -> None:
        """Let tool calls notify the client and ask it (``send`` writes one message)."""
        self._send = send
        self._outgoing = Outgoing(send)

    def reply(self, message: Message, notify: Notify | None = None) -> Reply:
        """The answer to ``message`` (a request, notification or response, as decoded).

        Args:
            message: A JSON-RPC message that ``_wire.decode`` passed on.
            notify: Tells the client its tool list changed (handshake era only).
        """
        method = message.get("method")
        params = message.get("params")
        if self.era is None:
            modern = method != "initialize" and _has_envelope(params)
            self.era = "modern" if modern else "handshake"
        if not isinstance(method, str) or "id" not in message:
            if method is None and self._outgoing is not None:
                self._outgoing.settle(message)  # the answer to an elicitation or sampling
            return None  # a notification or a response: nothing to say
        request_id = message["id"]
        if self.era == "modern":
            return self._modern(request_id, method, params)
        return self._handshake(request_id, method, params, notify)

    # -- the handshake era

    def _handshake(self, request_id: Any, method: str, params: Any, notify: Notify | None) -> Reply:
        if method != "initialize" and _has_envelope(params):
            return _error(
                request_id,
                INVALID_REQUEST,
                "this connection serves the handshake protocol era; "
                "requests carrying the 2026-07-28 envelope are not accepted on it",
            )
        if method == "initialize":
            return self._initialize(request_id, params)
        if method == "ping":
            return _result(request_id, {})
        if method == "logging/setLevel" and self.initialized:
            level = params.get("level") if isinstance(params, dict) else None
            if level not in LOG_LEVELS:
                return _bad_params(request_id)
            self.client.log_level = level
            return _result(request_id, {})
        if method in OFFERED and self.initialized:
            return self._offer(request_id, method, params, {})
        if method not in ("tools/list", "tools/call"):
            return _error(request_id, METHOD_NOT_FOUND, "Method not found", method)
        if not self.initialized:
            return _bad_params(request_id)
        if method == "tools/list":
            if not _list_params(params):
                return _bad_params(request_id)
            return self.answers.list_reply(request_id)
        return self._call(request_id, params, notify, {})

    def _initialize(self, request_id: Any, params: Any) -> Message:
        if not _initialize_params(params):
            return _bad_params(request_id)
        asked = params["protocolVersion"]
        version = asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
        self.initialized = True
        self.client.capabilities = params["capabilities"]
        return _result(
            request_id,
            {
                "protocolVersion": version,
                "capabilities": {
                    "tools": {"listChanged": self.list_changed},
                    "logging": {},
                    **self.offered.capabilities(),
                },
                "serverInfo": {"name": self.name, "version": __version__},
            },
        )

    # -- the modern era

    def _modern(self, request_id: Any, method: str, params: Any) -> Reply:
        if method == "initialize":
            asked = params.get("protocolVersion") if isinstance(params, dict) else None
            data: dict[str, Any] = {"supported": list(MODERN_VERSIONS)}
            if isinstance(asked, str):
                data["requested"] = asked
            return _error(
                request_id,
                UNSUPPORTED_VERSION,
                "connection is serving the 2026-07-28 protocol; the initialize handshake is "
                "not accepted",
                data,
            )
        refused = _envelope_refusal(request_id, params)
        if refused is not None:
            return refused
        extra = {"resultType": "complete", "_meta": self._server_meta}
        cached = {"cacheScope": "private", "ttlMs": 0}
        if method == "server/discover":
            capabilities = {
                "tools": {"listChanged": self.list_changed},
                **self.offered.capabilities(),
            }
            discovered = {"supportedVersions": list(MODERN_VERSIONS), "capabilities": capabilities}
            return _result(request_id, {**discovered, **cached, **extra})
        if method == "tools/list":
            if not _list_params(params):
                return _bad_params(request_id)
            return self.answers.list_reply(request_id, {**cached, **extra})
        if method == "tools/call":
            return self._call(request_id, params, None, extra)
        if method in OFFERED and method not in SUBSCRIBING:  # 2026-07-28 has no subscribe
            cacheable = method.endswith("/list") or method == "resources/read"
            answered = {**cached, **extra} if cacheable else extra
            return self._offer(request_id, method, params, answered)
        return _error(request_id, METHOD_NOT_FOUND, "Method not found", method)

    # -- prompts, resources and completion, in both eras

    def _offer(self, request_id: Any, method: str, params: Any, extra: Message) -> Reply:
        async def run() -> Message:
            try:
                result = await self.offered.answer(method, params, self._subscribed())
            except OfferError as exc:
                return _error(request_id, exc.code, exc.message, exc.data)
            return _result(request_id, {**result, **extra})

        return run()

    def _subscribed(self) -> Subscriptions | None:
        send = self._send
        if self._subscriptions is None and send is not None:

            async def updated(uri: str) -> None:
                params = {"uri": uri}
                await send({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                            "params": params})

            self._subscriptions = Subscriptions(self.offered.catalog, updated)
        return self._subscriptions

    # -- tools/call, in both eras

    def _call(self, request_id: Any, params: Any, notify: Notify | None, extra: Message) -> Reply:
        if not _call_params(params):
            return _bad_params(request_id)
        name, arguments = params["name"], params.get("arguments")
        channel = self._channel(params, modern=bool(extra))

        async def run() -> Message:
            relayed = take(params)  # credentials relayed by the host to its isolated pack
            if CHILD.get():  # serve --pack: who the host's call is for (never kept across)
                SERVED_PRINCIPAL.set(relayed)
            try:
                result = await self.answers.call(name, arguments, request_id, notify, channel)
            except UnknownTool as exc:
                return _error(request_id, INVALID_PARAMS, str(exc))
            return _result(request_id, {**extra, **result})  # input_required wins

        return run()


    def _channel(
        self, params: dict[str, Any], modern: bool
    ) -> PeerChannel | InputChannel | None:
        """The call's way back to the client: progress, logs, and (handshake era) asking."""
        if self._send is None:
            return None
        meta = params.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        token = meta.get("progressToken")
        if not modern:
            return PeerChannel(
                self._send, self.client, progress_token=token, request=self._request
            )
        client = ClientState()  # 2026-07-28: each request says what its client wants
        capabilities = meta.get(_CAPABILITIES_KEY)
        client.capabilities = capabilities if isinstance(capabilities, dict) else {}
        level = meta.get(_LOG_LEVEL_KEY)  # no opt-in: no log messages
        client.log_level = level if level in LOG_LEVELS else None
        client.logging = level in LOG_LEVELS
        base = PeerChannel(self._send, client, progress_token=token)
        return InputChannel(base, params["name"], params)

    async def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self._outgoing is not None
        return await self._outgoing.request(method, params)


def _initialize_params(params: Any) -> bool:
    if not isinstance(params, dict):
        return False
    info = params.get("clientInfo")
    return (
        isinstance(params.get("protocolVersion"), str)
        and isinstance(params.get("capabilities"), dict)
        and isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
    )


def _list_params(params: Any) -> bool:
    if params is None:
        return True
    return isinstance(params, dict) and isinstance(params.get("cursor", ""), str)


def _call_params(params: Any) -> bool:
    if not isinstance(params, dict) or not isinstance(params.get("name"), str):
        return False
    arguments = params.get("arguments")
    return arguments is None or isinstance(arguments, dict)


def _envelope_refusal(request_id: Any, params: Any) -> Message | None:
    """The SDK's refusal of a modern request whose envelope is missing or not served."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        return _error(
            request_id,
            INVALID_PARAMS,
            f"params._meta must be an object carrying the required {_VERSION_KEY!r} and "
            f"{_CAPABILITIES_KEY!r} envelope keys",
        )
    missing = [key for key in (_VERSION_KEY, _CAPABILITIES_KEY) if key not in meta]
    if missing:
        return _error(
            request_id,
            INVALID_PARAMS,
            f"params._meta is missing the required envelope key(s): {', '.join(missing)}",
        )
    version = meta[_VERSION_KEY]
    if not isinstance(version, str):
        return _error(
            request_id, INVALID_PARAMS, "the protocol-version envelope value must be a string"
        )
    if version not in MODERN_VERSIONS:
        data = {"supported": list(MODERN_VERSIONS), "requested": version}
        return _error(request_id, UNSUPPORTED_VERSION, "Unsupported protocol version", data)
    return None
