"""Per-tool scopes over ``serve --http`` with ``[auth]``: each request sees its principal's view.

A tool the token lacks scopes for (``@tool(scopes=...)``, or added by the agent's
``tool_scopes``) is left out of ``tools/list`` and its call is an error result naming the
missing scope; with the scope it is listed and runs. The same on the direct route and the
SDK road, with one worker and with two, and through the official MCP client.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .auth_issuer import AuthServer, Issuer, auth_config
from .test_auth_served import LIST, call, post, sdk_road

SCOPED_PACK = '''
from toolpacks import ToolContext, hookimpl, tool


@tool(scopes=["repo.write"])
def push(branch: str, ctx: ToolContext) -> str:
    """Push a branch (needs repo.write)."""
    return f"{ctx.principal.subject} pushed {branch}"


@tool
def status() -> str:
    """Anyone may look."""
    return "clean"


@hookimpl
def register_tools(register):
    register(push, pack="repo")
    register(status, pack="repo")
'''

AGENTS = """
[agents.repo]
packs = ["repo", "who"]

[agents.repo.tool_scopes]
"add" = ["math.use"]
"""


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    served = Issuer()
    yield served
    served.close()


@pytest.fixture(scope="module", params=[1, 2], ids=["one-worker", "two-workers"])
def server(
    request: pytest.FixtureRequest, issuer: Issuer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AuthServer]:
    directory: Path = tmp_path_factory.mktemp(f"toolscopes{request.param}")
    (directory / "repo_pack.py").write_text(textwrap.dedent(SCOPED_PACK))
    dist = directory / "toolpacks_repo-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toolpacks-repo\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[toolpacks]\nrepo = repo_pack\n")
    config = auth_config(issuer, agents=AGENTS)
    args = ["--agent", "repo", "--workers", str(request.param)]
    served = AuthServer(directory, config, args, {})
    yield served
    served.kill()


def names(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return sorted(t["name"] for t in response.json()["result"]["tools"])


def result(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()["result"]
    return answer


@pytest.mark.parametrize("road", ["direct", "sdk"])
def test_tools_are_listed_and_called_per_principal(
    server: AuthServer, issuer: Issuer, road: str
) -> None:
    def send(body: dict[str, Any], scope: str) -> httpx.Response:
        sent = body if road == "direct" else sdk_road(body)
        return post(server, "repo", sent, issuer.token(sub="rita", scope=scope))

    assert names(send(LIST, "")) == ["status", "whoami"]
    assert names(send(LIST, "repo.write")) == ["push", "status", "whoami"]
    assert names(send(LIST, "repo.write math.use")) == [
        "add",
        "push",
        "status",
        "whoami",
    ]
    refused = result(send(call("push", {"branch": "main"}), "math.use"))
    assert refused["isError"] is True
    assert "repo.write" in refused["content"][0]["text"]
    refused = result(send(call("add", {"a": 1, "b": 2}), "repo.write"))
    assert refused["isError"] is True
    assert "math.use" in refused["content"][0]["text"]
    allowed = result(send(call("push", {"branch": "main"}), "repo.write"))
    assert allowed["isError"] is False
    assert allowed["content"][0]["text"] == "rita pushed main"


def test_the_official_client_sees_only_what_its_token_allows(
    server: AuthServer, issuer: Issuer
) -> None:
    import asyncio

    async def go(scope: str) -> tuple[list[str], Any]:
        headers = {"Authorization": f"Bearer {issuer.token(sub='sam', scope=scope)}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(server.url("repo"), http_client=http)) as client,
        ):
            listed = sorted(t.name for t in (await client.list_tools()).tools)
            return listed, await client.call_tool("push", {"branch": "dev"})

    listed, pushed = asyncio.run(asyncio.wait_for(go("other"), 30))
    assert listed == ["status", "whoami"]
    assert pushed.is_error
    listed, pushed = asyncio.run(asyncio.wait_for(go("repo.write"), 30))
    assert "push" in listed
    assert not pushed.is_error
    assert json.dumps(pushed.content[0].text) == json.dumps("sam pushed dev")
