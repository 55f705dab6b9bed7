"""``[mcp_servers.NAME] sandbox = true``: a stdio server sandboxed like an isolated pack.

A tiny hand-written stdio MCP server (no SDK: it starts in milliseconds) that reads a file or
connects to a port, mounted from a real configuration file holding a secret.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from tests.mcp.test_client import SERVE_LOOP

from toolpacks import Host
from toolpacks.packs.sandbox import UNAVAILABLE_ENV
from toolpacks.packs.sandbox._landlock import abi

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(120),
    pytest.mark.skipif(abi() < 4, reason="needs Landlock ABI 4 (Linux 6.7)"),
]

SERVER = (
    """
import json, socket, sys

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"},
          "port": {"type": "integer"}}}
TOOLS = [{"name": "read", "description": "Read a file.", "inputSchema": SCHEMA},
         {"name": "connect", "description": "Connect to a port.", "inputSchema": SCHEMA}]

def call(name, arguments):
    try:
        if name == "read":
            with open(arguments["path"]) as src:
                text = src.read(200)
        else:
            socket.create_connection(("127.0.0.1", arguments["port"]), timeout=5).close()
            text = "connected"
        return {"content": [{"type": "text", "text": text}]}
    except OSError as exc:
        return {"content": [{"type": "text", "text": type(exc).__name__}], "isError": True}

"""
    + SERVE_LOOP
)


def _config(tmp_path: Path, extra: str) -> Path:
    script = tmp_path / "server" / "probe_server.py"
    script.parent.mkdir()
    script.write_text(textwrap.dedent(SERVER))
    config = tmp_path / "toolpacks.toml"
    config.write_text(
        "# the host's secret: sk-config-secret\n"
        f"[mcp_servers.probe]\ncommand = {sys.executable!r}\n"
        f"args = [{str(script)!r}]\ntimeout = 20\n{extra}"
    )
    return config


def call(host: Host, name: str, arguments: dict[str, Any]) -> Any:
    toolset = host.toolset(packs=["probe"])
    return asyncio.run(asyncio.wait_for(toolset.call(name, arguments), 20))


def test_a_sandboxed_stdio_server_cannot_read_the_host_config(tmp_path: Path) -> None:
    config = tmp_path / "toolpacks.toml"
    granted = tmp_path / "granted"
    granted.mkdir()
    (granted / "data.txt").write_text("granted data")
    _config(tmp_path, f"sandbox = true\nread = [{str(granted)!r}]\n")
    with Host(config, discover=False) as host:
        result = call(host, "read", {"path": str(config)})
        assert result.is_error
        assert "PermissionError" in str(result.content)
        assert "sk-config" not in str(result.content)
        assert call(host, "read", {"path": str(granted / "data.txt")}).value == "granted data"
    # without the sandbox the same server reads it: the refusal above is the sandbox's
    config.write_text(config.read_text().replace("sandbox = true", "sandbox = false"))
    with Host(config, discover=False) as host:
        assert "sk-config-secret" in str(call(host, "read", {"path": str(config)}).value)


def test_a_sandboxed_stdio_server_without_network_cannot_connect(tmp_path: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        port = server.getsockname()[1]
        config = _config(tmp_path, "sandbox = true\nnetwork = false\n")
        with Host(config, discover=False) as host:
            result = call(host, "connect", {"port": port})
            assert result.is_error
            assert "PermissionError" in str(result.content)


def test_sandbox_true_refuses_to_start_where_there_is_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(UNAVAILABLE_ENV, "1")
    config = _config(tmp_path, "sandbox = true\n")
    with Host(config, discover=False) as host:
        info = host.load("probe").info
        assert info.status == "failed"
        assert UNAVAILABLE_ENV in str(info.error)
