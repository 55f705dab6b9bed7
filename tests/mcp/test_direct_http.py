"""Stateless ``tools/list`` and ``tools/call`` over HTTP are answered without the SDK's machinery.

Each request below is sent twice to one in-process app: once as served (plain requests take
the direct route) and once with the direct route switched off (everything goes to the SDK's
session manager). Status, content type and the parsed JSON body must be the same, on both
protocol revisions, for results, error results, unknown tools and requests the direct route
leaves to the SDK. A separate test proves the plain requests never reach the SDK.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}


def _legacy(method: str, params: dict[str, Any] | None, rid: Any = 1, **headers: str) -> Any:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        body["params"] = params
    return body, {"MCP-Protocol-Version": "2025-11-25", **headers}


OMIT = "<omit>"
"""A header value that removes the header (httpx's own ``Accept: */*`` too)."""


def _modern(method: str, params: dict[str, Any], rid: Any = 1, **headers: str) -> Any:
    sent = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    if method == "tools/call":
        sent["Mcp-Name"] = params["name"]
    sent.update(headers)
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": method,
        "params": {**params, "_meta": META},
    }, sent


CALLS = [
    {"name": "add", "arguments": {"a": 1, "b": 2}},
    {"name": "forecast", "arguments": {"city": "Oslo"}},
    {"name": "echo", "arguments": {"text": "h\u00e9llo \u2603"}},
    {"name": "echo", "arguments": {"text": "lone \ud800 surrogate"}},
    {"name": "refuse", "arguments": {}},
    {"name": "explode", "arguments": {}},
    {"name": "wipe", "arguments": {"path": "/"}},
    {"name": "nope", "arguments": {}},
    {"name": "add", "arguments": {"a": "x"}},
    {"name": "add"},
]

REQUESTS = [
    *(_legacy("tools/call", p) for p in CALLS),
    *(_modern("tools/call", p) for p in CALLS),
    _legacy("tools/list", {}),
    _legacy("tools/list", None, rid="list-1"),
    _legacy("tools/list", {"cursor": "abc"}),
    _modern("tools/list", {}),
    _modern("tools/list", {}, rid="s"),
    # left to the SDK: each must still get the SDK's answer
    _legacy("tools/list", {"cursor": 5}),
    _legacy("tools/call", {"name": "add", "arguments": None}),
    _legacy("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}, "extra": 1}),
    _legacy(
        "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {"progressToken": 7}}
    ),
    _legacy(
        "tools/call",
        {"name": "add", "arguments": {"a": 1, "b": 2}},
        **{"MCP-Protocol-Version": "2025-03-26"},
    ),
    _legacy("tools/call", {"name": 3}),
    _legacy("ping", {}),
    _modern("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, **{"Mcp-Name": "echo"}),
    _modern(
        "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, **{"Mcp-Method": "tools/list"}
    ),
    _modern("tools/list", {}, **{"MCP-Protocol-Version": "2099-01-01"}),
    _modern(
        "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, **{"Accept": "text/html"}
    ),
    _modern(
        "tools/call",
        {"name": "add", "arguments": {"a": 1, "b": 2}},
        **{"Content-Type": "text/plain"},
    ),
    (
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {}}},
        {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"},
    ),
    (
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/list",
            "params": {"_meta": {**META, "io.modelcontextprotocol/clientCapabilities": 5}},
        },
        {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"},
    ),
    (
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"MCP-Protocol-Version": "2025-11-25"},
    ),
    ([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}], {"MCP-Protocol-Version": "2025-11-25"}),
    # the Accept header (issue 35): none at all, JSON only, SSE only, wildcards
    *(
        request(method, params, **{"Accept": accept})
        for accept in (OMIT, "", "application/json", "text/event-stream", "*/*", "application/*")
        for request in (_legacy, _modern)
        for method, params in (("tools/list", {}), ("tools/call", CALLS[0]))
    ),
]


@pytest.fixture
def app(pack_of: Callable[..., Any]) -> Iterator[Any]:
    """An HTTP app of one agent with tools of every result kind."""
    from dataclasses import dataclass

    from toolpacks import Host, ToolError, tool
    from toolpacks.mcp.http._app import build_http_app

    @dataclass
    class Forecast:
        city: str
        days: int

    @tool(read_only=True, title="Add numbers")
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @tool
    def forecast(city: str, days: int = 1) -> Forecast:
        """Forecast the weather."""
        return Forecast(city, days)

    @tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @tool
    def refuse() -> str:
        """Fail on purpose."""
        raise ToolError("quota exceeded")

    @tool
    def explode() -> str:
        """Fail unexpectedly."""
        raise RuntimeError("db password is hunter2")

    @tool(require_approval=True)
    def wipe(path: str) -> str:
        """Wipe a path."""
        return path

    config = {"agents": {"solo": {"packs": ["calc"]}}}
    with Host(config, discover=False) as host:
        host.add_pack(pack_of(add, forecast, echo, refuse, explode, wipe), name="calc")
        yield build_http_app(host, ["solo"]).app


