"""A backtracking schema ``pattern`` answers at once over MCP stdio and HTTP (issue 37).

A tool known only by its JSON Schema (a hand-built tool, as a mounted server's are) declares
``pattern: ^(a+)+$``; Python's backtracking ``re`` needs ages for ``"a" * n + "!"``. Served
over stdio, over HTTP with the SDK's session road (protocol 2025-11-25) and with the direct
route (2026-07-28, and a raw stateless POST), an evil call is a prompt validation error
result, and a good call sent alongside it, concurrently, succeeds. Every wait is bounded
(``anyio.fail_after``): a server stalled by the evil call fails the test instead of hanging.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types
import pytest

from .conftest import CALL_TIMEOUT, HTTP_TIMEOUT, BlockingClient, HttpServer, serve_params, text_of
from .test_http import connect

PATTERN = "^(a+)+$"
EVIL = "a" * 5000 + "!"
"""Decades for a backtracking engine; a linear one answers at once."""

PATTERN_PACK = """
from toolpacks import Tool, hookimpl, tool

SCHEMA = {
    "type": "object",
    "properties": {"word": {"type": "string", "pattern": "^(a+)+$"}},
    "required": ["word"],
}


def _word(**arguments):
    return "matched " + str(len(arguments["word"]))


@tool
def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b


@hookimpl
def register_tools(register):
    register(Tool(_word, name="word", description="Check a word.", input_schema=SCHEMA))
    register(add)
"""


def write_pattern_pack(directory: Path) -> Path:
    """The pack (discoverable from ``directory``) and a config serving it as agent ``pat``."""
    (directory / "pattern_pack.py").write_text(textwrap.dedent(PATTERN_PACK))
    dist = directory / "toolpacks_pattern-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toolpacks-pattern\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[toolpacks]\npattern = pattern_pack\n")
    config = directory / "toolpacks.toml"
    config.write_text('[agents.pat]\npacks = ["pattern"]\n')
    return config


def refused(result: mcp_types.CallToolResult) -> None:
    """``result`` is the pattern's validation error."""
    assert result.is_error
    assert f"should match pattern '{PATTERN}'" in text_of(result)


async def evil_and_good(call: Any) -> tuple[Any, Any]:
    """The evil call and a good one, sent together; both bounded."""
    results: dict[str, Any] = {}

    async def one(key: str, name: str, arguments: dict[str, Any]) -> None:
        results[key] = await call(name, arguments)

    with anyio.fail_after(CALL_TIMEOUT):
        async with anyio.create_task_group() as group:
            group.start_soon(one, "evil", "word", {"word": EVIL})
            group.start_soon(one, "good", "add", {"a": 2, "b": 3})
    return results["evil"], results["good"]


# -- stdio ---------------------------------------------------------------------------------


@pytest.fixture
def stdio(tmp_path: Path) -> Iterator[BlockingClient]:
    config = write_pattern_pack(tmp_path)
    client = BlockingClient(serve_params(tmp_path, config, "pat"), tmp_path / "stderr.log")
    client.connect()
    try:
        yield client
    finally:
        client.close()


def test_over_stdio_an_evil_word_is_refused_and_a_good_call_alongside_answers(
    stdio: BlockingClient,
) -> None:
    """Both answers come back over one stdio session; the evil one is a validation error."""
    assert set(stdio.list_tools()) == {"word", "add"}
    evil, good = stdio.run(evil_and_good(stdio.client.call_tool))
    refused(evil)
    assert not good.is_error
    assert text_of(good) == "5"
    matched = stdio.call("word", {"word": "a" * 5000})
    assert not matched.is_error
    assert text_of(matched) == "matched 5000"


# -- HTTP ----------------------------------------------------------------------------------


class PatternServer(HttpServer):
    """``toolpacks serve --agent pat --http 127.0.0.1:0`` serving the pattern pack."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory, ["--agent", "pat"], config=write_pattern_pack(directory))


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PatternServer]:
    server = PatternServer(tmp_path_factory.mktemp("pattern-http"))
    try:
        yield server
    finally:
        server.kill()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_over_http_an_evil_word_is_refused_and_a_good_call_alongside_answers(
    web: PatternServer, mode: str
) -> None:
    """The SDK's session road (``legacy``) and the direct route (``auto``) alike."""

    async def main() -> tuple[Any, Any, Any]:
        async with connect(web.url("pat"), token=None, mode=mode) as client:
            await client.list_tools()
            evil, good = await evil_and_good(client.call_tool)
            with anyio.fail_after(CALL_TIMEOUT):
                matched = await client.call_tool("word", {"word": "a" * 5000})
            return evil, good, matched

    evil, good, matched = anyio.run(main)
    refused(evil)
    assert not good.is_error
    assert text_of(good) == "5"
    assert text_of(matched) == "matched 5000"


def test_raw_stateless_posts_on_the_direct_route_answer_alongside_and_healthz_stays_up(
    web: PatternServer,
) -> None:
    """Plain POSTs (the direct route): the evil one, a good one and ``/healthz`` together."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
    }

    async def main() -> dict[str, httpx.Response]:
        answers: dict[str, httpx.Response] = {}
        async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as http:

            async def post(key: str, name: str, arguments: dict[str, Any]) -> None:
                body = {
                    "jsonrpc": "2.0",
                    "id": key,
                    "method": "tools/call",
                    "params": {"name": name, "arguments": arguments, "_meta": meta},
                }
                sent = {**headers, "Mcp-Name": name}
                answers[key] = await http.post(web.url("pat"), json=body, headers=sent)

            async def health() -> None:
                answers["health"] = await http.get(f"{web.base}/healthz")

            with anyio.fail_after(CALL_TIMEOUT):
                async with anyio.create_task_group() as group:
                    group.start_soon(post, "evil", "word", {"word": EVIL})
                    group.start_soon(post, "good", "add", {"a": 2, "b": 3})
                    group.start_soon(health)
        return answers

    answers = anyio.run(main)
    assert answers["health"].status_code == 200
    evil = json.loads(answers["evil"].text)["result"]
    assert evil["isError"] is True
    assert f"should match pattern '{PATTERN}'" in evil["content"][0]["text"]
    good = json.loads(answers["good"].text)["result"]
    assert good["isError"] is False
    assert good["content"][0]["text"] == "5"
