"""Mounted MCP servers' header values per principal: ``{ credential = "NAME" }`` headers.

A real streamable-HTTP server (the official SDK, ``mcp_echo.py``) answers ``whoami`` with the
``Authorization`` header its request carried, and logs a digest of each request's header. It
is mounted through a real ``toolpacks.toml``; values live in the real encrypted store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.credentials.mcp_echo import EchoServer, digest

from toolpacks import Host, Principal, ToolContext
from toolpacks.exceptions import ConfigError
from toolpacks.host.credentials._store import SqliteCredentialStore
from toolpacks.packs.mcp import _per_principal

ALICE_VALUE, BOB_VALUE = "ghp_alice_header_value_1", "ghp_bob_header_value_22"
HEADER = '{ credential = "github", format = "Bearer {}" }'


@pytest.fixture(scope="module")
def echo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EchoServer]:
    """One echo server for the module's tests."""
    server = EchoServer(tmp_path_factory.mktemp("echo"))
    yield server
    server.stop()


def write_config(directory: Path, url: str, header: str = HEADER, extra: str = "") -> Path:
    """A toolpacks.toml mounting ``url`` as ``hub`` with ``Authorization = header``."""
    path = directory / "toolpacks.toml"
    path.write_text(
        f'[mcp_servers.hub]\nurl = "{url}"\ntimeout = 20\n'
        f'headers = {{ Authorization = {header}, X-Static = "plain" }}\n\n'
        '[credentials.github]\nkind = "secret"\ndescription = "a GitHub token"\n' + extra
    )
    return path


@pytest.fixture
def make_host(tmp_path: Path) -> Iterator[Callable[..., Host]]:
    """Hosts mounting the echo server; all closed at teardown."""
    hosts: list[Host] = []

    def make(url: str, **options: Any) -> Host:
        host = Host(write_config(tmp_path, url, **options), discover=False, environ={})
        hosts.append(host)
        return host

    yield make
    for host in hosts:
        host.close()


@pytest.fixture
def store() -> SqliteCredentialStore:
    """The real store (the test's own state directory), alice's and bob's tokens in it."""
    held = SqliteCredentialStore()
    held.set("github", "alice", ALICE_VALUE)
    held.set("github", "bob", BOB_VALUE)
    return held


def as_(subject: str) -> ToolContext:
    """A context for ``subject``."""
    return ToolContext(principal=Principal(subject))


def text(result: Any) -> str:
    """What the server's tool answered, or the error's text."""
    if not result.is_error:
        return str(result.value["result"])  # the SDK wraps a value as {"result": ...}
    content = result.content
    return content if isinstance(content, str) else " ".join(map(str, content))


def pool(host: Host) -> _per_principal.PrincipalConnections:
    """The mounted server's connection (the per-principal one)."""
    connection = host.load("hub").closer.__self__  # type: ignore[union-attr]
    assert isinstance(connection, _per_principal.PrincipalConnections)
    return connection


def test_each_principal_sends_its_own_header(
    echo: EchoServer, make_host: Callable[..., Host], store: Any
) -> None:
    """Alice's call reaches the server with alice's token, bob's with bob's, interleaved."""
    toolset = make_host(echo.url).toolset()
    assert toolset.get("whoami").credentials == ("github",)
    before = echo.requests()

    async def calls() -> list[Any]:
        subjects = ("alice", "bob", "alice", "bob", "alice")
        return await asyncio.gather(*(toolset.call("whoami", {}, as_(s)) for s in subjects))

    results = asyncio.run(asyncio.wait_for(calls(), 60))
    assert [r.is_error for r in results] == [False] * 5, [text(r) for r in results]
    seen = [text(r) for r in results]
    assert seen == [f"Bearer {v}" for v in (ALICE_VALUE, BOB_VALUE) * 2 + (ALICE_VALUE,)]
    assert echo.calls_by(f"Bearer {ALICE_VALUE}") >= 3
    assert echo.calls_by(f"Bearer {BOB_VALUE}") >= 2
    opened = [who for method, who in echo.requests()[len(before) :] if method == "tools/list"]
    alice, bob = digest(f"Bearer {ALICE_VALUE}"), digest(f"Bearer {BOB_VALUE}")
    assert (opened.count(alice), opened.count(bob)) == (1, 1)  # one connection each, at once


