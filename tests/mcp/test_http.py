"""MCP over streamable HTTP: ``toolpacks serve --http`` in a subprocess, spoken to for real.

The official ``mcp`` client connects over streamable HTTP in both protocol revisions
(``legacy``: 2025-11-25 with its handshake; ``auto``: 2026-07-28, self-contained requests);
raw requests (``httpx``) check what a client library would hide: statuses and headers. Every
wait is bounded; nothing asserts on timing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp_types
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from toolpacks.mcp._stdio import GRACE_ENV

from .conftest import (
    HTTP_TIMEOUT,
    HttpServer,
    pid_alive,
    text_of,
    worker_pids,
    write_http_demo,
)

TOKEN = "s3cret-token-for-the-http-tests"
MODES = ["legacy", "auto"]
"""``legacy``: protocol 2025-11-25 (initialize first); ``auto``: 2026-07-28."""
StartServer = Callable[..., HttpServer]


@contextlib.asynccontextmanager
async def connect(
    url: str, *, token: str | None = TOKEN, mode: str = "auto", **headers: str
) -> AsyncIterator[Client]:
    """The official client connected to ``url`` (with the bearer token unless None)."""
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    async with httpx2.AsyncClient(headers=headers, timeout=HTTP_TIMEOUT) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=HTTP_TIMEOUT) as client:
            yield client


def run(coro: Any) -> Any:
    """Run a coroutine of the test (bounded); an error raised in a task group is raised alone."""
    try:
        return asyncio.run(asyncio.wait_for(coro, HTTP_TIMEOUT))
    except BaseExceptionGroup as group:
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]
        raise leaf from group


async def call(url: str, name: str, arguments: dict[str, Any], **kw: Any) -> Any:
    async with connect(url, **kw) as client:
        return await client.call_tool(name, arguments)


def post(
    url: str, body: bytes | str, *, token: str | None = TOKEN, **headers: str
) -> httpx.Response:
    """One raw MCP POST (JSON-RPC text as given)."""
    sent = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
        **({"Authorization": f"Bearer {token}"} if token else {}),
        **headers,
    }
    return httpx.post(url, content=body, headers=sent, timeout=HTTP_TIMEOUT)


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + HTTP_TIMEOUT
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} was never written"
        time.sleep(0.02)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """Agents ``alpha`` and ``beta`` over HTTP, behind a bearer token, with access logs on."""
    directory = tmp_path_factory.mktemp("http")
    server = HttpServer(
        directory,
        ["--agent", "alpha", "--agent", "beta", "--token-env", "MCP_TEST_TOKEN", "--verbose"],
        {"MCP_TEST_TOKEN": TOKEN},
    )
    try:
        yield server
    finally:
        server.kill()


# -- listing and calling ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_two_agents_list_their_own_tools_and_call_them(served: HttpServer, mode: str) -> None:
    """Each agent at /agents/NAME/mcp lists its toolset and answers calls, in both revisions."""

    async def main() -> None:
        async with connect(served.url("alpha"), mode=mode) as alpha:
            expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
            assert alpha.protocol_version == expected
            names = {t.name for t in (await alpha.list_tools()).tools}
            assert {"add", "exit_now", "hold"} <= names
            result = await alpha.call_tool("add", {"a": 2, "b": 3})
            assert result.structured_content == {"result": 5}
            assert not result.is_error
        async with connect(served.url("beta"), mode=mode) as beta:
            assert {t.name for t in (await beta.list_tools()).tools} == {"add", "pid"}
            assert (await beta.call_tool("add", {"a": 1, "b": 1})).structured_content == {
                "result": 2
            }

    run(main())


def test_mcp_alone_is_served_only_for_a_single_agent(served: HttpServer) -> None:
    """With two agents there is no /mcp (which one would it be?), and an unknown agent is 404."""
    assert post(served.url(), "{}").status_code == 404
    missing = post(served.url("gamma"), "{}")
    assert missing.status_code == 404
    assert "no agent 'gamma' is served here (served: alpha, beta)" in missing.text


@pytest.mark.parametrize("mode", MODES)
def test_bad_arguments_are_an_error_result(served: HttpServer, mode: str) -> None:
    """Arguments the gate refuses give isError with one line per argument, not a protocol error."""
    result = run(call(served.url("alpha"), "add", {"a": "two"}, mode=mode))
    assert result.is_error
    assert "- b: missing required argument" in text_of(result)
    assert "Fix the arguments and call the tool again." in text_of(result)


@pytest.mark.parametrize("mode", MODES)
def test_an_unknown_tool_is_a_protocol_error_naming_the_tools(
    served: HttpServer, mode: str
) -> None:
    """A name the agent does not list is the JSON-RPC error, with the names it does list.

    ``exit_now`` is in the agent's packs but its ``exclude`` leaves it out: the error says so.
    """
    expected = (
        r"Unknown tool: exit_now\. exit_now is not in this toolset: agents\.beta\.exclude "
        r"leaves it out\. Available tools: add, pid\."
    )
    with pytest.raises(MCPError, match=expected):
        run(call(served.url("beta"), "exit_now", {}, mode=mode))


def test_a_tool_raising_systemexit_is_an_error_result_and_serving_goes_on(
    served: HttpServer,
) -> None:
    """A BaseException from a tool becomes an error result; the server keeps answering."""
    result = run(call(served.url("alpha"), "exit_now", {}))
    assert result.is_error
    assert text_of(result) == "Tool 'exit_now' failed with SystemExit."
    assert run(call(served.url("alpha"), "add", {"a": 1, "b": 2})).structured_content == {
        "result": 3
    }


def test_results_are_held_to_the_result_cap(served: HttpServer) -> None:
    """A structured result over the tool's character cap is not sent; the error says why."""
    result = run(call(served.url("alpha"), "big", {"chars": 150_000}))
    assert result.is_error
    assert result.structured_content is None
    assert "larger than this server's limit of 100000 characters" in text_of(result)
    small = run(call(served.url("alpha"), "big", {"chars": 3}))
    assert small.structured_content == {"text": "yyy"}


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_duplicate_keys_in_arguments_are_refused_as_over_stdio(
    served: HttpServer, version: str
) -> None:
    """Arguments repeating a key get the gate's error result (the tool is not run)."""
    body = (
        '{"jsonrpc":"2.0","id":7,"method":"tools/call",'
        '"params":{"name":"add","arguments":{"a":1,"a":2,"b":3}}}'
    )
    answer = post(served.url("alpha"), body, **{"MCP-Protocol-Version": version})
    assert answer.status_code == 200
    message = answer.json()
    assert message["id"] == 7
    assert message["result"]["isError"] is True
    assert (
        "duplicate key 'a' in arguments; send each key once"
        in message["result"]["content"][0]["text"]
    )


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ('{"a": NaN, "b": 1}', "finite"),
        ('{"a": true, "b": 1}', "got boolean"),
        ('{"a": "1e999", "b": 1}', "finite"),
        ('{"a": ' + "9" * 4000 + ', "b": 1}', "too long"),
        ('{"a": 1, "b": 1, "c": [' + "[" * 100 + "]" * 100 + "]}", "nested"),
    ],
    ids=["NaN", "true-for-int", "1e999-as-text", "4000-digits", "depth-100"],
)
def test_hostile_arguments_get_the_gates_error_result_as_over_stdio(
    served: HttpServer, arguments: str, words: str
) -> None:
    """The one gate holds over HTTP: each value is refused with an error result."""
    body = (
        '{"jsonrpc":"2.0","id":8,"method":"tools/call",'
        f'"params":{{"name":"add","arguments":{arguments}}}}}'
    )
    answer = post(served.url("alpha"), body, **{"MCP-Protocol-Version": "2025-11-25"})
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert result["isError"] is True
    assert words in result["content"][0]["text"]


