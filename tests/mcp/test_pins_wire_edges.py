"""Duplicate keys and odd ids on the stdio wire (issue 36, turn-3 survivors).

``_wire.decode`` decides, for each line, whether the server sees a message or the client gets
an answer at once. A boolean or fractional id is no JSON-RPC id: the request is refused with a
null id (a client can never match ``true``). A key repeated inside a ``tools/call``'s
arguments is the tool's error result for that call; a key repeated anywhere else — the id,
the method, the params, the tool name — is an invalid request, and when both happen the
message-level refusal wins, so a repeated ``id`` can never smuggle a call through.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolpacks.mcp._wire import Answer, decode

INVALID_REQUEST = -32600


def _tool_error(name: str, key: str) -> dict[str, Any]:
    text = f"{name}: duplicate key {key!r}"
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _decode(line: str) -> Any:
    return decode(line.encode(), _tool_error)


@pytest.mark.parametrize("rid", ["true", "false", "1.5", "1.0", "null", "[1]", '{"a": 1}'])
def test_an_id_that_is_not_a_string_or_integer_is_refused_with_a_null_id(rid: str) -> None:
    got = _decode(f'{{"jsonrpc": "2.0", "id": {rid}, "method": "ping"}}')
    assert isinstance(got, Answer), got
    message = got.message
    assert message["error"]["code"] == INVALID_REQUEST
    assert message.get("id") is None


@pytest.mark.parametrize("rid", ["7", '"seven"', "-3", "0"])
def test_string_and_integer_ids_pass(rid: str) -> None:
    got = _decode(f'{{"jsonrpc": "2.0", "id": {rid}, "method": "ping"}}')
    assert isinstance(got, dict), got


CALL = '"method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "a": 2}}'


def test_a_key_repeated_in_arguments_is_the_tools_error_result() -> None:
    got = _decode('{"jsonrpc": "2.0", "id": 4, ' + CALL + "}")
    assert isinstance(got, Answer)
    message = got.message
    assert message["id"] == 4
    assert message["result"]["isError"] is True
    assert "duplicate key 'a'" in message["result"]["content"][0]["text"]


@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "ping"}',
        '{"jsonrpc": "2.0", "id": 1, "method": "ping", "method": "tools/list"}',
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
        '"params": {"name": "add", "name": "wipe", "arguments": {}}}',
        '{"jsonrpc": "2.0", "id": 1, "id": 2, ' + CALL + "}",
        '{"jsonrpc": "2.0", "id": 1, "params": {}, ' + CALL + "}",
    ],
)
def test_a_key_repeated_outside_the_arguments_is_an_invalid_request(line: str) -> None:
    got = _decode(line)
    assert isinstance(got, Answer), got
    message = got.message
    assert "error" in message, message
    assert message["error"]["code"] == INVALID_REQUEST
    assert "duplicate key" in message["error"]["message"]


def test_a_repeated_key_in_arguments_with_a_boolean_id_is_refused_not_run() -> None:
    got = _decode('{"jsonrpc": "2.0", "id": true, ' + CALL + "}")
    assert isinstance(got, Answer)
    message = got.message
    assert message["error"]["code"] == INVALID_REQUEST
    assert message.get("id") is None


SERVE = """
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


def test_the_stdio_server_survives_a_repeated_argument_key_under_a_boolean_id(
    tmp_path: Any,
) -> None:
    """It crashed on this one line (StopIteration in the reader); now it refuses and goes on."""
    import json
    import os
    import subprocess
    import sys

    script = tmp_path / "serve.py"
    script.write_text(SERVE, encoding="utf-8")
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": "i", "method": "initialize", "params": hello}),
        '{"jsonrpc": "2.0", "id": true, ' + CALL + "}",
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    ]
    done = subprocess.run(
        [sys.executable, str(script)],
        input="\n".join(lines).encode() + b"\n",
        capture_output=True,
        env={**os.environ, "TOOLPACKS_SERVE_GRACE": "2"},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    refused = [a for a in answers if a.get("id") is None]
    assert refused
    assert refused[0]["error"]["code"] == INVALID_REQUEST
    assert any(a.get("id") == 2 and a.get("result") == {} for a in answers)
