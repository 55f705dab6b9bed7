"""A stdio client reusing a request id while it is in flight (issue 37).

The second request took the first's place in the in-flight map: whichever ended first
removed the id, and the other's answer was dropped (about 2 % of later answers were lost).
JSON-RPC ids must be unique per session: the duplicate is refused with an error naming the
id, and the first request, and every later one, is answered.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(120)

SERVER = """
import sys, time, types
from pathlib import Path

from toolpacks import Host, hookimpl, tool
from toolpacks.mcp import serve_stdio

FLAG = Path(sys.argv[1])


@tool
def hold() -> str:
    '''Wait until the test lets go (at most 60 s).'''
    deadline = time.monotonic() + 60
    while not FLAG.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return "held"


@tool
def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b


pack = types.ModuleType("calc")
pack.register_tools = hookimpl(lambda register: (register(hold), register(add)))
host = Host({"agents": {"calc": {"packs": ["calc"]}}}, discover=False)
host.add_pack(pack, name="calc")
serve_stdio(host.toolset("calc"), name="calc")
"""

HELLO = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


class Raw:
    def __init__(self, tmp_path: Path) -> None:
        script = tmp_path / "server.py"
        script.write_text(textwrap.dedent(SERVER))
        self.flag = tmp_path / "go"
        self.proc = subprocess.Popen(
            [sys.executable, str(script), str(self.flag)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ},
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        return dict(json.loads(self.lines.get(timeout=30)))

    def call(self, request_id: Any, name: str, arguments: dict[str, Any]) -> None:
        params = {"name": name, "arguments": arguments}
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def test_a_reused_id_in_flight_is_refused_and_no_answer_is_lost(tmp_path: Path) -> None:
    raw = Raw(tmp_path)
    try:
        raw.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": HELLO})
        assert raw.receive()["id"] == "init"
        raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        raw.call(7, "hold", {})
        raw.call(7, "add", {"a": 1, "b": 2})  # the same id while the first is in flight
        refused = raw.receive()
        assert refused["id"] == 7
        assert refused["error"]["code"] == -32600
        assert "request id 7 is already in use" in refused["error"]["message"]
        raw.call(8, "add", {"a": 2, "b": 2})
        assert raw.receive()["result"]["structuredContent"] == {"result": 4}
        raw.flag.write_text("go")
        first = raw.receive()
        assert first["id"] == 7
        assert first["result"]["content"][0]["text"] == "held"
        for i in range(40):  # the id is free again once answered; nothing later is lost
            raw.call(7, "add", {"a": i, "b": 1})
            answer = raw.receive()
            assert (answer["id"], answer["result"]["structuredContent"]) == (7, {"result": i + 1})
    finally:
        raw.flag.write_text("go")
        raw.close()