def test_a_body_that_is_not_json_rpc_gets_the_json_rpc_error(served: HttpServer) -> None:
    """Malformed JSON is -32700 and a duplicate key outside the arguments -32600, both 400."""
    broken = post(served.url("alpha"), '{"jsonrpc": "2.0", "id": 1,')
    assert (broken.status_code, broken.json()["error"]["code"]) == (400, -32700)
    repeated = post(
        served.url("alpha"), '{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list","params":{}}'
    )
    assert (repeated.status_code, repeated.json()["error"]["code"]) == (400, -32600)
    assert "duplicate key 'id'" in repeated.json()["error"]["message"]


def test_100_concurrent_calls_all_succeed(served: HttpServer) -> None:
    """100 calls in flight at once on one client: 100 right answers, no error."""

    async def main() -> list[mcp_types.CallToolResult]:
        async with connect(served.url("alpha")) as client:
            calls = [client.call_tool("add", {"a": i, "b": 1000}) for i in range(100)]
            return list(await asyncio.gather(*calls))

    results = run(main())
    assert [r.is_error for r in results] == [False] * 100
    assert [r.structured_content for r in results] == [{"result": i + 1000} for i in range(100)]


def test_an_openai_agents_mcp_client_lists_and_calls_through_it(served: HttpServer) -> None:
    """openai-agents' MCPServerStreamableHttp (what the deployment guide shows) works as is."""
    from agents import mcp as mcp_module

    async def main() -> tuple[list[str], Any]:
        params = {"url": served.url("beta"), "headers": {"Authorization": f"Bearer {TOKEN}"}}
        async with mcp_module.MCPServerStreamableHttp(params=params, name="tools") as server:
            names = sorted(t.name for t in await server.list_tools())
            return names, await server.call_tool("add", {"a": 40, "b": 2})

    names, result = run(main())
    assert names == ["add", "pid"]
    assert result.structured_content == {"result": 42}


