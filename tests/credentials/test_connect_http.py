"""oauth2 credentials over ``serve --http``: a URL elicitation, the /connect page, the retry.

The MCP server (with ``[auth]`` from the identity tests' local issuer) answers a call whose
principal has not connected ``hub`` with ``-32042`` on both roads; the page it points at runs
the code + PKCE flow against a local authorization server for that principal only, and
refuses a state it did not issue or one brought by another browser.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from tests.mcp.auth_issuer import AuthServer, Issuer, auth_config

from toolpacks.host.credentials._store import SqliteCredentialStore

HUB_PACK = '''
from toolpacks import ToolContext, hookimpl, tool


@tool(credentials=["hub"])
def hub_token(ctx: ToolContext) -> str:
    """The hub access token of the call's principal."""
    return ctx.credential("hub")


@hookimpl
def register_tools(register):
    register(hub_token)
'''
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    """The identity tests' local issuer."""
    served = Issuer()
    yield served
    served.close()


@pytest.fixture(scope="module")
def served(
    issuer: Issuer, provider: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[AuthServer, Path]]:
    """``serve --http`` (two workers) of a tool using the oauth2 credential ``hub``."""
    directory = tmp_path_factory.mktemp("connect")
    (directory / "hub_pack.py").write_text(textwrap.dedent(HUB_PACK))
    dist = directory / "toolpacks_hub-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toolpacks-hub\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[toolpacks]\nhub = hub_pack\n")
    agents = '\n[agents.open]\npacks = ["hub"]\n\n' + provider.toml()
    state = directory / "state"
    env = {"TOOLPACKS_STATE_DIR": str(state), "HUB_CLIENT_SECRET": provider.client_secret}
    server = AuthServer(
        directory, auth_config(issuer, agents=agents), ["--agent", "open", "--workers", "2"], env
    )
    yield server, state
    server.kill()


def rpc(server: AuthServer, token: str) -> dict[str, Any]:
    """One raw tools/call of ``hub_token`` on the direct route: the whole JSON-RPC answer."""
    body = {"jsonrpc": "2.0", "id": 3, "method": "tools/call"}
    body["params"] = {"name": "hub_token", "arguments": {}}
    sent = {**HEADERS, "Authorization": f"Bearer {token}"}
    response = httpx.post(server.url("open"), json=body, headers=sent, timeout=30)
    text = response.text
    if text.startswith("event:"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    answer: dict[str, Any] = json.loads(text)
    return answer


async def sdk_call(server: AuthServer, token: str) -> Any:
    """The same call with the official MCP client."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        transport = streamable_http_client(server.url("open"), http_client=http)
        async with Client(transport, mode="legacy", read_timeout_seconds=30) as client:
            return await client.call_tool("hub_token", {})


def sdk_run(server: AuthServer, token: str) -> Any:
    """``sdk_call`` to completion; an error raised in the client's task groups raised alone."""
    try:
        return asyncio.run(asyncio.wait_for(sdk_call(server, token), 60))
    except BaseExceptionGroup as group:
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]
        raise leaf from None


def elicited_url(server: AuthServer, token: str) -> str:
    """The connect URL of the -32042 answer to ``token``'s call."""
    answer = rpc(server, token)
    assert "error" in answer, (answer, server.stderr())
    assert answer["error"]["code"] == -32042
    (ask,) = answer["error"]["data"]["elicitations"]
    assert ask["mode"] == "url"
    url: str = ask["url"]
    assert url.startswith(f"{server.base}/connect/hub?ticket=")
    return url


def test_connect_through_the_elicited_page_then_retry(
    served: tuple[AuthServer, Path], issuer: Issuer, provider: Any, plaintext_in: Any
) -> None:
    """-32042 on both roads; the page connects alice; her retry gets her own token."""
    server, state = served
    alice = issuer.token(sub="alice")
    url = elicited_url(server, alice)
    from mcp import MCPError

    with pytest.raises(MCPError) as raised:
        sdk_run(server, alice)
    assert raised.value.error.code == -32042
    assert raised.value.error.data["elicitations"][0]["url"].startswith(f"{server.base}/connect/")

    with httpx.Client(follow_redirects=True, timeout=30) as browser:  # the user says yes
        page = browser.get(url)
    assert page.status_code == 200, page.text
    assert "Connected hub" in page.text

    answer = rpc(server, alice)
    assert "result" in answer, answer
    token = answer["result"]["content"][0]["text"]
    assert token in provider.access
    assert plaintext_in([server.directory], token) == []
    stored = SqliteCredentialStore(state)
    assert stored.get("hub", "bob") is None
    assert json.loads(stored.get("hub", "alice") or "{}")["access_token"] == token


def test_the_callback_refuses_states_it_did_not_issue_or_from_another_browser(
    served: tuple[AuthServer, Path], issuer: Issuer
) -> None:
    """Bob's browser bringing alice's state is refused; so are forged states and tickets."""
    server, state = served
    url = elicited_url(server, issuer.token(sub="carol"))
    with httpx.Client(timeout=30) as carol_browser, httpx.Client(timeout=30) as bob_browser:
        to_provider = carol_browser.get(url)  # carol's sign-in starts: a cookie, a redirect
        assert to_provider.status_code == 302
        back = httpx.get(to_provider.headers["location"], timeout=30)  # the provider says yes
        callback = back.headers["location"]
        assert callback.startswith(f"{server.base}/connect/callback?")
        bob_url = elicited_url(server, issuer.token(sub="bob"))
        assert bob_browser.get(bob_url).status_code == 302  # bob has a sign-in of his own
        lifted = bob_browser.get(callback)
        assert lifted.status_code == 400
        assert "another browser" in lifted.text
        query = parse_qs(urlsplit(callback).query)
        code, sent = query["code"][0], query["state"][0]
        forged = f"{server.base}/connect/callback?code={code}&state=AAAA{sent[4:]}"
        refused = carol_browser.get(forged)
        assert refused.status_code == 400
        assert "did not issue" in refused.text
        ticket = parse_qs(urlsplit(url).query)["ticket"][0]
        assert carol_browser.get(f"{server.base}/connect/other?ticket={ticket}").status_code == 400
    stored = SqliteCredentialStore(state)
    assert stored.get("hub", "bob") is None
    assert stored.get("hub", "carol") is None
