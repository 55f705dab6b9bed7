"""Serving over stdio without the MCP SDK: the protocol answered by toolpacks' own modules.

The served process runs with ``mcp`` and ``mcp_types`` made unimportable, as where the SDK is
missing: it still answers ``initialize``, ``ping``, ``tools/list``, ``tools/call``, refuses
what it does not serve with the JSON-RPC errors, and ends cleanly at end of input. The
2026-07-28 session (``server/discover`` and self-contained requests) is pinned to the shapes
the SDK's own server sends.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

SERVE = '''
import sys


class NoSdk:
    """Make the MCP SDK and its types unimportable, as where they are not installed."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("mcp", "mcp_types"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoSdk())

import types

from toolpacks import Host, hookimpl, tool
from toolpacks.mcp import serve_stdio


@tool(read_only=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


pack = types.ModuleType("calc")
pack.register_tools = hookimpl(lambda register: register(add))
host = Host({"agents": {"calc": {"packs": ["calc"]}}}, discover=False)
host.add_pack(pack, name="calc")
serve_stdio(host.toolset("calc"), name="toolpacks:calc")
print("sdk loaded:", sorted(m for m in sys.modules if m.split(".")[0] in ("mcp", "mcp_types")),
      file=sys.stderr)
'''

HELLO = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _serve(tmp_path: Path, lines: list[Any]) -> tuple[dict[Any, dict[str, Any]], str]:
    script = tmp_path / "serve.py"
    script.write_text(textwrap.dedent(SERVE))
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    done = subprocess.run(
        [sys.executable, str(script)],
        input=text.encode(),
        capture_output=True,
        env={**os.environ, "TOOLPACKS_SERVE_GRACE": "5"},
        timeout=60,
        check=False,
    )
    stderr = done.stderr.decode()
    assert done.returncode == 0, stderr[-2000:]
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    return {a.get("id", a.get("method")): a for a in answers}, stderr


def test_stdio_serves_without_the_mcp_sdk_installed(tmp_path: Path) -> None:
    """initialize, ping, tools/list and tools/call work, and errors are JSON-RPC's, sans SDK."""
    answers, stderr = _serve(
        tmp_path,
        [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
            {
                "jsonrpc": "2.0",
                "id": "c",
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
            },
            {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "nope"}},
            {"jsonrpc": "2.0", "id": 6, "method": "resources/list"},
            {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": 5}},
            '{"jsonrpc": "2.0", "id": 8, "method": "tools/call", '
            '"params": {"name": "add", "arguments": {"a": 1, "a": 2}}}',
            "this is not json",
            {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}, "extra": True},
        ],
    )
    assert "sdk loaded: []" in stderr
    assert answers[1]["result"] == {
        "protocolVersion": "2025-11-25",
        "capabilities": {
            "tools": {"listChanged": False},
            "logging": {},
            # answered with empty lists when no pack offers any, as the SDK's server does
            "prompts": {"listChanged": False},
            "resources": {"subscribe": True, "listChanged": False},
            "completions": {},
        },
        "serverInfo": {
            "name": "toolpacks:calc",
            "version": answers[1]["result"]["serverInfo"]["version"],
        },
    }
    assert answers[2]["result"] == {}
    assert [t["name"] for t in answers[3]["result"]["tools"]] == ["add"]
    assert answers["c"]["result"]["structuredContent"] == {"result": 5}
    assert answers["c"]["result"]["isError"] is False
    assert answers[5]["error"]["code"] == -32602
    assert answers[5]["error"]["message"].startswith("Unknown tool: nope.")
    assert answers[6]["result"] == {"resources": []}
    assert answers[7]["error"]["code"] == -32602
    assert answers[8]["result"]["isError"] is True
    assert "duplicate key 'a'" in answers[8]["result"]["content"][0]["text"]
    assert answers[None]["error"]["code"] == -32700
    assert answers[9]["error"]["code"] == -32600  # judged without the MCP types: plainly refused


def test_a_2026_session_over_stdio_has_the_sdks_shapes(tmp_path: Path) -> None:
    """server/discover, envelope checks, results with resultType and the server's _meta."""
    call = {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": META}
    answers, _ = _serve(
        tmp_path,
        [
            {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": META}},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
            {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"_meta": META}},
            {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "add"}},
            {"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": HELLO},
            {
                "jsonrpc": "2.0",
                "id": 6,
                "method": "tools/list",
                "params": {
                    "_meta": {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
                },
            },
        ],
    )
    server_meta = answers[0]["result"]["_meta"]
    assert server_meta["io.modelcontextprotocol/serverInfo"]["name"] == "toolpacks:calc"
    assert answers[0]["result"] == {
        "supportedVersions": ["2026-07-28"],
        "capabilities": {
            "tools": {"listChanged": False},
            "prompts": {"listChanged": False},
            "resources": {"subscribe": True, "listChanged": False},
            "completions": {},
        },
        "cacheScope": "private",
        "ttlMs": 0,
        "resultType": "complete",
        "_meta": server_meta,
    }
    listed = answers[1]["result"]
    assert (listed["cacheScope"], listed["ttlMs"], listed["resultType"]) == (
        "private",
        0,
        "complete",
    )
    assert [t["name"] for t in listed["tools"]] == ["add"]
    assert answers[2]["result"]["resultType"] == "complete"
    assert answers[2]["result"]["structuredContent"] == {"result": 3}
    assert answers[3]["error"] == {"code": -32601, "message": "Method not found", "data": "ping"}
    assert answers[4]["error"]["code"] == -32602
    assert "params._meta must be an object" in answers[4]["error"]["message"]
    assert answers[5]["error"]["code"] == -32022
    assert answers[5]["error"]["data"] == {"supported": ["2026-07-28"], "requested": "2025-11-25"}
    assert answers[6]["error"]["code"] == -32022
