"""``toolpacks serve`` over stdio imports neither the MCP SDK's client nor its HTTP stack.

A stdio server needs none of them, and they are a large share of its cold start. The served
process is asked, through a tool of its own, which modules it has loaded after answering
``initialize``, ``tools/list`` and a ``tools/call``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

MODULES_PACK = '''
"""A pack whose tool reports the modules loaded in the served process."""

import sys

from toolpacks import hookimpl, tool


@tool
def loaded_modules() -> list[str]:
    """The names of the modules loaded in this process."""
    return sorted(sys.modules)


@hookimpl
def register_tools(register):
    register(loaded_modules)
'''

FORBIDDEN = (
    "mcp.client",
    "mcp.server.streamable_http",
    "mcp.server.streamable_http_manager",
    "mcp.server.sse",
    "mcp.server.auth",
    "httpx",
    "httpx2",
    "starlette",
    "uvicorn",
)
"""Module names (and their submodules) a stdio server has no use for."""


def _exchange(directory: Path) -> list[dict[str, Any]]:
    (directory / "modules_pack.py").write_text(textwrap.dedent(MODULES_PACK))
    dist = directory / "toolpacks_modules-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toolpacks-modules\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[toolpacks]\nmods = modules_pack\n")
    config = directory / "toolpacks.toml"
    config.write_text('[agents.probe]\npacks = ["mods"]\n')
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "loaded_modules"}},
    ]
    env = {**os.environ, "PYTHONPATH": str(directory)}
    argv = [sys.executable, "-m", "toolpacks", "serve", "--agent", "probe", "--config", str(config)]
    done = subprocess.run(
        argv,
        input="".join(json.dumps(line) + "\n" for line in lines).encode(),
        capture_output=True,
        env=env,
        cwd=directory,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_stdio_serve_imports_no_sdk_client_or_http_module(tmp_path: Path) -> None:
    """The served process has loaded no client or HTTP module of the SDK, nor the SDK's root."""
    answers = {m["id"]: m for m in _exchange(tmp_path)}
    assert answers[1]["result"]["serverInfo"]["name"] == "toolpacks:probe"
    assert [t["name"] for t in answers[2]["result"]["tools"]] == ["loaded_modules"]
    loaded = answers[3]["result"]["structuredContent"]["result"]
    assert "toolpacks.mcp._server" in loaded or "toolpacks.mcp._bare" in loaded
    bad = [m for m in loaded if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    assert bad == []
    # ``mcp``'s own __init__ imports the client, so the SDK's root package is not loaded either.
    assert "mcp" not in loaded
