"""Stateless ``tools/list`` and ``tools/call`` over HTTP, answered without the SDK's machinery.

In stateless mode the SDK builds, for every request, a transport, a server runner, an anyio
task group and memory streams, and parses the body the app has already parsed. Most requests
a stateless server gets are ``tools/list`` and ``tools/call``; ``DirectRoute`` answers those
from the parsed body with ``ToolAnswers`` (the same answers the SDK's handlers give), in the
SDK's own wire shapes for each protocol revision: ``resultType``, ``cacheScope``, ``ttlMs``
and the server's ``_meta`` on 2026-07-28, the JSON-RPC error with HTTP 400 for an unknown
tool there and 200 on the 2025 revisions.

Only requests the SDK would certainly answer with a result are taken: ``route`` leaves to
the SDK anything else (other methods, notifications, batches, an ``Accept`` or
``Content-Type`` it would refuse, an unknown or repeated version header, a 2026-07-28
envelope its checks refuse, ``Mcp-Param-*`` headers, a session id, parameters beyond the
plain ones), so every error and every other feature keeps the SDK's exact behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolpacks.core._credentials import ConnectRequired
from toolpacks.mcp._direct import UnknownTool, dump
from toolpacks.mcp._notify import STATELESS_CHANNEL, InputChannel
from toolpacks.mcp.http._connect import url_elicitation
from toolpacks.mcp.http._metrics import counted

if TYPE_CHECKING:
    from starlette.types import Send

    from toolpacks.mcp._direct import ToolAnswers
    from toolpacks.mcp.http._metrics import CallMetrics

__all__ = ["DirectRoute"]

_LEGACY = "legacy"
_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
_ENVELOPES_KEPT = 256
"""Distinct ``_meta`` envelopes whose verdict is remembered (then the memory starts anew)."""
_ROUTING = (b"mcp-protocol-version", b"mcp-method", b"mcp-name")
_LIST_KEYS = frozenset({"cursor", "_meta"})
_CALL_KEYS = frozenset({"name", "arguments", "_meta"})
_ENVELOPE_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_JSON_HEADERS = [(b"content-type", b"application/json")]
_CACHED = {"cacheScope": "private", "resultType": "complete", "ttlMs": 0}


def _accepts_json(accept: bytes) -> bool:
    """Whether an ``Accept`` header admits ``application/json`` (as the SDK reads it)."""
    for part in accept.decode("latin-1").split(","):
        kind = part.split(";")[0].strip().lower()
        if kind in ("application/json", "application/*", "*/*"):
            return True
    return False


def _is_json(content_type: bytes) -> bool:
    """Whether a ``Content-Type`` header is ``application/json`` (as the SDK reads it)."""
    first = content_type.decode("latin-1").split(";")[0]
    return any(part.strip() == "application/json" for part in first.split(","))


class DirectRoute:
    """The direct answers of one agent's endpoint, and which requests may take them."""

    def __init__(
        self, agent: str, answers: ToolAnswers, metrics: CallMetrics, server_name: str
    ) -> None:
        from mcp.shared.inbound import x_mcp_header_map
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

        from toolpacks._version import __version__

        self.agent = agent
        self.answers = answers
        self.metrics = metrics
        self.legacy = frozenset(HANDSHAKE_PROTOCOL_VERSIONS)
        self.modern = frozenset(MODERN_PROTOCOL_VERSIONS)
        self.header_bound = frozenset(
            d["name"]
            for d in answers.definitions
            if _maps_headers(x_mcp_header_map, d.get("inputSchema"))
        )
        """Tools whose input schema binds arguments to headers (the SDK checks those)."""
        info = {"name": server_name, "version": __version__}
        self.server_meta = {"io.modelcontextprotocol/serverInfo": info}
        self._envelopes: dict[tuple[str, str, bytes], bool] = {}
        self._in_flight = metrics.in_flight.labels(agent)

    # -- which requests

    def route(self, headers: list[tuple[bytes, bytes]], value: Any) -> str | None:
        """The protocol revision to answer ``value`` at, or None to leave it to the SDK."""
        routing: dict[bytes, str] = {}
        accept = content_type = None
        for key, raw in headers:
            if key in _ROUTING:
                if key in routing:
                    return None
                routing[key] = raw.decode("latin-1")
            elif key == b"accept":
                accept = raw
            elif key == b"content-type":
                content_type = raw
            elif key.startswith(b"mcp-param-") or key == b"mcp-session-id":
                return None
        if accept is None or not _accepts_json(accept):
            return None
        if content_type is None or not _is_json(content_type):
            return None
        if not self._plain_request(value):
            return None
        version = routing.get(b"mcp-protocol-version")
        if version is None or version in self.legacy:
            return _LEGACY if self._legacy_meta(value.get("params")) else None
        if version in self.modern and self._modern_ok(routing, value, version):
            return version
        return None

    def _plain_request(self, value: Any) -> bool:
        """A single ``tools/list`` or ``tools/call`` request with plain parameters."""
        if type(value) is not dict or value.get("jsonrpc") != "2.0":
            return False
        if not value.keys() <= _ENVELOPE_KEYS:
            return False
        request_id = value.get("id")
        if type(request_id) is not int and type(request_id) is not str:
            return False
        if type(request_id) is str and not request_id.isascii():
            return False  # the SDK's own checks handle text ids of every kind
        method = value.get("method")
        params = value.get("params")
        if method == "tools/list":
            if params is None and "params" not in value:
                return True
            return (
                type(params) is dict
                and params.keys() <= _LIST_KEYS
                and type(params.get("cursor", "")) is str
            )
        if method == "tools/call":
            if type(params) is not dict or not params.keys() <= _CALL_KEYS:
                return False
            name = params.get("name")
            if type(name) is not str or name in self.header_bound:
                return False
            return "arguments" not in params or type(params["arguments"]) is dict
        return False

    @staticmethod
    def _legacy_meta(params: Any) -> bool:
        """Whether a 2025 request's ``_meta`` is absent or only a progress token."""
        if params is None or "_meta" not in params:
            return True
        meta = params["_meta"]
        if type(meta) is not dict or not meta.keys() <= {"progressToken"}:
            return False
        token = meta.get("progressToken", "")
        return type(token) is str or type(token) is int

    def _modern_ok(self, routing: dict[bytes, str], value: Any, version: str) -> bool:
        """Whether the SDK's own checks pass a 2026-07-28 request's envelope and parameters.

        The rungs of the SDK's ``classify_inbound_request`` that a request passes (the
        envelope's version and capabilities, the version, method and name headers agreeing
        with the body), then its parameter models, judged once per distinct ``_meta`` (a
        client sends the same one every time) and remembered.
        """
        from mcp.shared.inbound import decode_header_value

        method = value["method"]
        params = value["params"]
        meta = params.get("_meta")
        if type(meta) is not dict or _VERSION_KEY not in meta or _CAPABILITIES_KEY not in meta:
            return False
        if meta[_VERSION_KEY] != version or routing.get(b"mcp-method") != method:
            return False
        if method == "tools/call" and (
            decode_header_value(routing.get(b"mcp-name")) != params["name"]
        ):
            return False
        key = (method, version, dump(meta))
        verdict = self._envelopes.get(key)
        if verdict is None:
            verdict = _valid_params(method, version, meta)
            if len(self._envelopes) >= _ENVELOPES_KEPT:
                self._envelopes.clear()
            self._envelopes[key] = verdict
        return verdict

    # -- answering

    async def answer(self, value: dict[str, Any], version: str, send: Send) -> None:
        """Answer a request ``route`` accepted, at the revision it gave."""
        request_id = value["id"]
        params = value.get("params") or {}
        modern = version != _LEGACY
        if value["method"] == "tools/list":
            extra = {**_CACHED, "_meta": self.server_meta} if modern else None
            await _respond(send, 200, *self.answers.list_reply(request_id, extra))
            return
        try:
            result = await self._call(params, request_id, modern)
        except UnknownTool as exc:
            error = {"code": -32602, "message": str(exc)}
            message = {"jsonrpc": "2.0", "id": request_id, "error": error}
            await _respond(send, 400 if modern else 200, dump(message))
            return
        except ConnectRequired as exc:  # the user connects a credential first (-32042)
            message = {"jsonrpc": "2.0", "id": request_id, "error": url_elicitation(exc, modern)}
            await _respond(send, 200, dump(message))
            return
        if modern:
            result.setdefault("resultType", "complete")  # or input_required: the tool asked
            result["_meta"] = self.server_meta
        await _respond(send, 200, _reply(request_id, dump(result)))

    async def _call(
        self, params: Mapping[str, Any], request_id: str | int, modern: bool = False
    ) -> dict[str, Any]:
        """Run the call, timed, logged and counted (``_metrics.counted``, as the SDK road).

        On 2026-07-28 a tool that asks gets an input-required round (``_notify.InputChannel``;
        the client's retry, carrying the answers, goes to the SDK road).
        """
        name = params["name"]
        tool = name if name in self.answers.names else ""
        channel = InputChannel(STATELESS_CHANNEL, name, params) if modern else STATELESS_CHANNEL
        run = self.answers.call(name, params.get("arguments"), request_id, None, channel)
        return await counted(
            self.metrics,
            self.agent,
            name,
            tool,
            self._in_flight,
            run,
            lambda r: bool(r.get("isError")),
            UnknownTool,
        )


