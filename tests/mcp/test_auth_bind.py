"""Off loopback, ``serve --http`` starts with ``[auth]`` or per-agent tokens, not with nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from .auth_issuer import AuthServer, Issuer, auth_config

ONLY_OWN = """
[agents.own]
packs = ["who"]
token = { env = "OWN_AGENT_TOKEN" }
"""


def test_auth_allows_a_public_bind(tmp_path: Path) -> None:
    issuer = Issuer()
    try:
        args = ["--agent", "open", "--http", "0.0.0.0:0"]
        server = AuthServer(tmp_path, auth_config(issuer), args, {"OWN_AGENT_TOKEN": "t" * 32})
        try:
            url = server.url("open").replace("0.0.0.0", "127.0.0.1")
            headers = {"Accept": "application/json", "Content-Type": "application/json"}
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            assert httpx.post(url, json=body, headers=headers, timeout=30).status_code == 401
            headers["Authorization"] = f"Bearer {issuer.token()}"
            assert httpx.post(url, json=body, headers=headers, timeout=30).status_code == 200
        finally:
            server.kill()
    finally:
        issuer.close()


def test_per_agent_tokens_allow_a_public_bind_and_nothing_does_not(tmp_path: Path) -> None:
    args = ["--agent", "own", "--http", "0.0.0.0:0"]
    server = AuthServer(tmp_path, ONLY_OWN, args, {"OWN_AGENT_TOKEN": "t" * 32})
    server.kill()
    config = tmp_path / "open.toml"
    config.write_text('[agents.open]\npacks = ["who"]\n')
    command = [sys.executable, "-m", "toolpacks", "serve", "--config", str(config)]
    done = subprocess.run(
        [*command, "--agent", "open", "--http", "0.0.0.0:0"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)},
    )
    assert done.returncode != 0
    assert "without a token" in done.stderr
    assert "[auth] table" in done.stderr