def _endpoint(app: Any) -> Any:
    return next(r for r in app.routes if getattr(r, "path", "") == "/mcp").app


async def _post(app: Any, body: Any, headers: dict[str, str]) -> tuple[int, str, Any]:
    sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    sent.update(headers)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        for name in [k for k, v in sent.items() if v == OMIT]:
            del sent[name]
            client.headers.pop(name, None)
        answer = await client.post("/mcp", content=json.dumps(body), headers=sent)
    kind = answer.headers.get("content-type", "")
    try:
        return answer.status_code, kind, json.loads(answer.text)
    except ValueError:  # a refusal with a plain body, or none
        return answer.status_code, kind, answer.text


def test_direct_answers_are_the_sdks_answers_on_both_revisions(app: Any) -> None:
    """Every request gets the same status, content type and JSON with or without the route."""

    async def main() -> list[tuple[Any, Any, Any]]:
        endpoint = _endpoint(app)
        route = endpoint.direct
        assert route is not None
        pairs = []
        async with app.router.lifespan_context(app):
            for body, headers in REQUESTS:
                endpoint.direct = route
                direct = await _post(app, body, headers)
                endpoint.direct = None
                sdk = await _post(app, body, headers)
                pairs.append((body, direct, sdk))
        return pairs

    for body, direct, sdk in asyncio.run(asyncio.wait_for(main(), 60)):
        assert direct == sdk, body


def test_plain_stateless_requests_never_reach_the_sdk(app: Any) -> None:
    """tools/list and tools/call are answered without the SDK's session manager."""
    endpoint = _endpoint(app)
    reached: list[Any] = []

    async def refuse(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])
        raise AssertionError("the SDK was asked")

    endpoint.manager.handle_request = refuse

    async def main() -> list[tuple[int, str, Any]]:
        async with app.router.lifespan_context(app):
            return [
                await _post(app, *_legacy("tools/list", {})),
                await _post(app, *_legacy("tools/call", CALLS[0])),
                await _post(app, *_modern("tools/list", {})),
                await _post(app, *_modern("tools/call", CALLS[1])),
                await _post(app, *_modern("tools/call", CALLS[7])),
            ]

    answers = asyncio.run(asyncio.wait_for(main(), 60))
    assert reached == []
    assert [a[0] for a in answers] == [200, 200, 200, 200, 400]
    assert answers[1][2]["result"]["structuredContent"] == {"result": 3}
    assert answers[3][2]["result"]["resultType"] == "complete"


RAW_BODIES = [b"", b"{not json", b'{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "tools/list"}']
"""Bodies toolpacks answers itself, never handing them to the SDK (issue 35)."""


@pytest.mark.parametrize(
    "headers",
    [
        {"Accept": OMIT},
        {"Accept": "text/html"},
        {"Accept": "text/event-stream"},
        {"Content-Type": "text/plain"},
        {"Content-Type": OMIT},
    ],
)
def test_bodies_answered_without_the_sdk_check_accept_and_content_type_first(
    app: Any, headers: dict[str, str]
) -> None:
    """A bad body with a bad ``Accept`` or ``Content-Type`` gets the SDK's 406 or 415.

    The SDK checks those headers before it reads a body, so its answer to a valid request
    with the same headers is the answer: the direct route must not answer "as if accepted".
    """
    valid = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    endpoint = _endpoint(app)

    async def main() -> tuple[Any, list[Any]]:
        async with app.router.lifespan_context(app):
            endpoint.direct = None
            sdk = await _post(app, valid, {"MCP-Protocol-Version": "2025-11-25", **headers})
            ours = [
                await _post_raw(app, raw, {"MCP-Protocol-Version": "2025-11-25", **headers})
                for raw in RAW_BODIES
            ]
        return sdk, ours

    sdk, ours = asyncio.run(asyncio.wait_for(main(), 60))
    assert sdk[0] in (400, 406, 415), sdk
    assert all(answer == sdk for answer in ours), (sdk, ours)


async def _post_raw(app: Any, body: bytes, headers: dict[str, str]) -> tuple[int, str, Any]:
    sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    sent.update(headers)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        for name in [k for k, v in sent.items() if v == OMIT]:
            del sent[name]
            client.headers.pop(name, None)
        answer = await client.post("/mcp", content=body, headers=sent)
    try:
        return answer.status_code, answer.headers.get("content-type", ""), json.loads(answer.text)
    except ValueError:
        return answer.status_code, answer.headers.get("content-type", ""), answer.text