# -- security ---------------------------------------------------------------------------------


def test_a_missing_or_wrong_token_is_401_with_www_authenticate(served: HttpServer) -> None:
    """Without the bearer token, or with another, MCP requests get 401 and a Bearer challenge."""
    body = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
    missing = post(served.url("alpha"), body, token=None)
    assert missing.status_code == 401
    assert missing.headers["WWW-Authenticate"] == 'Bearer realm="toolpacks"'
    wrong = post(served.url("alpha"), body, token=TOKEN + "x")
    assert wrong.status_code == 401
    assert 'error="invalid_token"' in wrong.headers["WWW-Authenticate"]
    basic = post(served.url("alpha"), body, token=None, Authorization=f"Basic {TOKEN}")
    assert basic.status_code == 401
    with pytest.raises(MCPError, match="Unauthorized: the bearer token is not valid"):
        run(call(served.url("alpha"), "add", {"a": 1, "b": 2}, token="wrong"))


def test_a_foreign_origin_is_403_and_a_foreign_host_421(served: HttpServer) -> None:
    """DNS rebinding: a page from another origin, or a request naming another host, is refused."""
    body = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
    foreign = post(served.url("alpha"), body, Origin="http://evil.example")
    assert foreign.status_code == 403
    assert "Origin 'http://evil.example' is not allowed" in foreign.text
    lookalike = post(served.url("alpha"), body, Origin="http://localhost.evil.example:80")
    assert lookalike.status_code == 403
    port = served.base.rsplit(":", 1)[1]
    local = post(served.url("alpha"), body, Origin=f"http://localhost:{port}")
    assert local.status_code == 200
    rebound = post(served.url("alpha"), body, Host=f"evil.example:{port}")
    assert rebound.status_code == 421


def test_an_oversized_body_is_413_before_it_is_parsed(served: HttpServer) -> None:
    """A body over the cap is refused, whether its length is declared or it is streamed."""
    big = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"' + b"a" * (5 << 20)
    declared = post(served.url("alpha"), big)
    assert declared.status_code == 413
    assert "the limit is 4194304 bytes" in declared.text

    def chunks() -> Iterator[bytes]:
        for _ in range(6):
            yield b"a" * (1 << 20)

    streamed = httpx.post(
        served.url("alpha"),
        content=chunks(),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
        timeout=HTTP_TIMEOUT,
    )
    assert streamed.status_code == 413


