"""Locust users that call one MCP tool over streamable HTTP, speaking JSON-RPC directly.

Each user holds one keep-alive connection (locust's ``FastHttpUser``) and sends ``tools/call``
POSTs back to back, in one of the two protocol revisions the servers speak:

* ``2025-11-25``: the body alone, with ``MCP-Protocol-Version: 2025-11-25``; a stateless
  server needs no ``initialize`` first and no session id;
* ``2026-07-28``: self-contained requests: ``params._meta`` carries the protocol version and
  the client capabilities, and the headers ``Mcp-Method`` and ``Mcp-Name`` repeat the method
  and the tool's name (the SDK refuses a request whose headers and body disagree).

Every reply is checked: HTTP 200, a JSON-RPC result whose id is the one sent (each id is
unique, so an answer to an id never sent, or sent once and answered twice, is seen), not an
error result, and the right value. Anything else is a locust failure with its reason.

Two ways to run it:

* as a plain locustfile, configured by environment variables (``MCP_BENCH_TOOL``: ``add`` or
  ``add_sync``; ``MCP_BENCH_REVISION``; ``MCP_BENCH_PATH``, default ``/mcp``)::

      locust -f bench/locustfile_mcp.py --headless -u 16 -r 16 -t 20s -H http://127.0.0.1:8000

* as the load agent of ``bench_http.py`` (``python bench/locustfile_mcp.py --agent``): one
  process that reads one JSON command a line on stdin, runs that case with locust's library
  API (``Environment``, a local runner) and writes one JSON result a line on stdout.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import gevent
from locust import FastHttpUser, constant, task
from locust.env import Environment
from locust.event import Events

REVISIONS = ("2025-11-25", "2026-07-28")
ENVELOPE_VERSION = "io.modelcontextprotocol/protocolVersion"
ENVELOPE_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


@dataclass
class Ledger:
    """Every request a case sent and what became of it (shared by the users of one case)."""

    keep_ids: bool = False
    """Keep the ids per outcome (the fault run cross-checks them with the server's ledger)."""
    sent: int = 0
    pending: set[str] = field(default_factory=set)
    outcomes: Counter[str] = field(default_factory=Counter)
    """``ok``, or the reason of a failure (its first words), with counts."""
    ids: dict[str, list[str]] = field(default_factory=dict)
    """With ``keep_ids``: ``ok``, ``transport`` (no HTTP answer), ``refused`` (anything else)."""
    unexpected_ids: int = 0
    """Replies carrying an id that was not pending (never sent, or already answered)."""
    draining: bool = False
    """Set when a case ends: users stop sending and the calls in flight finish."""
    users: list[Any] = field(default_factory=list)
    """The users of the case (their connections are closed when it ends)."""

    def record(self, rid: str, outcome: str, kind: str) -> None:
        self.outcomes[outcome] += 1
        if self.keep_ids:
            self.ids.setdefault(kind, []).append(rid)


def request_body(tool: str, revision: str, rid: str, arguments: dict[str, Any]) -> bytes:
    """One ``tools/call`` request in ``revision``."""
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if revision == "2026-07-28":
        params["_meta"] = {ENVELOPE_VERSION: revision, ENVELOPE_CAPABILITIES: {}}
    message = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    return json.dumps(message, separators=(",", ":")).encode()


def request_headers(tool: str, revision: str, token: str | None = None) -> dict[str, str]:
    """The HTTP headers of a ``tools/call`` POST in ``revision``."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": revision,
    }
    if revision == "2026-07-28":
        headers["Mcp-Method"] = "tools/call"
        headers["Mcp-Name"] = tool
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def check_reply(
    status: int, content: bytes, rid: str, expected: Any, error: object = None
) -> tuple[str, str]:
    """``(outcome, kind)`` of one reply: ``("ok", "ok")`` or a short reason of the failure.

    ``status`` 0 means no HTTP answer at all (``error`` says why: a reset connection...).
    """
    if status == 0:
        return f"no answer: {type(error).__name__}", "transport"
    if status != 200:
        return f"HTTP {status}", "refused"
    try:
        message = json.loads(content)
    except ValueError:
        return "reply is not JSON", "refused"
    if message.get("id") != rid:
        return "id mismatch", "refused"
    result = message.get("result")
    if not isinstance(result, dict):
        return f"JSON-RPC error {message.get('error', {}).get('code')}", "refused"
    if result.get("isError"):
        return "error result", "refused"
    if (result.get("structuredContent") or {}).get("result") != expected:
        return "wrong value", "refused"
    return "ok", "ok"


class McpToolUser(FastHttpUser):
    """Calls one tool over MCP streamable HTTP, back to back, on one connection."""

    abstract = True
    wait_time = constant(0)
    max_retries = 0  # a POST is never sent twice by the client
    tool = "add"
    revision = "2025-11-25"
    path = "/mcp"
    token: str | None = None
    ledger: Ledger = Ledger()
    _next_user = 0

    def on_start(self) -> None:
        self.ledger.users.append(self)
        type(self)._next_user += 1
        self.number = type(self)._next_user
        self.seq = 0
        self.headers = request_headers(self.tool, self.revision, self.token)
        self.prefix = f"{os.getpid()}-{self.number}"

    @task
    def call(self) -> None:
        """One ``tools/call``, checked."""
        ledger = self.ledger
        if ledger.draining:
            gevent.sleep(0.05)
            return
        self.seq += 1
        rid = f"{self.prefix}-{self.seq}"
        if self.tool == "record":
            arguments: dict[str, Any] = {"token": rid}
            expected: Any = rid
        else:
            arguments = {"a": self.seq, "b": self.number}
            expected = self.seq + self.number
        body = request_body(self.tool, self.revision, rid, arguments)
        ledger.sent += 1
        ledger.pending.add(rid)
        with self.client.post(
            self.path, data=body, headers=self.headers, name=self.tool, catch_response=True
        ) as reply:
            status = reply.status_code or 0
            content = reply.content if status else b""
            error = getattr(reply, "error", None)
            outcome, kind = check_reply(status, content or b"", rid, expected, error)
            if rid in ledger.pending:
                ledger.pending.discard(rid)
            else:
                ledger.unexpected_ids += 1
                outcome, kind = "answered twice", "refused"
            ledger.record(rid, outcome, kind)
            if outcome == "ok":
                reply.success()
            else:
                reply.failure(outcome)


def _configured_from_env() -> type[McpToolUser]:
    attrs = {
        "abstract": False,
        "tool": os.environ.get("MCP_BENCH_TOOL", "add"),
        "revision": os.environ.get("MCP_BENCH_REVISION", "2025-11-25"),
        "path": os.environ.get("MCP_BENCH_PATH", "/mcp"),
        "ledger": Ledger(),
    }
    return type("McpUser", (McpToolUser,), attrs)


McpUser = _configured_from_env()  # what `locust -f bench/locustfile_mcp.py` runs


# -- the load agent ---------------------------------------------------------------------------


def _tree(root: int) -> list[int]:
    """``root`` and its live descendants (Linux ``/proc``)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b") ", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(parents.get(pid, []))
    return found


def cpu_seconds(pids: list[int]) -> dict[int, float]:
    """User + system CPU seconds used so far by each of ``pids`` (those that still exist)."""
    tick = os.sysconf("SC_CLK_TCK")
    used: dict[int, float] = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b") ", 1)[1].split()
            used[pid] = (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            continue
    return used


def _percentile(data: list[float], q: float) -> float:
    if not data:
        return float("nan")
    k = min(len(data) - 1, max(0, round(q * (len(data) - 1))))
    return data[k]


def run_case(command: dict[str, Any], emit: Any) -> dict[str, Any]:
    """Run one case of ``bench_http.py``: warm up, measure, drain; its figures."""
    ledger = Ledger(keep_ids=bool(command.get("keep_ids")))
    attrs = {
        "abstract": False,
        "tool": command["tool"],
        "revision": command["revision"],
        "path": command.get("path", "/mcp"),
        "token": command.get("token"),
        "ledger": ledger,
        "_next_user": 0,
    }
    user_class = type("McpCaseUser", (McpToolUser,), attrs)
    # Events of its own: a runner adds its listeners to its environment's events, so sharing
    # locust's global ones would pile up every earlier case's listeners on every request.
    env = Environment(user_classes=[user_class], host=command["base"], events=Events())
    runner = env.create_local_runner()
    window: dict[str, float] = {}
    latencies: list[float] = []
    completions: list[float] = []

    def on_request(response_time: float, exception: Any, **_: Any) -> None:
        now = time.perf_counter()
        if "start" in window and "end" not in window and exception is None:
            latencies.append(response_time)
            completions.append(now - window["start"])

    env.events.request.add_listener(on_request)
    users = int(command["users"])
    runner.start(users, spawn_rate=float(command.get("spawn_rate") or 1e6))
    gevent.sleep(float(command["warmup"]))
    server_pids = _tree(int(command["server_pid"])) if command.get("server_pid") else []
    me = [os.getpid()]
    before_failures = sum(v for k, v in ledger.outcomes.items() if k != "ok")
    cpu0, mine0 = cpu_seconds(server_pids), cpu_seconds(me)
    window["start"] = time.perf_counter()
    emit({"event": "measuring"})
    gevent.sleep(float(command["duration"]))
    window["end"] = time.perf_counter()
    elapsed = window["end"] - window["start"]
    cpu1, mine1 = cpu_seconds(server_pids), cpu_seconds(me)
    by_process = sorted(((cpu1[p] - cpu0.get(p, 0.0)) / elapsed for p in cpu1), reverse=True)
    failures = sum(v for k, v in ledger.outcomes.items() if k != "ok") - before_failures
    ledger.draining = True
    deadline = time.perf_counter() + float(command.get("drain", 10.0))
    while ledger.pending and time.perf_counter() < deadline:
        gevent.sleep(0.02)
    runner.stop()
    runner.quit()
    for user in ledger.users:  # close the keep-alive connections now, not at garbage collection
        user.client.client.close()
    env.events.request.remove_listener(on_request)
    latencies.sort()
    seconds = int(elapsed)
    per_second = [0] * seconds
    for t in completions:
        if int(t) < seconds:
            per_second[int(t)] += 1
    return {
        "label": command.get("label", ""),
        "elapsed_s": elapsed,
        "ok": len(latencies),
        "failures_in_window": failures,
        "calls_per_s": len(latencies) / elapsed,
        "per_second": per_second,
        "p50_ms": _percentile(latencies, 0.50),
        "p99_ms": _percentile(latencies, 0.99),
        "max_ms": latencies[-1] if latencies else float("nan"),
        "server_cpu": sum(by_process),
        "server_cpu_by_process": by_process,
        "loadgen_cpu": (sum(mine1.values()) - sum(mine0.values())) / elapsed,
        "sent": ledger.sent,
        "outcomes": dict(ledger.outcomes),
        "unanswered": len(ledger.pending),
        "unexpected_ids": ledger.unexpected_ids,
        "ids": ledger.ids if ledger.keep_ids else {},
    }


def agent() -> int:
    """Read commands on stdin, one JSON object a line; answer each with one JSON line."""
    out = sys.stdout

    def emit(message: dict[str, Any]) -> None:
        out.write(json.dumps(message) + "\n")
        out.flush()

    emit({"event": "ready", "pid": os.getpid()})
    for line in sys.stdin:
        if not line.strip():
            continue
        command = json.loads(line)
        if command.get("cmd") == "quit":
            break
        try:
            emit({"event": "result", "result": run_case(command, emit)})
        except Exception as exc:  # reported to the driver, which stops the run
            emit({"event": "error", "error": f"{type(exc).__name__}: {exc}"})
    return 0


if __name__ == "__main__" and "--agent" in sys.argv:
    raise SystemExit(agent())