def test_listing_carries_no_principals_value(
    echo: EchoServer, make_host: Callable[..., Host], store: Any
) -> None:
    """The mount lists tools over its own connection, which sends no credential header."""
    before = len(echo.requests())
    host = make_host(echo.url)
    host.toolset()
    listed = echo.requests()[before:]
    assert ("tools/list", "none") in listed
    assert all(who == "none" for _, who in listed)


def test_a_principal_without_one_is_told_how_to_connect_and_never_sent(
    echo: EchoServer, make_host: Callable[..., Host], store: Any
) -> None:
    """Carol has no value: the how-to-connect result, and no request reaches the server."""
    toolset = make_host(echo.url).toolset()
    before = echo.requests()
    result = toolset.call_sync("whoami", {}, as_("carol"))
    assert result.is_error
    assert "toolpacks credentials set github --subject carol" in text(result)
    assert "ghp_" not in text(result)
    assert echo.requests() == before


def test_a_call_with_no_principal_fails_closed(
    echo: EchoServer, make_host: Callable[..., Host], store: Any
) -> None:
    """No principal: refused by the toolset, and by the tool itself run without one."""
    toolset = make_host(echo.url).toolset()
    before = echo.requests()
    refused = toolset.call_sync("whoami", {})
    assert refused.is_error
    assert "no principal" in text(refused)
    bare = asyncio.run(toolset.get("whoami").invoke({}, as_("alice")))  # no credentials resolved
    assert bare.is_error
    assert "carries none for a principal" in text(bare)
    assert "ghp_" not in text(refused) + text(bare)
    assert echo.requests() == before


def test_a_new_value_gets_a_new_connection(
    echo: EchoServer, make_host: Callable[..., Host], store: Any
) -> None:
    """Alice sets her value again: the next call sends the new one."""
    toolset = make_host(echo.url).toolset()
    assert text(toolset.call_sync("whoami", {}, as_("alice"))) == f"Bearer {ALICE_VALUE}"
    store.set("github", "alice", "ghp_alice_rotated_333")
    assert text(toolset.call_sync("whoami", {}, as_("alice"))) == "Bearer ghp_alice_rotated_333"