def test_only_post_is_served_on_a_stateless_endpoint(served: HttpServer) -> None:
    """GET (a stream) and DELETE (a session) mean nothing without sessions: 405, Allow: POST."""
    for method in ("GET", "DELETE"):
        answer = httpx.request(
            method, served.url("alpha"), headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert answer.status_code == 405
        assert answer.headers["Allow"] == "POST"


# -- health, metrics, logs --------------------------------------------------------------------


def test_healthz_needs_no_token(served: HttpServer) -> None:
    """/healthz answers the agents served, without a token (for load balancers)."""
    answer = httpx.get(f"{served.base}/healthz", timeout=HTTP_TIMEOUT)
    assert answer.status_code == 200
    assert answer.json() == {"status": "ok", "agents": ["alpha", "beta"]}


def _counter(text: str, name: str, labels: str) -> float:
    prefix = f"{name}{{{labels}}} "
    values = [float(line[len(prefix) :]) for line in text.splitlines() if line.startswith(prefix)]
    return values[0] if values else 0.0


def test_metrics_count_calls_and_refusals_behind_the_token(served: HttpServer) -> None:
    """/metrics needs the token and counts calls by agent, tool and outcome, and refusals."""
    url = f"{served.base}/metrics"
    assert httpx.get(url).status_code == 401
    auth = {"Authorization": f"Bearer {TOKEN}"}
    before = httpx.get(url, headers=auth).text
    ok = 'agent="beta",tool="add",outcome="ok"'
    bad = 'agent="beta",tool="add",outcome="error"'

    async def main() -> None:
        async with connect(served.url("beta")) as client:
            for i in range(3):
                await client.call_tool("add", {"a": i, "b": i})
            await client.call_tool("add", {"a": "x", "b": 1})

    run(main())
    post(served.url("beta"), "{}", token="nope")
    after = httpx.get(url, headers=auth)
    assert after.headers["content-type"].startswith("text/plain; version=0.0.4")
    calls = "toolpacks_mcp_calls_total"
    assert _counter(after.text, calls, ok) - _counter(before, calls, ok) == 3
    assert _counter(after.text, calls, bad) - _counter(before, calls, bad) == 1
    refused = ("toolpacks_mcp_refused_requests_total", 'reason="unauthorized"')
    assert _counter(after.text, *refused) - _counter(before, *refused) >= 1
    assert "# TYPE toolpacks_mcp_call_duration_seconds histogram" in after.text


def test_each_call_is_logged_without_its_argument_values(served: HttpServer) -> None:
    """An access record names agent, tool, outcome and duration; never an argument value."""
    run(call(served.url("beta"), "add", {"a": 918273, "b": 645546}))
    deadline = time.monotonic() + HTTP_TIMEOUT
    while "tool=add outcome=ok" not in served.stderr():
        assert time.monotonic() < deadline, served.stderr()
        time.sleep(0.05)
    line = next(x for x in served.stderr().splitlines() if "call agent=beta tool=add" in x)
    assert "outcome=ok duration_ms=" in line
    assert "918273" not in served.stderr()
    assert "645546" not in served.stderr()
    assert TOKEN not in served.stderr()


# -- stopping ---------------------------------------------------------------------------------


def _refused(base: str) -> bool:
    try:
        httpx.get(f"{base}/healthz", timeout=2.0)
    except httpx.TransportError:
        return True
    return False


def test_sigterm_drains_calls_in_flight_then_exits_0(
    http_server: StartServer, tmp_path: Path
) -> None:
    """After SIGTERM no new connection is taken; calls in flight are answered; exit status 0."""
    server = http_server("--agent", "alpha")
    release = tmp_path / "release"
    started = [tmp_path / f"started{i}" for i in range(3)]

    async def main() -> list[mcp_types.CallToolResult]:
        async with connect(server.url(), token=None) as client:
            await client.list_tools()  # the client checks results against the listed schemas
            calls = [
                asyncio.ensure_future(
                    client.call_tool("hold", {"started": str(s), "release": str(release)})
                )
                for s in started
            ]
            await asyncio.to_thread(lambda: [wait_for(s) for s in started])
            server.proc.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + HTTP_TIMEOUT
            while not await asyncio.to_thread(_refused, server.base):
                assert time.monotonic() < deadline, "still accepting connections after SIGTERM"
            release.write_text("go")
            return list(await asyncio.gather(*calls))

    results = run(main())
    assert [r.is_error for r in results] == [False, False, False]
    assert server.wait() == 0, server.stderr()


def test_calls_still_running_after_the_grace_are_abandoned_with_status_3(
    http_server: StartServer, tmp_path: Path
) -> None:
    """The grace is bounded: a call still running then is cancelled, named, and exit is 3."""
    server = http_server("--agent", "alpha", env={GRACE_ENV: "0.5"})
    started = tmp_path / "started"

    async def main() -> None:
        async with connect(server.url(), token=None) as client:
            stuck = asyncio.ensure_future(
                client.call_tool("hold", {"started": str(started), "release": "/nonexistent"})
            )
            await asyncio.to_thread(wait_for, started)
            server.proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(Exception):
                await stuck

    with contextlib.suppress(Exception):
        run(main())
    assert server.wait() == 3, server.stderr()
    assert "abandoned: alpha/hold" in server.stderr()


def test_two_workers_both_serve_and_a_killed_one_is_replaced(
    http_server: StartServer, tmp_path: Path
) -> None:
    """--workers 2: while one worker's loop is blocked the other answers; SIGKILL is survived."""
    server = http_server("--agent", "beta", "--agent", "alpha", "--workers", "2")
    started, release = tmp_path / "started", tmp_path / "release"

    async def other_worker() -> Any:
        """A new connection answered while one worker's loop is blocked.

        With a socket per worker (SO_REUSEPORT) the kernel may hand a new connection to the
        blocked worker, which answers it only once its loop is free: such an attempt is
        given up after a while and a new connection tried, as a client with a timeout does.
        """
        while True:
            try:
                return await asyncio.wait_for(call(server.url("beta"), "pid", {}, token=None), 3)
            except TimeoutError:
                continue

    async def main() -> tuple[int, int]:
        async with connect(server.url("alpha"), token=None) as first:
            blocked = asyncio.ensure_future(
                first.call_tool("block_loop", {"started": str(started), "release": str(release)})
            )
            await asyncio.to_thread(wait_for, started)
            # That worker's event loop is blocked now: only the other can answer.
            other = (await other_worker()).structured_content
            release.write_text("go")
            return (await blocked).structured_content["result"], other["result"]

    blocked_pid, other_pid = run(main())
    assert blocked_pid != other_pid
    workers = lambda: sorted(worker_pids(server.proc.pid, "spawn_main"))  # noqa: E731
    assert workers() == sorted([blocked_pid, other_pid])

    os.kill(other_pid, signal.SIGKILL)
    for i in range(10):
        result = run(call(server.url("beta"), "add", {"a": i, "b": 1}, token=None))
        assert result.structured_content == {"result": i + 1}
    deadline = time.monotonic() + HTTP_TIMEOUT
    while len(workers()) != 2 or other_pid in workers():
        assert time.monotonic() < deadline, server.stderr()
        time.sleep(0.05)
    assert f"worker {other_pid} exited" in server.stderr()

    server.proc.send_signal(signal.SIGTERM)
    assert server.wait() == 0, server.stderr()
    assert not any(pid_alive(p) for p in (blocked_pid, other_pid))


# -- failing closed on the command line ---------------------------------------------------------


def _cli(tmp_path: Path, *args: str) -> tuple[int, str]:
    """``toolpacks serve --config ... ARGS`` in a subprocess (it discovers the test pack)."""
    config = write_http_demo(tmp_path)
    environ = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "toolpacks", "serve", "--config", str(config), *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=HTTP_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    return done.returncode, done.stderr


def test_an_unknown_agent_fails_before_the_port_is_bound(tmp_path: Path) -> None:
    """The agent is checked first: with the port taken, the error is still about the agent."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, err = _cli(tmp_path, "--agent", "alpah", "--http", f"127.0.0.1:{port}")
    assert code == 2
    assert "alpah" in err
    assert "did you mean 'alpha'?" in err
    assert "cannot listen" not in err


def test_a_taken_port_is_a_clear_error(tmp_path: Path) -> None:
    """Binding a port in use says so, naming the address."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, err = _cli(tmp_path, "--agent", "alpha", "--http", f"127.0.0.1:{port}")
    assert code == 2
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in err


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--agent", "alpha", "--http", "0.0.0.0:0"], {}, "refusing to serve on 0.0.0.0 without"),
        (["--agent", "beta", "--http", "[::]:0"], {}, "refusing to serve on :: without a token"),
        (["--http", "0"], {}, "--http serves named agents: add --agent NAME"),
        (["--agent", "alpha", "--http", "localhost:http"], {}, "is not [HOST:]PORT"),
        (["--agent", "alpha", "--http", "::1:80"], {}, "put an IPv6 address in brackets"),
        (["--agent", "alpha", "--http", "0", "--token-env", "NOPE_UNSET"], {}, "NOPE_UNSET"),
        (["--agent", "alpha", "--http", "0", "--workers", "0"], {}, "give 1 or more"),
        (["--agent", "alpha", "--agent", "beta"], {}, "over stdio one process serves one agent"),
        (["--agent", "alpha", "--workers", "2"], {}, "apply to --http only"),
        (
            ["--agent", "alpha", "--http", "0", "--token-env", "T"],
            {"T": "has a space"},
            "printable ASCII without spaces",
        ),
    ],
)
def test_bad_serve_options_fail_with_a_message(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    env: dict[str, str],
    message: str,
) -> None:
    """Each bad combination exits 2 with a message saying what is wrong, before serving."""
    from toolpacks.cli import main

    monkeypatch.setenv("NOPE_UNSET", "")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    config = write_http_demo(tmp_path)
    code = main(["serve", "--config", str(config), *args])
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err
    assert "serving http://" not in err