def _valid_params(method: str, version: str, meta: dict[str, Any]) -> bool:
    """Whether the SDK's parameter models accept a request of ``method`` with this ``_meta``.

    The name and arguments are checked by ``route`` (a string, an object); only the
    envelope's models (client capabilities and information) are left to judge.
    """
    from mcp_types.methods import validate_client_request
    from pydantic import ValidationError

    params: dict[str, Any] = {"_meta": meta}
    if method == "tools/call":
        params["name"] = "tool"
    try:
        validate_client_request(method, version, params)
    except (ValidationError, ValueError, KeyError):
        return False
    return True


def _maps_headers(header_map: Any, schema: Any) -> bool:
    try:
        return bool(header_map(schema))
    except Exception:  # the SDK cannot read it: leave the tool's calls to the SDK
        return True


def _reply(request_id: str | int, result: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + dump(request_id) + b',"result":' + result + b"}"


async def _respond(send: Send, status: int, *parts: bytes) -> None:
    """A JSON response of ``parts`` (sent one after the other, not joined)."""
    length = sum(len(part) for part in parts)
    headers = [*_JSON_HEADERS, (b"content-length", str(length).encode("ascii"))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    for number, part in enumerate(parts, 1):
        await send({"type": "http.response.body", "body": part, "more_body": number < len(parts)})
