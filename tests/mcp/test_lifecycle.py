"""The stdio server's transport and lifecycle, over a real ``toolpacks serve`` subprocess.

Raw JSON-RPC lines go to its stdin and responses are read from its stdout, every read bounded:
malformed lines get the JSON-RPC error and the server goes on; nothing a tool raises takes it
down; end of input and SIGTERM drain calls in flight, and a stuck sync tool cannot keep the
process alive.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolpacks.mcp._stdio import GRACE_ENV
from toolpacks.mcp._wire import MAX_MESSAGE_BYTES

from .conftest import RAW_TIMEOUT, RawServer, result_text

StartServer = Callable[..., RawServer]


def _error(message: dict[str, Any]) -> tuple[Any, int]:
    assert "error" in message, message
    assert "result" not in message
    return message["id"], message["error"]["code"]


def _still_answers(raw: RawServer) -> None:
    assert raw.call("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}


EXIT_CEILING = 60.0
"""Seconds a test waits for an exit it expects (a ceiling for a loaded machine, not a time
the behaviour promises: how soon is measured by the grace, from below)."""


def _wait_for(path: Path, timeout: float = RAW_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} was never written"
        time.sleep(0.02)


# -- malformed lines --------------------------------------------------------------------------


def test_garbage_line_is_a_parse_error_and_serving_goes_on(raw: RawServer) -> None:
    """A line that is not JSON gets -32700 with id null; a later request is still answered."""
    raw.send("this is not json")
    message = raw.receive()
    assert _error(message) == (None, -32700)
    assert message["error"]["message"].startswith("Parse error")
    _still_answers(raw)


def test_truncated_json_is_a_parse_error(raw: RawServer) -> None:
    """Half a message is a parse error, not a wait for the rest."""
    raw.send('{"jsonrpc": "2.0", "id": 1, "method": "tools/li')
    assert _error(raw.receive()) == (None, -32700)
    _still_answers(raw)


def test_invalid_utf8_is_a_parse_error(raw: RawServer) -> None:
    """Bytes that are not UTF-8 are not JSON text."""
    raw.send(b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}')
    assert _error(raw.receive()) == (None, -32700)
    _still_answers(raw)


@pytest.mark.parametrize(
    ("line", "echoed"),
    [
        ("[1, 2]", None),
        ("5", None),
        ('"tools/list"', None),
        ('{"jsonrpc": "2.0", "id": 3}', 3),
        ('{"jsonrpc": "2.0", "id": 4, "method": 7}', 4),
        ('{"jsonrpc": "2.0", "id": "four", "method": "tools/list", "params": [1]}', "four"),
        ('{"jsonrpc": "1.0", "id": 5, "method": "tools/list"}', 5),
        ('{"jsonrpc": "2.0", "id": true, "method": "tools/list"}', None),
        ('{"jsonrpc": "2.0", "id": 6, "id": 7, "method": "tools/list"}', 7),
        ('{"jsonrpc": "2.0", "method": 8}', None),
    ],
)
def test_invalid_request_gets_minus_32600_with_the_id_when_readable(
    raw: RawServer, line: str, echoed: Any
) -> None:
    """Valid JSON that is not a JSON-RPC message: -32600, its id echoed when it can be read."""
    raw.send(line)
    message = raw.receive()
    assert _error(message) == (echoed, -32600)
    assert message["error"]["message"].startswith("Invalid Request")
    _still_answers(raw)


def test_blank_lines_are_ignored(raw: RawServer) -> None:
    """Empty and whitespace-only lines get no response."""
    raw.send("")
    raw.send("   \t ")
    answer = raw.request("tools/list")
    assert "result" in answer


def test_notifications_get_no_response(raw: RawServer) -> None:
    """A well-formed notification, even an unknown one, is never answered."""
    raw.send({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {}})
    answer = raw.request("tools/list")
    assert "result" in answer


def test_oversized_line_is_refused_and_serving_goes_on(raw: RawServer) -> None:
    """A line over the cap is discarded to its newline and answered with -32600, id null."""
    filler = "a" * (MAX_MESSAGE_BYTES + 10)
    raw.send(f'{{"jsonrpc": "2.0", "id": 99, "method": "ping", "params": {{"x": "{filler}"}}}}')
    message = raw.receive()
    assert _error(message) == (None, -32600)
    assert "request too large" in message["error"]["message"]
    _still_answers(raw)


# -- nothing a tool raises takes the server down ----------------------------------------------


@pytest.mark.parametrize(
    ("tool", "raised"),
    [("exit_now", "SystemExit"), ("interrupt", "KeyboardInterrupt"), ("boom", "Boom")],
)
def test_base_exceptions_from_tools_are_error_results(
    raw: RawServer, tool: str, raised: str
) -> None:
    """SystemExit, KeyboardInterrupt and a custom BaseException: isError, and serving goes on."""
    result = raw.call(tool, {})
    assert result["isError"] is True
    assert tool in result_text(result)
    assert raised in result_text(result)
    _still_answers(raw)
    assert raw.proc.poll() is None


# -- end of input and signals ------------------------------------------------------------------


def test_end_of_input_answers_the_last_request_and_exits_zero(raw_server: StartServer) -> None:
    """A request sent just before stdin closes is still answered; then the process exits 0."""
    server = raw_server()
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 50,
            "method": "tools/call",
            "params": {"name": "nap", "arguments": {"seconds": 0.3}},
        }
    )
    server.close_stdin()
    answer = server.response(50)
    assert answer["result"]["isError"] is False
    assert server.wait(EXIT_CEILING) == 0


def test_end_of_input_with_a_stuck_sync_tool_exits_non_zero(
    raw_server: StartServer, tmp_path: Path
) -> None:
    """A sync tool that never returns cannot keep the process alive after stdin closes."""
    server = raw_server({GRACE_ENV: "0.5"})
    marker = tmp_path / "hang.started"
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 60,
            "method": "tools/call",
            "params": {"name": "hang", "arguments": {"marker": str(marker)}},
        }
    )
    _wait_for(marker)
    closed = time.monotonic()
    server.close_stdin()
    code = server.wait(EXIT_CEILING)
    assert code is not None, "a stuck sync tool kept the server alive after end of input"
    assert code == 3
    assert time.monotonic() - closed >= 0.4  # the grace was given
    assert "hang" in server.stderr()


def test_sigterm_answers_the_call_in_flight_then_exits_zero(
    raw_server: StartServer, tmp_path: Path
) -> None:
    """SIGTERM during a 1 s call: the call is answered, then the process exits 0."""
    server = raw_server()
    marker = tmp_path / "nap.started"
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 70,
            "method": "tools/call",
            "params": {"name": "nap", "arguments": {"seconds": 1.0, "marker": str(marker)}},
        }
    )
    _wait_for(marker)
    server.proc.send_signal(signal.SIGTERM)
    answer = server.response(70)
    assert answer["result"]["isError"] is False
    assert result_text(answer["result"]) == "slept 1.0"
    assert server.wait(EXIT_CEILING) == 0


def test_sigterm_with_a_stuck_call_exits_non_zero_after_the_grace(
    raw_server: StartServer, tmp_path: Path
) -> None:
    """SIGTERM while a sync tool hangs: the process exits non-zero once the grace is over."""
    server = raw_server({GRACE_ENV: "1"})
    marker = tmp_path / "hang.started"
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 80,
            "method": "tools/call",
            "params": {"name": "hang", "arguments": {"marker": str(marker)}},
        }
    )
    _wait_for(marker)
    signalled = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    code = server.wait(EXIT_CEILING)
    assert code is not None, "a stuck sync tool kept the server alive after SIGTERM"
    assert code != 0
    assert time.monotonic() - signalled >= 0.9
    assert "hang" in server.stderr()


def test_a_second_sigterm_ends_the_grace_at_once(
    raw_server: StartServer, tmp_path: Path
) -> None:
    """With a grace far longer than the wait below, a second SIGTERM still ends the process."""
    server = raw_server({GRACE_ENV: "600"})
    marker = tmp_path / "hang.started"
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 85,
            "method": "tools/call",
            "params": {"name": "hang", "arguments": {"marker": str(marker)}},
        }
    )
    _wait_for(marker)
    server.proc.send_signal(signal.SIGTERM)
    assert server.wait(0.5) is None, "the first SIGTERM must grant the grace, not end at once"
    server.proc.send_signal(signal.SIGTERM)
    code = server.wait(EXIT_CEILING)  # a tenth of the grace: only the second signal ends it
    assert code is not None, "a second SIGTERM did not end the grace"
    assert code == 3
    assert "hang" in server.stderr()


def test_sigterm_stops_reading_new_requests(raw_server: StartServer, tmp_path: Path) -> None:
    """After SIGTERM a new request is not served; the one in flight still is."""
    server = raw_server()
    marker = tmp_path / "nap.started"
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 90,
            "method": "tools/call",
            "params": {"name": "nap", "arguments": {"seconds": 0.5, "marker": str(marker)}},
        }
    )
    _wait_for(marker)
    server.proc.send_signal(signal.SIGTERM)
    time.sleep(0.1)
    server.send({"jsonrpc": "2.0", "id": 91, "method": "tools/list"})
    first = server.receive()
    assert first["id"] == 90
    assert server.wait(EXIT_CEILING) == 0
    assert all(m.get("id") != 91 or "result" not in m for m in server.rest())
