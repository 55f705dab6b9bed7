"""Mounting MCP servers over streamable HTTP: ``[mcp_servers.X] url = ...``.

The server is the official SDK's ``MCPServer`` under uvicorn in a subprocess on a free
loopback port, behind a bearer-token check; the client side is toolpacks' own mount.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Host
from toolpacks.exceptions import PackError

from .test_client_lifecycle import (
    SERVER,
    Clock,
    Recorder,
    call,
    value,
    wait_until,
    write_config,
)

pytestmark = pytest.mark.slow

TOKEN = "s3cret-token-value-0123456789"


class HttpServer:
    """The SDK server over streamable HTTP in a subprocess; ``url`` once it listens."""

    def __init__(self, directory: Path, port: int = 0) -> None:
        script = directory / "remote_server.py"
        if not script.exists():
            script.write_text(textwrap.dedent(SERVER))
        port_file = directory / f"port-{time.monotonic_ns()}"
        env = {**os.environ, "SERVER_TOKEN": TOKEN, "SERVER_PORT": str(port)}
        env["CALL_LOG"] = str(directory / "calls.log")
        self.errlog = (directory / "http-server.log").open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, str(script), str(port_file)],
            env=env,
            stdout=self.errlog,
            stderr=self.errlog,
        )
        wait_until(lambda: port_file.exists() or self.proc.poll() is not None, "the server binds")
        if self.proc.poll() is not None:
            pytest.fail(f"the HTTP server exited: {(directory / 'http-server.log').read_text()}")
        self.port = int(port_file.read_text())
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        """Kill the server (SIGKILL: no goodbye to clients)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self.errlog.close()


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[HttpServer]:
    """One HTTP server for the test."""
    server = HttpServer(tmp_path)
    yield server
    server.stop()


@pytest.fixture
def make_host(tmp_path: Path) -> Iterator[Callable[..., Host]]:
    """Hosts mounting ``url`` as the pack ``web``; all closed at teardown."""
    hosts: list[Host] = []

    def make(url: str, environ: dict[str, str] | None = None, **server: Any) -> Host:
        approval = server.pop("approval", None)
        table = {"url": url, "timeout": 20, **server}
        config = write_config(tmp_path, {"web": table}, '[agents.web]\npacks = ["web"]\n')
        host = Host(config, discover=False, environ=environ or {}, approval=approval)
        hosts.append(host)
        return host

    yield make
    for host in hosts:
        host.close()


BEARER = {"Authorization": {"env": "WEB_TOKEN"}}


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """Replace the connection's clock with one the test moves."""
    from toolpacks.packs.mcp import _connection

    fake = Clock()
    monkeypatch.setattr(_connection, "_now", fake)
    return fake


def test_url_server_with_token_from_the_environment_is_mounted(
    http_server: HttpServer, make_host: Callable[..., Host]
) -> None:
    """``url`` + ``headers = { Authorization = { env = ... } }``: listed, called, typed."""
    host = make_host(http_server.url, {"WEB_TOKEN": f"Bearer {TOKEN}"}, headers=BEARER)
    toolset = host.toolset("web")
    info = host.pack("web")
    assert info.status == "loaded", info.error
    assert {"add", "pid", "risky"} <= set(toolset.names())
    assert toolset.get("add").input_schema["required"] == ["a", "b"]
    assert value(call(toolset, "add", {"a": 20, "b": 22})) == 42
    bad = call(toolset, "add", {"a": "twenty"})
    assert bad.is_error is True
    assert bad.error is not None
    assert bad.error.kind == "invalid_arguments"
    secrets = host.load("web").secrets
    assert f"Bearer {TOKEN}" in secrets
    assert TOKEN in secrets
    assert TOKEN in toolset.entry("add").options.redact  # masked if a result ever holds it