def test_a_non_loopback_address_is_served_with_a_token(http_server: StartServer) -> None:
    """With a token, 0.0.0.0 may be bound; any Host header passes, the token is still needed."""
    server = http_server(
        "--agent", "alpha", "--http", "0.0.0.0:0", "--token-env", "T", env={"T": TOKEN}
    )
    assert server.base.startswith("http://0.0.0.0:")
    body = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
    named = post(server.url(), body, Host="tools.example.com")
    assert named.status_code == 200
    assert post(server.url(), body, token=None, Host="tools.example.com").status_code == 401


# -- in process: the app, its arguments, the socket --------------------------------------------


@pytest.fixture
def host(pack_of: Callable[..., Any]) -> Iterator[Any]:
    """A host with one in-process pack ``calc`` and the agents ``solo`` and ``duo``."""
    from toolpacks import Host, tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    config = {"agents": {"solo": {"packs": ["calc"]}, "duo": {"packs": ["calc"]}}}
    with Host(config, discover=False) as built:
        built.add_pack(pack_of(add), name="calc")
        yield built


LEGACY_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "add", "arguments": {"a": 20, "b": 22}},
}
LEGACY_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}


def test_the_app_mounts_in_another_starlette_app(host: Any) -> None:
    """Mounted under a prefix, with its lifespan entered from the outer app's, it serves."""
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from toolpacks.mcp import http_app

    inner = http_app(host, ["solo"])

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with inner.router.lifespan_context(inner):
            yield

    outer = Starlette(routes=[Mount("/tools", app=inner)], lifespan=lifespan)

    async def main() -> httpx.Response:
        async with lifespan(outer):  # httpx's ASGI transport does not run lifespans itself
            transport = httpx.ASGITransport(app=outer)
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
                return await c.post("/tools/mcp", json=LEGACY_CALL, headers=LEGACY_HEADERS)

    answer = run(main())
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["structuredContent"] == {"result": 42}


