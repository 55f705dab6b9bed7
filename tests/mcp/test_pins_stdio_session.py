"""The SDK-free stdio session refuses what the SDK's own server refuses (issue 36).

The same lines go to toolpacks' stdio server (no SDK) and to a server of the official MCP SDK
(``MCPServer``) with the same tool; refusals must be the same: tools before ``initialize``, an
unknown ``protocolVersion`` (answered with the latest, never echoed), a 2026-07-28 envelope in
a handshake session, a 2026 request without ``clientCapabilities``, ``arguments`` that are not
an object. Each session is its own process, since the era is decided per session.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

OURS = """
import types

from toolpacks import Host, hookimpl, tool
from toolpacks.mcp import serve_stdio


@tool
def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b


pack = types.ModuleType("calc")
pack.register_tools = hookimpl(lambda register: register(add))
host = Host({"agents": {"calc": {"packs": ["calc"]}}}, discover=False)
host.add_pack(pack, name="calc")
serve_stdio(host.toolset("calc"), name="calc")
"""

SDK = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("calc")


@server.tool()
def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b


server.run()
"""

HELLO = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}
INIT = [
    {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": HELLO},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
CALL = {"name": "add", "arguments": {"a": 1, "b": 2}}

SESSIONS: dict[str, list[dict[str, Any]]] = {
    "tools before initialize": [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": CALL},
    ],
    "an unknown protocolVersion": [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {**HELLO, "protocolVersion": "2099-01-01"},
        },
    ],
    "a 2026 envelope in a handshake session": [
        *INIT,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {**CALL, "_meta": META}},
    ],
    "a 2026 request without clientCapabilities": [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/list",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
        },
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {**CALL, "_meta": META}},
    ],
    "arguments that are not an object": [
        *INIT,
        *(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {"name": "add", "arguments": bad},
            }
            for i, bad in ((1, [1, 2]), (2, "x"), (3, 5))
        ),
    ],
}


def _run(script: Path, lines: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    """Send ``lines``, keep the input open until every request is answered (90 s at most).

    Closing the input at once would end the SDK's server before it answers the last request.
    """
    wanted = {line["id"] for line in lines if "id" in line}
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "TOOLPACKS_SERVE_GRACE": "5"},
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    answers: dict[Any, dict[str, Any]] = {}
    try:
        proc.stdin.write("".join(json.dumps(line) + "\n" for line in lines).encode())
        proc.stdin.flush()
        deadline = time.monotonic() + 90
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            while set(answers) < wanted and time.monotonic() < deadline:
                if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
                    break
                line = proc.stdout.readline()
                if not line:
                    break
                answer = json.loads(line)
                if "id" in answer:
                    answers[answer["id"]] = answer
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)
        proc.stdout.close()
    return answers


def _shape(answer: dict[str, Any] | None) -> Any:
    """What a refusal is, for comparing servers: the error code, or the result's kind."""
    if answer is None:
        return "no answer"
    if "error" in answer:
        return ("error", answer["error"]["code"])
    result = answer["result"]
    if "protocolVersion" in result:
        return ("initialized", result["protocolVersion"])
    if "tools" in result:
        return ("listed", sorted(t["name"] for t in result["tools"]))
    return ("result", bool(result.get("isError")))


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("stdio-pins")
    made = {}
    for name, source in (("ours", OURS), ("sdk", SDK)):
        path = root / f"{name}.py"
        path.write_text(textwrap.dedent(source), encoding="utf-8")
        made[name] = path
    return made


@pytest.mark.parametrize("session", sorted(SESSIONS))
def test_the_stdio_session_refuses_as_the_sdk_does(scripts: dict[str, Path], session: str) -> None:
    lines = SESSIONS[session]
    ours = _run(scripts["ours"], lines)
    sdk = _run(scripts["sdk"], lines)
    ids = [line["id"] for line in lines if "id" in line and line["id"] != "init"]
    assert {i: _shape(ours.get(i)) for i in ids} == {i: _shape(sdk.get(i)) for i in ids}


def test_what_the_refusals_are(scripts: dict[str, Path]) -> None:
    """Not only equal to the SDK's: each is a refusal, and the version is never echoed."""
    before = _run(scripts["ours"], SESSIONS["tools before initialize"])
    assert _shape(before[1])[0] == "error"
    assert _shape(before[2])[0] == "error"
    unknown = _run(scripts["ours"], SESSIONS["an unknown protocolVersion"])
    assert unknown[1]["result"]["protocolVersion"] == "2025-11-25"
    mixed = _run(scripts["ours"], SESSIONS["a 2026 envelope in a handshake session"])
    assert _shape(mixed[1])[0] == "error"
    assert _shape(mixed[2])[0] == "error"
    partial = _run(scripts["ours"], SESSIONS["a 2026 request without clientCapabilities"])
    assert _shape(partial[1]) == ("error", -32602)
    assert "clientCapabilities" in partial[1]["error"]["message"]
    bad = _run(scripts["ours"], SESSIONS["arguments that are not an object"])
    assert [_shape(bad[i]) for i in (1, 2, 3)] == [("error", -32602)] * 3
