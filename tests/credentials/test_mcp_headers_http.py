"""A mounted server's per-principal header through ``serve --http`` with JWT principals.

``toolpacks serve --http`` with ``[auth]`` (the local issuer of the identity tests) mounts the
echo server (``mcp_echo.py``) with ``Authorization = { credential = "github" }``: each JWT
subject's call reaches it with that subject's own stored token, on the direct route and the
official MCP client's road; a subject without one gets the how-to-connect result and the
server sees no call for it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from tests.credentials.mcp_echo import EchoServer
from tests.mcp.auth_issuer import AuthServer, Issuer, auth_config

from toolpacks.host.credentials._store import SqliteCredentialStore

VALUES = {"alice": "ghp_alice_http_header_1", "bob": "ghp_bob_http_header_22"}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    """The local issuer (real keys served over HTTP)."""
    served = Issuer()
    yield served
    served.close()


@pytest.fixture(scope="module")
def echo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EchoServer]:
    """The echo server the served host mounts."""
    server = EchoServer(tmp_path_factory.mktemp("echo-http"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def served(
    issuer: Issuer, echo: EchoServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AuthServer]:
    """``serve --http --agent open`` mounting the echo server as ``hub``."""
    directory = tmp_path_factory.mktemp("served-hub")
    state = directory / "state"
    store = SqliteCredentialStore(state)
    for subject, value in VALUES.items():
        store.set("github", subject, value)
    agents = (
        '[agents.open]\npacks = ["hub"]\n\n'
        f'[mcp_servers.hub]\nurl = "{echo.url}"\ntimeout = 20\n'
        'headers = { Authorization = { credential = "github", format = "Bearer {}" } }\n\n'
        '[credentials.github]\nkind = "secret"\n'
    )
    env = {"TOOLPACKS_STATE_DIR": str(state)}
    server = AuthServer(directory, auth_config(issuer, agents=agents), ["--agent", "open"], env)
    yield server
    server.kill()


def direct(server: AuthServer, token: str) -> dict[str, Any]:
    """One raw tools/call of ``whoami`` on the direct route."""
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call"}
    body["params"] = {"name": "whoami", "arguments": {}}
    sent = {**HEADERS, "Authorization": f"Bearer {token}"}
    response = httpx.post(server.url("open"), json=body, headers=sent, timeout=60)
    assert response.status_code == 200, response.text
    text = response.text
    if text.startswith("event:"):  # answered on an SSE stream: the message is its data line
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    result: dict[str, Any] = json.loads(text)["result"]
    return result


async def through_sdk(server: AuthServer, token: str) -> Any:
    """One tools/call of ``whoami`` with the official MCP client."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as h:
        transport = streamable_http_client(server.url("open"), http_client=h)
        async with Client(transport, mode="legacy", read_timeout_seconds=60) as client:
            return await client.call_tool("whoami", {})


def test_each_subject_sends_its_own_header_on_both_roads(
    served: AuthServer, issuer: Issuer, echo: EchoServer
) -> None:
    """Alice's token brings alice's header to the mounted server, bob's bob's; both roads."""
    for subject, value in VALUES.items():
        token = issuer.token(sub=subject)
        result = direct(served, token)
        assert not result.get("isError"), (result, served.stderr())
        assert value in result["content"][0]["text"]
        sdk = asyncio.run(asyncio.wait_for(through_sdk(served, token), 90))
        assert not sdk.is_error, served.stderr()
        assert value in sdk.content[0].text
        assert echo.calls_by(f"Bearer {value}") >= 2
    for value in VALUES.values():
        assert value not in served.stderr()


def test_a_subject_without_one_is_told_how_to_connect(
    served: AuthServer, issuer: Issuer, echo: EchoServer
) -> None:
    """Carol gets the how-to-connect result, nobody's value, and the server sees no call."""
    before = echo.requests()
    result = direct(served, issuer.token(sub="carol"))
    assert result["isError"]
    text = json.dumps(result)
    assert "toolpacks credentials set github --subject carol" in text
    assert "ghp_" not in text
    sdk = asyncio.run(asyncio.wait_for(through_sdk(served, issuer.token(sub="carol")), 90))
    assert sdk.is_error
    assert "ghp_" not in sdk.content[0].text
    assert [r for r in echo.requests()[len(before) :] if r[0] == "tools/call"] == []
