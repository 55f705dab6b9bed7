"""The official MCP client against ``toolpacks serve --http`` with ``[auth]``.

With a bearer token, through ``streamable_http_client``: listing and calling with the
caller's principal. And the SDK's own ``OAuthClientProvider`` starting from nothing: the
server's 401 names its protected resource metadata, which names the local issuer, whose
RFC 8414 metadata gives registration, authorization and token endpoints; the provider
registers, sends the user to authorize (the test plays the user), exchanges the code with
PKCE and calls the tool with the token it got.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .auth_issuer import AuthServer, Issuer, auth_config
from .conftest import run_bounded

TIMEOUT = 30


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    served = Issuer()
    yield served
    served.close()


@pytest.fixture(scope="module")
def server(issuer: Issuer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    directory = tmp_path_factory.mktemp("authclient")
    args = ["--agent", "open", "--agent", "gated", "--agent", "own"]
    served = AuthServer(directory, auth_config(issuer), args, {"OWN_AGENT_TOKEN": "o" * 32})
    yield served
    served.kill()


def run(coro: Any) -> Any:
    """Run a test coroutine, bounded by this module's ``TIMEOUT``."""
    return run_bounded(coro, TIMEOUT)


@contextlib.asynccontextmanager
async def connect(url: str, token: str | None = None, auth: Any = None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, auth=auth, timeout=TIMEOUT) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_official_client_lists_and_calls_as_its_principal(
    server: AuthServer, issuer: Issuer, mode: str
) -> None:
    token = issuer.token(sub="erin", scope="gated.use extra", kid="ec-1")

    async def go() -> tuple[list[str], Any]:
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=TIMEOUT) as http:
            transport = streamable_http_client(server.url("gated"), http_client=http)
            async with Client(transport, mode=mode) as client:
                tools = await client.list_tools()
                result = await client.call_tool("whoami", {})
                return [t.name for t in tools.tools], result

    names, result = run(go())
    assert names == ["add", "whoami"]
    assert not result.is_error
    seen = json.loads(result.content[0].text)
    assert seen == {"subject": "erin", "scopes": ["extra", "gated.use"], "caller": "erin"}


def test_the_official_client_without_a_token_is_refused(server: AuthServer) -> None:
    with pytest.raises(Exception, match="Unauthorized: this server needs an 'Authorization"):
        run(_list(server.url("open")))


async def _list(url: str) -> list[str]:
    async with connect(url) as client:
        return [t.name for t in (await client.list_tools()).tools]


class MemoryStorage:
    """The OAuth client's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client_info: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


def test_the_sdk_oauth_client_discovers_the_issuer_and_gets_in(
    server: AuthServer, issuer: Issuer
) -> None:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    url = server.url("gated")
    visited: list[str] = []

    async def redirect(authorization_url: str) -> None:
        visited.append(authorization_url)

    async def callback() -> AuthorizationCodeResult:
        code, state = issuer.authorize(visited[-1])  # the user approves at the issuer
        return AuthorizationCodeResult(code=code, state=state)

    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="toolpacks test",
            redirect_uris=["http://127.0.0.1:1/callback"],
            grant_types=["authorization_code"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect,
        callback_handler=callback,
    )

    async def go() -> Any:
        async with connect(url, auth=provider) as client:
            return await client.call_tool("whoami", {})

    result = run(go())
    assert len(visited) == 1
    assert visited[0].startswith(f"{issuer.url}/authorize?")
    assert "resource=" in visited[0]  # RFC 8707: the resource from the metadata
    assert issuer.token_requests[-1]["resource"] == url
    assert json.loads(result.content[0].text)["subject"] == "oauth-user"
    assert storage.tokens is not None
