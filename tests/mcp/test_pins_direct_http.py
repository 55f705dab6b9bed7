"""The direct HTTP route leaves to the SDK what only the SDK checks (issue 36).

The differential corpus of ``test_direct_http`` gains what it lacked: a tool that binds an
argument to an ``Mcp-Param-*`` header (the SDK checks the header against the body, so the
direct route must hand such calls over, matching or not), an ``Mcp-Param-*`` header on a plain
tool, a 2025 ``_meta`` beyond a progress token, extra top-level keys, and a repeated routing
header. Each request goes once through the served app (direct route on) and once with the
route off; status, content type and body must be the same.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Annotated, Any

import httpx
import pytest
from pydantic import Field

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}
ADD = {"name": "add", "arguments": {"a": 1, "b": 2}}
REGIONAL = {"name": "regional", "arguments": {"region": "eu-west"}}


def _modern(params: dict[str, Any], *extra: tuple[str, str]) -> Any:
    headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", params["name"]),
        *extra,
    ]
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, "_meta": META}}
    return body, headers


def _legacy(params: dict[str, Any], *extra: tuple[str, str], **top: Any) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params, **top}
    return body, [("MCP-Protocol-Version", "2025-11-25"), *extra]


CORPUS = {
    "a bound argument with its matching header": _modern(REGIONAL, ("Mcp-Param-Region", "eu-west")),
    "a bound argument with another header value": _modern(
        REGIONAL, ("Mcp-Param-Region", "us-east")
    ),
    "a bound argument without its header": _modern(REGIONAL),
    "an Mcp-Param header on a plain tool (2026)": _modern(ADD, ("Mcp-Param-Region", "eu-west")),
    "an Mcp-Param header on a plain tool (2025)": _legacy(ADD, ("Mcp-Param-Region", "eu-west")),
    "a 2025 _meta beyond a progress token": _legacy(
        {**ADD, "_meta": {"progressToken": 3, "example.com/trace": "abc"}}
    ),
    "a 2025 _meta with only another key": _legacy({**ADD, "_meta": {"example.com/trace": "x"}}),
    "an extra top-level key": _legacy(ADD, extra_key=1),
    "a top-level result key": _legacy(ADD, result={}),
    "a top-level error key": _legacy(ADD, error={"code": 1, "message": "x"}),
    "a progress token that is a float": _legacy({**ADD, "_meta": {"progressToken": 1.5}}),
    "a progress token that is a boolean": _legacy({**ADD, "_meta": {"progressToken": True}}),
    "a progress token that is null": _legacy({**ADD, "_meta": {"progressToken": None}}),
    "a _meta that is a list": _legacy({**ADD, "_meta": [1]}),
    "a related-task _meta": _legacy(
        {**ADD, "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t1"}}}
    ),
    "a task-augmented call": _legacy({**ADD, "task": {"ttl": 1000}}),
    "a repeated Mcp-Method header": _modern(ADD, ("Mcp-Method", "tools/call")),
    "a repeated Mcp-Name header": _modern(ADD, ("Mcp-Name", "add")),
    "a repeated protocol version header": _modern(ADD, ("MCP-Protocol-Version", "2026-07-28")),
}


@pytest.fixture
def app(pack_of: Callable[..., Any]) -> Iterator[Any]:
    """One agent with a plain tool and one binding an argument to a header."""
    from toolpacks import Host, tool
    from toolpacks.mcp.http._app import build_http_app

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @tool
    def regional(
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    ) -> str:
        """Answer for a region, named in a header too."""
        return region

    with Host({"agents": {"solo": {"packs": ["calc"]}}}, discover=False) as host:
        host.add_pack(pack_of(add, regional), name="calc")
        yield build_http_app(host, ["solo"]).app


def _endpoint(app: Any) -> Any:
    return next(r for r in app.routes if getattr(r, "path", "") == "/mcp").app


async def _post(app: Any, body: Any, headers: list[tuple[str, str]]) -> tuple[int, str, Any]:
    sent = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        *headers,
    ]
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        answer = await client.post("/mcp", content=json.dumps(body), headers=sent)
    kind = answer.headers.get("content-type", "")
    try:
        return answer.status_code, kind, json.loads(answer.text)
    except ValueError:
        return answer.status_code, kind, answer.text


def test_the_bound_tool_declares_its_header(app: Any) -> None:
    """The corpus below is about a header binding: the listed schema must carry it."""

    async def main() -> Any:
        async with app.router.lifespan_context(app):
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            return await _post(app, body, [("MCP-Protocol-Version", "2025-11-25")])

    status, _, listed = asyncio.run(asyncio.wait_for(main(), 60))
    assert status == 200
    (schema,) = [t["inputSchema"] for t in listed["result"]["tools"] if t["name"] == "regional"]
    assert schema["properties"]["region"]["x-mcp-header"] == "Region"


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_the_direct_route_answers_as_the_sdk(app: Any, case: str) -> None:
    body, headers = CORPUS[case]

    async def main() -> tuple[Any, Any]:
        endpoint = _endpoint(app)
        route = endpoint.direct
        assert route is not None
        async with app.router.lifespan_context(app):
            endpoint.direct = route
            direct = await _post(app, body, headers)
            endpoint.direct = None
            sdk = await _post(app, body, headers)
        return direct, sdk

    direct, sdk = asyncio.run(asyncio.wait_for(main(), 60))
    assert direct == sdk


def test_a_mismatched_header_is_refused_not_answered(app: Any) -> None:
    """Not only equal: a header contradicting the bound argument never runs the tool."""

    async def main() -> Any:
        async with app.router.lifespan_context(app):
            return await _post(app, *CORPUS["a bound argument with another header value"])

    status, _, answer = asyncio.run(asyncio.wait_for(main(), 60))
    ran = isinstance(answer, dict) and "result" in answer and not answer["result"].get("isError")
    assert status != 200 or not ran, answer