def test_idle_connections_are_bounded_and_closed_with_the_host(
    echo: EchoServer,
    make_host: Callable[..., Host],
    store: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the limit the least recently used idle connection closes; the host closes all."""
    monkeypatch.setattr(_per_principal, "IDLE_LIMIT", 2)
    store.set("github", "dave", "ghp_dave_header_value_4")
    host = make_host(echo.url)
    toolset = host.toolset()
    routed = pool(host)
    opened: list[Any] = []
    for subject in ("alice", "bob", "dave"):
        assert not toolset.call_sync("whoami", {}, as_(subject)).is_error
        opened.append(routed._held[subject].connection)
    assert routed.open_subjects() == ["bob", "dave"]
    assert not opened[0].alive  # alice's: closed when dave's made three
    again = toolset.call_sync("whoami", {}, as_("alice"))
    assert text(again) == f"Bearer {ALICE_VALUE}"
    assert routed.open_subjects() == ["dave", "alice"]
    host.close()
    assert not any(c.alive for c in [*opened, *(h.connection for h in routed._held.values())])
    assert routed.open_subjects() == []


def test_an_undefined_credential_is_a_config_error(tmp_path: Path) -> None:
    """A header naming no [credentials] table: a ConfigError naming server, header, name."""
    path = write_config(tmp_path, "http://127.0.0.1:9/mcp", '{ credential = "gitlab" }')
    with pytest.raises(ConfigError) as caught:
        Host(path, discover=False, environ={})
    message = str(caught.value)
    assert "mcp_servers.hub.headers.Authorization" in message
    assert "'gitlab'" in message
    assert "[credentials.gitlab]" in message


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ('{ credential = "github", format = "Bearer" }', 'format must hold "{}" exactly once'),
        ('{ credential = "github", format = "{} {}" }', 'format must hold "{}" exactly once'),
        ('{ credential = "git hub" }', "is not a credential name"),
        ('{ credential = "github", env = "X" }', '{ credential = "NAME", format = "Bearer {}" }'),
        ('{ secret = "github" }', '{ env = "VARIABLE" }'),
    ],
)
def test_a_malformed_credential_header_is_a_config_error(
    tmp_path: Path, header: str, expected: str
) -> None:
    """Bad forms are refused at load, naming the header and what is accepted."""
    with pytest.raises(ConfigError) as caught:
        Host(write_config(tmp_path, "http://127.0.0.1:9/mcp", header), discover=False)
    assert "headers.Authorization" in str(caught.value)
    assert expected in str(caught.value)


def test_values_never_in_logs_or_error_texts(
    echo: EchoServer,
    make_host: Callable[..., Host],
    store: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """At DEBUG, neither the log nor any result (a refused value's included) holds a value."""
    refused = "ghp_refused_erin_secret_5"
    store.set("github", "erin", refused)
    caplog.set_level(logging.DEBUG)
    host = make_host(echo.url)
    toolset = host.toolset()
    routed = pool(host)
    texts = [text(toolset.call_sync("whoami", {}, as_(s))) for s in ("alice", "bob", "carol")]
    erin = toolset.call_sync("whoami", {}, as_("erin"))
    assert erin.is_error
    assert "hub" in text(erin)
    assert "'erin'" in text(erin)
    assert echo.calls_by(f"Bearer {refused}") == 0  # refused before any call was sent
    host.close()
    logged = caplog.text + " ".join(repr(r.args) for r in caplog.records)
    for value in (ALICE_VALUE, BOB_VALUE, refused):
        assert value not in logged
        assert value not in text(erin)
    assert "ghp_" not in texts[2]
    assert "ghp_" not in repr(routed) + repr(routed.spec)


def test_langchain_adapter_sends_each_principal_its_own_header(
    echo: EchoServer, make_host: Callable[..., Host], store: Any
) -> None:
    """Through langchain's tool (principal in ``configurable``): alice's, bob's, carol refused."""
    from toolpacks.integrations.langchain import as_tools

    lc = {t.name: t for t in as_tools(make_host(echo.url).toolset())}["whoami"]
    call = {"name": "whoami", "args": {}, "id": "c1", "type": "tool_call"}

    def config(subject: str) -> dict[str, Any]:
        return {"configurable": {"principal": Principal(subject)}}

    assert f"Bearer {ALICE_VALUE}" in str(lc.invoke(call, config("alice")).content)
    assert f"Bearer {BOB_VALUE}" in str(asyncio.run(lc.ainvoke(call, config("bob"))).content)
    before = echo.requests()
    carol = str(lc.invoke(call, config("carol")).content)
    assert "toolpacks credentials set github --subject carol" in carol
    nobody = str(lc.invoke(call).content)
    assert "no principal" in nobody
    assert "ghp_" not in carol + nobody
    assert echo.requests() == before


def test_stdio_serve_with_a_principal_sends_its_header(
    echo: EchoServer, tmp_path: Path, store: Any
) -> None:
    """``serve --principal alice`` over stdio (official client): alice's header; carol's none."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    config = write_config(tmp_path, echo.url)
    keys = ("TOOLPACKS_STATE_DIR", "TOOLPACKS_CACHE_DIR", "XDG_CONFIG_HOME", "TOOLPACKS_TRUST_FILE")
    env = {k: os.environ[k] for k in keys}

    async def call_as(subject: str) -> Any:
        args = ["-m", "toolpacks", "serve", "--config", str(config), "--principal", subject]
        params = StdioServerParameters(command=sys.executable, args=args, env=env)
        with (tmp_path / f"serve-{subject}.log").open("a") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                return await client.call_tool("whoami", {})

    alice = asyncio.run(asyncio.wait_for(call_as("alice"), 90))
    assert not alice.is_error, alice.content
    assert f"Bearer {ALICE_VALUE}" in alice.content[0].text
    before = echo.requests()
    carol = asyncio.run(asyncio.wait_for(call_as("carol"), 90))
    assert carol.is_error
    assert "toolpacks credentials set github --subject carol" in carol.content[0].text
    assert [r for r in echo.requests()[len(before) :] if r[0] == "tools/call"] == []
    logs = "".join(p.read_text() for p in tmp_path.glob("serve-*.log"))
    assert ALICE_VALUE not in logs


def test_an_oauth2_header_carries_a_refreshed_access_token(
    echo: EchoServer, make_host: Callable[..., Host], auth_server: Any
) -> None:
    """An expired access token is refreshed first; the header carries the new one."""
    import json

    issued = auth_server._tokens()  # a grant the local authorization server knows
    stale = {**issued, "access_token": "at-stale-header-0", "expires_at": time.time() - 60}
    del stale["expires_in"]
    SqliteCredentialStore().set("hub", "alice", json.dumps(stale))
    header = '{ credential = "hub", format = "Bearer {}" }'
    toolset = make_host(echo.url, header=header, extra="\n" + auth_server.toml()).toolset()
    result = toolset.call_sync("whoami", {}, as_("alice"))
    sent = text(result).removeprefix("Bearer ")
    assert sent in auth_server.access
    assert sent not in ("at-stale-header-0", issued["access_token"])
    assert echo.calls_by("Bearer at-stale-header-0") == 0


def test_a_call_cancelled_while_its_connection_opens_leaves_it_idle(
    echo: EchoServer,
    make_host: Callable[..., Host],
    store: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The caller gives up during the start: the connection, once open, is idle (evictable)."""
    import threading

    host = make_host(echo.url)
    toolset = host.toolset()
    routed = pool(host)
    reached, go = threading.Event(), threading.Event()
    original = routed._connect

    def held_back(*args: Any) -> Any:
        reached.set()
        go.wait(30)
        return original(*args)

    monkeypatch.setattr(routed, "_connect", held_back)

    async def give_up() -> None:
        task = asyncio.ensure_future(toolset.call("whoami", {}, as_("alice")))
        assert await asyncio.to_thread(reached.wait, 30)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        go.set()

    asyncio.run(asyncio.wait_for(give_up(), 60))
    deadline = time.monotonic() + 30
    while "alice" not in routed.open_subjects() or routed._held["alice"].busy:
        assert time.monotonic() < deadline, "alice's connection never became idle"
        time.sleep(0.02)
    assert routed._held["alice"].busy == 0


def test_a_server_refusing_to_list_without_a_credential_is_explained(
    tmp_path: Path, make_host: Callable[..., Host], store: Any
) -> None:
    """Listing carries no user's value: a server that needs one fails saying so."""
    (tmp_path / "strict-echo").mkdir()
    strict = EchoServer(tmp_path / "strict-echo", require_auth=True)
    try:
        host = make_host(strict.url)
        info = host.load("hub").info
    finally:
        strict.stop()
    assert info.status == "failed"
    assert "HTTP 401" in (info.error or "")
    assert "listed without any user's credential" in (info.error or "")
    assert "{ env = ... } header" in (info.error or "")


def test_calls_after_the_host_closed_are_refused(
    echo: EchoServer, make_host: Callable[..., Host], store: Any
) -> None:
    """Once the host closed, a principal's call is an error result, not a new connection."""
    host = make_host(echo.url)
    toolset = host.toolset()
    assert not toolset.call_sync("whoami", {}, as_("alice")).is_error
    host.close()
    before = echo.requests()
    for subject in ("alice", "bob"):  # open before, and never opened
        result = toolset.call_sync("whoami", {}, as_(subject))
        assert result.is_error
        assert "shut down with its host" in text(result)
    assert echo.requests() == before