def test_wrong_token_is_a_failed_pack_that_never_shows_the_token(
    http_server: HttpServer, make_host: Callable[..., Host], caplog: pytest.LogCaptureFixture
) -> None:
    """HTTP 401: the pack fails saying to check the headers; the value is nowhere to be seen."""
    wrong = "Bearer wrong-token-value-987654321"
    caplog.set_level(logging.DEBUG)
    host = make_host(http_server.url, {"WEB_TOKEN": wrong}, headers=BEARER)
    with pytest.raises(PackError, match="HTTP 401") as caught:
        host.toolset("web")
    assert "mcp_servers.web.headers" in str(caught.value)
    info = host.pack("web")
    assert info.status == "failed"
    shown = " ".join([str(caught.value), info.error or "", caplog.text, repr(host.config)])
    assert "wrong-token-value" not in shown


def test_config_repr_hides_header_values(tmp_path: Path) -> None:
    """A literal header value in the file is never part of the configuration's repr."""
    table = {"url": "https://user:pw-123456@example.com/mcp", "headers": {"X-Api-Key": "abc123xyz"}}
    host = Host(write_config(tmp_path, {"web": table}), discover=False)
    shown = repr(host.config)
    assert "abc123xyz" not in shown
    assert "pw-123456" not in shown
    assert "X-Api-Key" in shown


def test_unset_header_variable_is_a_failed_pack_naming_it(
    http_server: HttpServer, make_host: Callable[..., Host]
) -> None:
    """A ``{ env = "VAR" }`` header whose variable is unset fails the pack, naming VAR."""
    host = make_host(http_server.url, {}, headers=BEARER)
    info = host.load("web").info
    assert info.status == "failed"
    assert info.error is not None
    assert "WEB_TOKEN" in info.error
    assert "mcp_servers.web.headers.Authorization" in info.error


def test_unreachable_server_is_a_failed_pack(make_host: Callable[..., Host]) -> None:
    """Nothing listening: the pack fails saying the server could not be reached."""
    import socket

    with socket.socket() as probe:  # a port nothing listens on (bound, never listening)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        host = make_host(f"http://127.0.0.1:{port}/mcp")
        info = host.load("web").info
    assert info.status == "failed"
    assert info.error is not None
    assert "could not be reached" in info.error
    assert f"127.0.0.1:{port}/mcp" in info.error


def test_wrong_path_is_a_failed_pack_saying_404(
    http_server: HttpServer, make_host: Callable[..., Host]
) -> None:
    """A URL with no MCP endpoint behind it: HTTP 404, with the paths toolpacks serves."""
    url = http_server.url.replace("/mcp", "/nothing-here")
    host = make_host(url, {"WEB_TOKEN": f"Bearer {TOKEN}"}, headers=BEARER)
    info = host.load("web").info
    assert info.status == "failed"
    assert "HTTP 404" in (info.error or "")


def test_list_changed_over_http_refreshes_the_pack(
    http_server: HttpServer, make_host: Callable[..., Host]
) -> None:
    """A server announcing new tools over HTTP: toolsets built afterwards have them."""
    host = make_host(http_server.url, {"WEB_TOKEN": f"Bearer {TOKEN}"}, headers=BEARER)
    toolset = host.toolset("web")
    assert value(call(toolset, "grow")) == "grown"
    wait_until(lambda: "web.extra" in host.pack("web").tools, "the pack lists `extra`")
    assert value(call(host.toolset("web"), "extra", {"x": 4})) == 8


def test_elicitation_over_http_asks_the_host_handler(
    http_server: HttpServer, make_host: Callable[..., Host]
) -> None:
    """A server's mid-call question over HTTP reaches the host's approval handler."""
    handler = Recorder(True)
    host = make_host(
        http_server.url, {"WEB_TOKEN": f"Bearer {TOKEN}"}, headers=BEARER, approval=handler
    )
    assert value(call(host.toolset("web"), "risky", {"path": "/tmp/x"})) == "accept: /tmp/x"
    assert handler.requests[0].qualified_name == "web.risky"
    assert handler.requests[0].agent_id == "web"


