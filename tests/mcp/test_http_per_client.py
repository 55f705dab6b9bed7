"""One client address cannot take every connection of a worker (issue 35).

~900 half-open connections from one address made a worker answer 503 to everyone until the
header timeout. With a per-client-address cap (``max_connections_per_client``, counted per
worker) the address's connections beyond its share are refused at once and another address
is still served. Two loopback addresses stand for two clients: 127.0.0.2 (bound as the source
address of the flood) and 127.0.0.1. The server runs in this process (``serve_here``).
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable

import httpx
import pytest

from . import test_http_operations as operations
from .conftest import HTTP_TIMEOUT
from .test_http_operations import CALL, HALF_HEADER, HEADERS, Running, _answered

host = operations.host  # the fixtures: a host with ``add``, and the in-process server
serve = operations.serve

FLOOD = 2000


def _from(address: str, base: str) -> socket.socket:
    """A connection to ``base`` whose source address is ``address``."""
    target, port = base.removeprefix("http://").rsplit(":", 1)
    return socket.create_connection(
        (target, int(port)), timeout=HTTP_TIMEOUT, source_address=(address, 0)
    )


def _flood(base: str) -> list[socket.socket]:
    """``FLOOD`` connections from 127.0.0.2, each stopped halfway through its headers."""
    socks: list[socket.socket] = []
    try:
        for _ in range(FLOOD):
            sock = _from("127.0.0.2", base)
            socks.append(sock)
            with contextlib.suppress(OSError):  # refused and closed already
                sock.sendall(HALF_HEADER)
    except BaseException:
        for sock in socks:
            sock.close()
        raise
    return socks


def test_two_thousand_half_open_connections_from_one_address_leave_another_served(
    serve: Callable[..., Running],
) -> None:
    run = serve(max_connections=100, max_connections_per_client=40, header_timeout=120)
    socks = _flood(run.base)
    try:
        refused = _answered(socks, at_least=FLOOD - 40)  # 40 stay open, half a header each
        assert all(a.startswith(b"HTTP/1.1 503 ") for a in refused.values())
        answer = httpx.post(f"{run.base}/mcp", json=CALL, headers=HEADERS, timeout=HTTP_TIMEOUT)
        assert answer.json()["result"]["structuredContent"] == {"result": 42}
        with _from("127.0.0.2", run.base) as more:  # the flooding address: still refused
            more.sendall(HALF_HEADER)
            assert more.recv(4096).startswith(b"HTTP/1.1 503 ")
    finally:
        for sock in socks:
            sock.close()
    metrics = run.served.metrics.render()
    assert f'toolpacks_mcp_refused_requests_total{{reason="busy_client"}} {FLOOD - 40 + 1}' in (
        metrics
    )


def test_by_default_one_address_gets_nine_tenths_of_the_cap(
    serve: Callable[..., Running],
) -> None:
    """Without the option, one address holds at most 90 of 100 connections."""
    run = serve(max_connections=100, header_timeout=120)
    socks = [_from("127.0.0.2", run.base) for _ in range(120)]
    try:
        refused = _answered(socks, at_least=30)
        assert len(refused) == 30
        answer = httpx.post(f"{run.base}/mcp", json=CALL, headers=HEADERS, timeout=HTTP_TIMEOUT)
        assert answer.status_code == 200
    finally:
        for sock in socks:
            sock.close()


@pytest.mark.parametrize("value", [0, -1, True, 1.5])
def test_a_bad_per_client_cap_is_refused(value: object) -> None:
    from toolpacks.mcp.http._limits import HttpLimits

    with pytest.raises(ValueError, match="max_connections_per_client"):
        HttpLimits(max_connections_per_client=value)  # type: ignore[arg-type]


def test_the_per_client_flag_reaches_serve_http(
    tmp_path: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--max-connections-per-client N`` is passed on; 0 and stdio are refused, naming it."""
    from toolpacks.cli._main import main
    from toolpacks.mcp.http import _workers

    config = tmp_path / "toolpacks.toml"  # type: ignore[operator]
    config.write_text("[agents.a]\npacks = []\n")
    seen: dict[str, object] = {}

    def fake_serve_http(*args: object, **kwargs: object) -> int:
        seen.update(kwargs)
        return 0

    monkeypatch.setattr(_workers, "serve_http", fake_serve_http)
    argv = ["--config", str(config), "serve", "--agent", "a"]
    assert main([*argv, "--http", "0", "--max-connections-per-client", "8"]) == 0
    assert seen["max_connections_per_client"] == 8
    assert main([*argv, "--http", "0", "--max-connections-per-client", "0"]) != 0
    assert "--max-connections-per-client must be a positive number" in capsys.readouterr().err
    assert main([*argv, "--max-connections-per-client", "8"]) != 0
    assert "apply to --http only" in capsys.readouterr().err