def test_an_app_whose_lifespan_did_not_run_says_so(host: Any) -> None:
    """Without its lifespan the SDK cannot serve: 503 saying how to start it, not a crash."""
    from toolpacks.mcp import http_app

    async def main() -> httpx.Response:
        transport = httpx.ASGITransport(app=http_app(host, ["solo"]))
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
            return await c.post("/mcp", json=LEGACY_CALL, headers=LEGACY_HEADERS)

    answer = run(main())
    assert answer.status_code == 503
    assert "enter `app.router.lifespan_context(app)`" in answer.json()["error"]["message"]


@pytest.mark.parametrize(
    ("agents", "kwargs", "error", "message"),
    [
        ([], {}, ValueError, "name at least one agent"),
        ("solo", {}, TypeError, "not one string: use ['solo']"),
        (["solo", "solo"], {}, ValueError, "agent 'solo' is named more than once"),
        (["so/lo"], {}, ValueError, "is not an agent name"),
        (["solo"], {"token": ""}, ValueError, "the bearer token is empty"),
        (["solo"], {"token": "two words"}, ValueError, "printable ASCII without spaces"),
        (["solo"], {"max_body_bytes": 0}, ValueError, "max_body_bytes must be positive"),
        (["solo"], {"max_body_bytes": 1.5}, TypeError, "a number of bytes"),
    ],
)
def test_http_app_refuses_bad_arguments(
    host: Any, agents: Any, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    """Each bad argument is an error naming what is wrong, raised when the app is built."""
    from toolpacks.mcp import http_app

    with pytest.raises(error, match=re.escape(message)):
        http_app(host, agents, **kwargs)


def test_http_app_fails_at_once_for_an_agent_no_configuration_defines(host: Any) -> None:
    """The toolsets are built with the app: an unknown agent is a ConfigError then, not later."""
    from toolpacks.exceptions import ConfigError
    from toolpacks.mcp import http_app

    with pytest.raises(ConfigError, match="nobody"):
        http_app(host, ["solo", "nobody"])


def test_serve_http_refuses_an_open_address_without_a_token() -> None:
    """The library refuses what the command line refuses, before reading any configuration."""
    from toolpacks.exceptions import ConfigError
    from toolpacks.mcp import serve_http

    with pytest.raises(ConfigError, match=r"refusing to serve on 10\.1\.2\.3 without a token"):
        serve_http({"agents": {}}, ["solo"], host="10.1.2.3", port=0)
    with pytest.raises(ValueError, match="workers must be a whole number"):
        serve_http({"agents": {}}, ["solo"], workers=0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8000", ("127.0.0.1", 8000)),
        ("0", ("127.0.0.1", 0)),
        ("0.0.0.0:80", ("0.0.0.0", 80)),
        ("localhost:65535", ("localhost", 65535)),
        ("[::1]:8000", ("::1", 8000)),
    ],
)
def test_bind_addresses_parse(text: str, expected: tuple[str, int]) -> None:
    """[HOST:]PORT, with IPv6 in brackets; the host defaults to loopback."""
    from toolpacks.mcp.http._run import parse_bind

    assert parse_bind(text) == expected


