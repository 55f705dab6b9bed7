"""Credentials over ``toolpacks serve --http`` with ``[auth]``: each JWT subject gets its own.

A real server (one worker and two) behind the local issuer of the identity tests; the
direct route (raw JSON-RPC) and the official MCP client's road both get each subject's own
value, and a subject without one the how-to-connect result.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.mcp.auth_issuer import AuthServer, Issuer, auth_config

from toolpacks.host.credentials._store import SqliteCredentialStore

CRED_PACK = '''
from toolpacks import ToolContext, hookimpl, tool


@tool(credentials=["github"])
def gh_token(ctx: ToolContext) -> str:
    """The GitHub token of the call's principal."""
    return ctx.credential("github")


@hookimpl
def register_tools(register):
    register(gh_token)
'''
AGENTS = """
[agents.open]
packs = ["cred"]

[credentials.github]
kind = "secret"
"""
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
CALL = {"jsonrpc": "2.0", "id": 7, "method": "tools/call"}


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    """The local issuer (real RSA and EC keys served over HTTP)."""
    served = Issuer()
    yield served
    served.close()


@pytest.fixture(scope="module", params=[1, 2], ids=["one-worker", "two-workers"])
def served(
    request: pytest.FixtureRequest, issuer: Issuer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[AuthServer, Path]]:
    """``serve --http`` of the credential pack, alice's and bob's tokens stored."""
    directory = tmp_path_factory.mktemp(f"cred{request.param}")
    (directory / "cred_pack.py").write_text(textwrap.dedent(CRED_PACK))
    dist = directory / "toolpacks_cred-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toolpacks-cred\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[toolpacks]\ncred = cred_pack\n")
    state = directory / "state"
    store = SqliteCredentialStore(state)
    store.set("github", "alice", "ghp_alice_served_1")
    store.set("github", "bob", "ghp_bob_served_2")
    env = {"TOOLPACKS_STATE_DIR": str(state)}
    args = ["--agent", "open", "--workers", str(request.param)]
    server = AuthServer(directory, auth_config(issuer, agents=AGENTS), args, env)
    yield server, state
    server.kill()


def direct(server: AuthServer, token: str) -> dict[str, Any]:
    """One raw tools/call on the direct route."""
    body = {**CALL, "params": {"name": "gh_token", "arguments": {}}}
    sent = {**HEADERS, "Authorization": f"Bearer {token}"}
    response = httpx.post(server.url("open"), json=body, headers=sent, timeout=30)
    assert response.status_code == 200, response.text
    text = response.text
    if text.startswith("event:"):  # answered on an SSE stream: the message is its data line
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    result: dict[str, Any] = json.loads(text)["result"]
    return result


async def through_sdk(server: AuthServer, token: str) -> Any:
    """One tools/call with the official MCP client."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(server.url("open"), http_client=http)
        async with Client(transport, mode="legacy", read_timeout_seconds=30) as client:
            return await client.call_tool("gh_token", {})


def test_each_subject_gets_its_own_on_both_roads(
    served: tuple[AuthServer, Path], issuer: Issuer
) -> None:
    """Alice's token brings alice's value, bob's bob's: direct route and SDK road alike."""
    server, _ = served
    for subject, value in (("alice", "ghp_alice_served_1"), ("bob", "ghp_bob_served_2")):
        token = issuer.token(sub=subject)
        result = direct(server, token)
        assert not result.get("isError"), (result, server.stderr())
        assert result["content"][0]["text"] == value
        sdk = asyncio.run(asyncio.wait_for(through_sdk(server, token), 60))
        assert not sdk.is_error, server.stderr()
        assert sdk.content[0].text == value


def test_a_subject_without_one_is_told_how_to_connect(
    served: tuple[AuthServer, Path], issuer: Issuer
) -> None:
    """Carol gets an error result naming the credential and the command, nobody's value."""
    server, _ = served
    result = direct(server, issuer.token(sub="carol"))
    assert result["isError"]
    text = json.dumps(result)
    assert "toolpacks credentials set github --subject carol" in text
    assert "ghp_" not in text
    sdk = asyncio.run(asyncio.wait_for(through_sdk(server, issuer.token(sub="carol")), 60))
    assert sdk.is_error
    assert "ghp_" not in sdk.content[0].text


def test_no_value_in_the_server_log_or_on_disk_in_clear(
    served: tuple[AuthServer, Path], issuer: Issuer, plaintext_in: Any
) -> None:
    """After calls, neither the server's stderr nor any file of its directory holds a value."""
    server = served[0]
    direct(server, issuer.token(sub="alice"))
    assert "ghp_alice_served_1" not in server.stderr()
    assert plaintext_in([server.directory], "ghp_alice_served_1") == []