def test_server_gone_and_back_is_reconnected_at_the_next_call(
    tmp_path: Path, make_host: Callable[..., Host], clock: Clock
) -> None:
    """A server that goes away: error results, then after the delay a new connection."""
    server = HttpServer(tmp_path)
    try:
        host = make_host(server.url, {"WEB_TOKEN": f"Bearer {TOKEN}"}, headers=BEARER)
        toolset = host.toolset("web")
        first = value(call(toolset, "pid"))
        server.stop()
        down = call(toolset, "pid")
        assert down.is_error is True
        assert "no longer available" in down.content
        server = HttpServer(tmp_path, port=server.port)
        clock.advance(30)
        again = call(toolset, "pid")
        assert value(again) != first
        assert host.pack("web").error is None
    finally:
        server.stop()


def test_a_toolpacks_http_server_is_mounted_by_a_second_host(
    tmp_path: Path, make_host: Callable[..., Host]
) -> None:
    """``toolpacks serve --http`` in one process, mounted with ``url`` by another host."""
    from .conftest import write_demo

    config = write_demo(tmp_path)
    port_probe = __import__("socket").socket()
    port_probe.bind(("127.0.0.1", 0))
    port = port_probe.getsockname()[1]
    port_probe.close()
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "SERVE_TOKEN": TOKEN}
    args = ["serve", "--agent", "assistant", "--config", str(config)]
    args += ["--http", f"127.0.0.1:{port}", "--token-env", "SERVE_TOKEN"]
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "toolpacks", *args], env=env, stderr=log)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        remote = tmp_path / "second"
        remote.mkdir()

        def mounted() -> bool:
            host = Host(
                write_config(remote, {"web": {"url": url, "headers": BEARER, "timeout": 20}}),
                discover=False,
                environ={"WEB_TOKEN": f"Bearer {TOKEN}"},
            )
            ok = host.load("web").info.status == "loaded"
            host.close()
            return ok or proc.poll() is not None

        wait_until(mounted, "the toolpacks HTTP server answers", timeout=60)
        assert proc.poll() is None, (tmp_path / "serve.log").read_text()
        host = make_host(url, {"WEB_TOKEN": f"Bearer {TOKEN}"}, headers=BEARER)
        toolset = host.toolset("web")
        assert {"add", "forecast"} <= set(toolset.names())
        result = call(toolset, "add", {"a": 2, "b": 3})
        assert result.value == {"result": 5}
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()


def test_silent_server_times_out_as_a_failed_pack(make_host: Callable[..., Host]) -> None:
    """A port that accepts connections but never answers fails after ``timeout``."""
    import socket

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        host = make_host(f"http://127.0.0.1:{port}/mcp", timeout=1)
        info = host.load("web").info
    assert info.status == "failed"
    assert "did not answer within 1 s" in (info.error or "")


def test_header_value_with_a_line_break_is_refused(make_host: Callable[..., Host]) -> None:
    """A header value that would split the HTTP header fails the pack; the value is not shown."""
    host = make_host(
        "http://127.0.0.1:9/mcp", {"WEB_TOKEN": "Bearer abc\r\nX-Injected: 1"}, headers=BEARER
    )
    info = host.load("web").info
    assert info.status == "failed"
    assert "line break" in (info.error or "")
    assert "X-Injected" not in (info.error or "")


def test_shown_url_and_plain_http_warning() -> None:
    """URLs in messages lose credentials and queries; headers over plain http are flagged."""
    from toolpacks.packs.mcp._spec import ServerSpec, shown_url

    assert (
        shown_url("https://u:pw@example.com:8443/mcp?token=abc") == "https://example.com:8443/mcp"
    )
    headers = {"Authorization": "Bearer x"}
    assert ServerSpec("a", url="http://10.1.2.3/mcp", headers=headers).insecure() is True
    assert ServerSpec("a", url="https://10.1.2.3/mcp", headers=headers).insecure() is False
    assert ServerSpec("a", url="http://127.0.0.1:8000/mcp", headers=headers).insecure() is False
    assert ServerSpec("a", url="http://10.1.2.3/mcp").insecure() is False