@pytest.mark.parametrize("text", ["", "http", "host:", ":80", "1.2.3.4:70000", "[::1", "[]:80"])
def test_bad_bind_addresses_are_refused(text: str) -> None:
    """Anything else names the expected form."""
    from toolpacks.mcp.http._run import parse_bind

    with pytest.raises(ValueError, match=r"is not \[HOST:\]PORT"):
        parse_bind(text)


def test_accepted_connections_get_tcp_nodelay() -> None:
    """The listening socket says it is TCP, so asyncio turns Nagle off on what it accepts.

    A socket made with protocol 0 (as uvicorn makes it for ``--workers``) would leave Nagle on,
    holding each response's last segment for a delayed ACK.
    """
    from toolpacks.mcp.http._run import listen, tcp_listener

    async def main() -> int:
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        with listen("127.0.0.1", 0) as sock:
            port = sock.getsockname()[1]
            server = await asyncio.start_server(connected, sock=tcp_listener(sock))
            async with server:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                value = await accepted
                writer.close()
                return value

    assert run(main()) != 0
    plain = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # protocol 0, as uvicorn's
    assert tcp_listener(plain).proto == socket.IPPROTO_TCP


@pytest.mark.parametrize(
    ("value", "allowed"),
    [
        ("http://localhost:3000", True),
        ("http://localhost", True),
        ("https://127.0.0.1:8443", True),
        ("http://[::1]:80", True),
        ("http://localhost.evil.example", False),
        ("http://localhost.evil.example:80", False),
        ("http://localhost:80.evil.example", False),
        ("http://evil.example", False),
        ("null", False),
        ("file://", False),
    ],
)
def test_the_default_origins_are_this_machine_only(value: str, allowed: bool) -> None:
    """Loopback origins on any port pass; look-alike names and ``null`` do not."""
    from toolpacks.mcp.http._guard import Guard

    guard = Guard(None, None, None)
    refusal = guard.check({b"host": b"localhost:8000", b"origin": value.encode()})
    assert (refusal is None) is allowed


def test_workers_stop_by_themselves_when_their_supervisor_is_killed(
    http_server: StartServer,
) -> None:
    """A worker whose supervisor is gone (SIGKILL, no forwarding) drains and exits alone."""
    server = http_server("--agent", "alpha", "--workers", "2")
    run(call(server.url(), "add", {"a": 1, "b": 2}, token=None))
    deadline = time.monotonic() + HTTP_TIMEOUT
    while len(workers := worker_pids(server.proc.pid, "spawn_main")) != 2:
        assert time.monotonic() < deadline, server.stderr()
        time.sleep(0.05)
    server.proc.kill()
    server.proc.wait(HTTP_TIMEOUT)
    try:
        while any(pid_alive(p) for p in workers):
            assert time.monotonic() < deadline + HTTP_TIMEOUT, "orphaned workers kept running"
            time.sleep(0.05)
    finally:
        for orphan in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(orphan, signal.SIGKILL)
