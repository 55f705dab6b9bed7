"""MCP over streamable HTTP under load, with locust: toolpacks' server against FastMCP's (issue 15).

Servers (started once, in subprocesses, all kept up for the whole run): ``toolpacks serve
--http --workers 1``, ``--workers 2`` and ``--workers 4``, and FastMCP's HTTP server (stateless,
JSON replies, like toolpacks'), all serving the same tools: ``add`` (async) and ``add_sync``
(a plain function, run in a worker thread by both). The load is one locust process
(``locustfile_mcp.py --agent``): K users, each on one keep-alive connection, sending
``tools/call`` POSTs back to back, every reply checked (status, id, value).

Each case is a server, a tool and a protocol revision (2025-11-25 and 2026-07-28 are routed
differently by the SDK, so each has its own figures), placed one of two ways on the machine's
two cores:

* ``pinned``: the server on CPU 1 and locust on CPU 0 (``sched_setaffinity`` on every thread):
  one dedicated core each, for toolpacks ``--workers 1`` against FastMCP;
* ``shared``: everything on both CPUs, for toolpacks ``--workers 1, 2, 4``: with a load
  generator that needs a core too, two workers cannot have two cores; next to the measured
  ratio the report gives a CPU-normalised one (throughput per CPU-second the server used,
  times the two cores a two-worker server would have to itself, against one worker's
  throughput per CPU-second on its own core).

Every round runs every case once, in a shuffled order (a burst of noise hits all cases of a
round alike); a case is a warm-up, then a measured window. Figures: calls/s (median over
rounds, with the per-second rates of all rounds as the spread), p50 and p99 latency, errors
(every reply that was not a right answer, warm-up included), and CPU used by the server and by
the load generator. Ratios are taken per round, then summarised.

A fault run follows: ``--workers 2`` under load with a tool (``record``) that appends the id it
is given to a ledger file; one worker is SIGKILLed mid-run. It reports what clients saw and
cross-checks every id sent with the replies and the ledger: no acknowledged call lost, none
run twice.

Usage: ``bench/.venv/http/bin/python bench/bench_http.py [--quick] [--rounds N]
[--duration S] [--users K] [--no-fault]``; writes ``bench/results/http.json``. Needs Linux
(``/proc``, CPU affinity) and, in its interpreter, toolpacks[http], fastmcp and locust.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_info, summary, table, write_json
from _http_servers import (
    BENCH,
    Server,
    connections_per_process,
    pin,
    start_fastmcp,
    start_toolpacks,
)

TOOLS = ("add", "add_sync")
REVISIONS = ("2025-11-25", "2026-07-28")
ALL_CPUS = set(range(os.cpu_count() or 1))
LOADGEN_CPU, SERVER_CPU = {0}, {1}
PINNED = ("toolpacks-w1", "fastmcp")
SHARED = ("toolpacks-w1", "toolpacks-w2", "toolpacks-w4")
EVENT_TIMEOUT = 120.0


class Agent:
    """The locust process (``locustfile_mcp.py --agent``), driven one JSON line at a time."""

    def __init__(self, scratch: Path) -> None:
        self.log = scratch / "locust.log"
        with self.log.open("w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, str(BENCH / "locustfile_mcp.py"), "--agent"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
            )
        self.pid = int(self.next_event("ready")["pid"])

    def next_event(self, expected: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the locust agent exited; its log:\n{self.log.read_text()}")
        event: dict[str, Any] = json.loads(line)
        if event.get("event") == "error":
            raise RuntimeError(f"the locust agent failed: {event['error']}")
        if event.get("event") != expected:
            raise RuntimeError(f"expected {expected!r} from the locust agent, got {event}")
        return event

    def send(self, command: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.send({"cmd": "quit"})
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def start_servers(scratch: Path) -> dict[str, Server]:
    """The four servers, started side by side (each waits for its own startup)."""
    starts: dict[str, Callable[[], Server]] = {"fastmcp": lambda: start_fastmcp(scratch)}
    for workers in (1, 2, 4):
        directory = scratch / f"w{workers}"
        directory.mkdir()
        starts[f"toolpacks-w{workers}"] = functools.partial(start_toolpacks, directory, workers)
    with ThreadPoolExecutor(len(starts)) as pool:
        futures = {name: pool.submit(start) for name, start in starts.items()}
    servers, failed = {}, []
    for name, future in futures.items():
        try:
            servers[name] = future.result()
        except RuntimeError as exc:
            failed.append(str(exc))
    if failed:
        for server in servers.values():
            server.stop()
        raise RuntimeError("\n".join(failed))
    return dict(sorted(servers.items()))


def run_case(
    agent: Agent,
    server: Server,
    tool: str,
    revision: str,
    args: argparse.Namespace,
    placement: str,
    *,
    warmup: float | None = None,
    duration: float | None = None,
) -> dict[str, Any]:
    """Place the processes, run one case, and return its figures."""
    if placement == "pinned":
        pin(server.pids(), SERVER_CPU)
        pin([agent.pid], LOADGEN_CPU)
    else:
        pin(server.pids(), ALL_CPUS)
        pin([agent.pid], ALL_CPUS)
    command = {
        "base": server.base,
        "tool": tool,
        "revision": revision,
        "users": args.users,
        "spawn_rate": args.users / args.ramp,
        "warmup": (args.warmup if warmup is None else warmup) + args.ramp,
        "duration": args.duration if duration is None else duration,
        "server_pid": server.pid,
    }
    agent.send(command)
    agent.next_event("measuring")
    workers = server.workers() or [server.pid]
    port = int(server.base.rsplit(":", 1)[1])
    spread = connections_per_process(workers, port)
    result: dict[str, Any] = agent.next_event("result")["result"]
    result["connections_per_worker"] = sorted(spread.values(), reverse=True)
    result.pop("ids", None)
    return result


def errors_of(run: dict[str, Any]) -> int:
    """Replies that were not right answers, warm-up and drain included, and calls unanswered."""
    return sum(n for k, n in run["outcomes"].items() if k != "ok") + run["unanswered"]


def figures(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """A case's figures over its rounds."""
    per_second = [x for r in runs for x in r["per_second"]]
    return {
        "calls_per_s": summary(r["calls_per_s"] for r in runs),
        "calls_per_cpu_s": summary(r["calls_per_s"] / max(r["server_cpu"], 1e-9) for r in runs),
        "per_second": summary(per_second),
        "p50_ms": summary(r["p50_ms"] for r in runs),
        "p99_ms": summary(r["p99_ms"] for r in runs),
        "errors": sum(errors_of(r) for r in runs),
        "error_kinds": dict(sum((Counter(r["outcomes"]) for r in runs), Counter())),
        "sent": sum(r["sent"] for r in runs),
        "server_cpu": summary(r["server_cpu"] for r in runs),
        "loadgen_cpu": summary(r["loadgen_cpu"] for r in runs),
        "connections_per_worker": [r["connections_per_worker"] for r in runs],
        "cpu_per_process": [[round(c, 2) for c in r["server_cpu_by_process"]] for r in runs],
    }


def key(placement: str, server: str, tool: str, revision: str) -> str:
    return f"{placement}/{server}/{tool}/{revision}"


def ratios(
    runs: dict[str, list[dict[str, Any]]], a: str, b: str, *, per_cpu: float | None = None
) -> dict[str, Any]:
    """Per-round ratio of case ``a``'s calls/s to case ``b``'s.

    With ``per_cpu``: of their calls per server CPU-second, times ``per_cpu`` (the cores ``a``
    would have to itself).
    """
    out = []
    for ra, rb in zip(runs[a], runs[b], strict=True):
        if not (ra["ok"] and rb["ok"] and ra["server_cpu"] > 0 and rb["server_cpu"] > 0):
            continue  # a round where a case stalled (its figures show it) gives no ratio
        if per_cpu is None:
            out.append(ra["calls_per_s"] / rb["calls_per_s"])
        else:
            eff_a = ra["calls_per_s"] / max(ra["server_cpu"], 1e-9)
            eff_b = rb["calls_per_s"] / max(rb["server_cpu"], 1e-9)
            out.append(per_cpu * eff_a / eff_b)
    return summary(out)


def fault_run(agent: Agent, server: Server, args: argparse.Namespace) -> dict[str, Any]:
    """SIGKILL one of two workers under load; what the clients saw, and the ledger check."""
    ledger = server.ledger
    assert ledger is not None
    ledger.unlink(missing_ok=True)
    try:
        pin(server.pids(), ALL_CPUS)
        pin([agent.pid], ALL_CPUS)
        duration = max(4.0, args.duration * 2)
        agent.send(
            {
                "base": server.base,
                "tool": "record",
                "revision": REVISIONS[0],
                "users": args.users,
                "spawn_rate": args.users / args.ramp,
                "warmup": 1.0 + args.ramp,
                "duration": duration,
                "server_pid": server.pid,
                "keep_ids": True,
            }
        )
        agent.next_event("measuring")
        time.sleep(duration * 0.4)
        before = server.workers()
        port = int(server.base.rsplit(":", 1)[1])
        spread = connections_per_process(before, port)
        victim = max(before, key=lambda pid: spread.get(pid, 0))
        os.kill(victim, signal.SIGKILL)
        killed_at = time.monotonic()
        replaced_after = None
        while time.monotonic() - killed_at < duration:
            now = server.workers()
            if victim not in now and len(now) == len(before):
                replaced_after = time.monotonic() - killed_at
                break
            time.sleep(0.05)
        result = agent.next_event("result")["result"]
        alive = server.proc.poll() is None
    finally:
        server.stop()
    executed = Counter(ledger.read_text().split()) if ledger.exists() else Counter()
    ids = result.pop("ids")
    ok, lost = ids.get("ok", []), ids.get("transport", [])
    refused = ids.get("refused", [])
    return {
        "workers": 2,
        "tool": "record",
        "revision": REVISIONS[0],
        "users": args.users,
        "duration_s": duration,
        "killed_at_s": round(duration * 0.4, 2),
        "victim_connections": spread.get(victim, 0),
        "connections_per_worker": sorted(spread.values(), reverse=True),
        "replacement_started_after_s": replaced_after,
        "supervisor_alive_after": alive,
        "sent": result["sent"],
        "answered_ok": len(ok),
        "no_answer": len(lost),
        "refused": len(refused),
        "unanswered_at_end": result["unanswered"],
        "unexpected_ids": result["unexpected_ids"],
        "client_errors": {k: n for k, n in result["outcomes"].items() if k != "ok"},
        "acknowledged_not_in_ledger": sum(1 for i in ok if i not in executed),
        "run_twice": sum(1 for n in executed.values() if n > 1),
        "no_answer_but_ran": sum(1 for i in lost if i in executed),
        "no_answer_never_ran": sum(1 for i in lost if i not in executed),
        "per_second": result["per_second"],
        "p50_ms": result["p50_ms"],
        "p99_ms": result["p99_ms"],
        "max_ms": result["max_ms"],
    }


def targets(
    fig: dict[str, Any], rat: dict[str, Any], fault: dict[str, Any] | None
) -> dict[str, Any]:
    """Each target of issue 15: the value measured (a median ratio, or a count) and whether met."""

    def at_least(ratio: dict[str, Any], bar: float) -> dict[str, Any]:
        value = ratio.get("median")
        return {"value": value, "met": value is not None and value >= bar, "unit": "x"}

    errors = sum(f["errors"] for f in fig.values())
    out: dict[str, Any] = {
        "zero errors under load": {"value": errors, "met": errors == 0, "unit": "errors"}
    }
    for tool in TOOLS:
        for rev in REVISIONS:
            out[f"w1 >= 1.3x FastMCP, calls/s ({tool}, {rev})"] = at_least(
                rat[f"w1_vs_fastmcp/{tool}/{rev}"], 1.3
            )
    for tool in TOOLS:
        for rev in REVISIONS:
            for how in ("measured", "cpu_normalised"):
                name = f"w2 >= 1.6x w1, {how.replace('_', '-')} ({tool}, {rev})"
                out[name] = at_least(rat[f"w2_vs_w1_{how}/{tool}/{rev}"], 1.6)
    if fault is not None:
        bad = fault["acknowledged_not_in_ledger"] + fault["run_twice"] + fault["unexpected_ids"]
        bad += fault["unanswered_at_end"]
        out["worker killed: nothing acknowledged lost or run twice"] = {
            "value": bad,
            "met": bad == 0 and fault["supervisor_alive_after"],
            "unit": "calls",
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="one short round (a smoke run)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=2.0, help="measured seconds a case")
    parser.add_argument(
        "--warmup", type=float, default=0.4, help="seconds between the ramp and the window"
    )
    parser.add_argument(
        "--ramp", type=float, default=0.5, help="seconds over which the users connect"
    )
    parser.add_argument("--users", type=int, default=32, help="concurrent locust users (K)")
    parser.add_argument("--no-fault", action="store_true", help="skip the fault run")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.duration = 1, 1.0
    if len(ALL_CPUS) < 2:
        print("bench_http.py needs at least 2 CPUs (one for the load generator)", file=sys.stderr)
        return 2
    started = time.monotonic()
    machine = machine_info(
        ("toolpacks", "mcp", "fastmcp", "locust", "uvicorn", "starlette", "pydantic")
    )
    with tempfile.TemporaryDirectory(prefix="bench-http-") as tmp:
        scratch = Path(tmp)
        servers: dict[str, Server] = {}
        agent = Agent(scratch)
        try:
            servers.update(start_servers(scratch))
            print(f"servers up after {time.monotonic() - started:.1f} s", flush=True)
            for server in servers.values():  # warm each (imports, first calls), unrecorded
                for tool in TOOLS:
                    run_case(agent, server, tool, REVISIONS[-1], args, "shared", duration=0.3)
            plan = [("pinned", s, t, r) for s in PINNED for t in TOOLS for r in REVISIONS]
            plan += [("shared", s, t, r) for s in SHARED for t in TOOLS for r in REVISIONS]
            runs: dict[str, list[dict[str, Any]]] = {key(*case): [] for case in plan}
            rng = random.Random(15)
            for round_no in range(args.rounds):
                order = plan[:]
                rng.shuffle(order)
                for placement, name, tool, rev in order:
                    result = run_case(agent, servers[name], tool, rev, args, placement)
                    runs[key(placement, name, tool, rev)].append(result)
                    if errors_of(result) or not result["ok"]:
                        print(
                            f"  {key(placement, name, tool, rev)}: {result['ok']} answered, "
                            f"{result['outcomes']}, {result['unanswered']} unanswered",
                            flush=True,
                        )
                print(
                    f"round {round_no + 1}/{args.rounds} done at "
                    f"{time.monotonic() - started:.0f} s",
                    flush=True,
                )
            for name, server in servers.items():
                if name != "toolpacks-w2":
                    server.stop()
            fault = None if args.no_fault else fault_run(agent, servers["toolpacks-w2"], args)
        finally:
            agent.close()
            for server in servers.values():
                server.stop()
    fig = {k: figures(v) for k, v in runs.items()}
    rat: dict[str, Any] = {}
    for tool in TOOLS:
        for rev in REVISIONS:
            w1_pinned = key("pinned", "toolpacks-w1", tool, rev)
            fastmcp = key("pinned", "fastmcp", tool, rev)
            rat[f"w1_vs_fastmcp/{tool}/{rev}"] = ratios(runs, w1_pinned, fastmcp)
            rat[f"w1_vs_fastmcp_per_cpu/{tool}/{rev}"] = ratios(runs, w1_pinned, fastmcp, per_cpu=1)
            w1_shared = key("shared", "toolpacks-w1", tool, rev)
            for n in (2, 4):
                wn = key("shared", f"toolpacks-w{n}", tool, rev)
                rat[f"w{n}_vs_w1_measured/{tool}/{rev}"] = ratios(runs, wn, w1_shared)
            wn = key("shared", "toolpacks-w2", tool, rev)
            rat[f"w2_vs_w1_cpu_normalised/{tool}/{rev}"] = ratios(runs, wn, w1_pinned, per_cpu=2)
    data = {
        "machine": machine,
        "settings": {
            "users": args.users,
            "rounds": args.rounds,
            "ramp_s": args.ramp,
            "warmup_s": args.warmup,
            "duration_s": args.duration,
            "cpus": sorted(ALL_CPUS),
            "pinned": {"server": sorted(SERVER_CPU), "loadgen": sorted(LOADGEN_CPU)},
            "loadgen": "locust FastHttpUser, one process (gevent), library API",
        },
        "figures": fig,
        "ratios": rat,
        "fault": fault,
        "targets": targets(fig, rat, fault),
        "wall_s": round(time.monotonic() - started, 1),
    }
    path = write_json("http.json", data)
    print_summary(data)
    print(f"wrote {path} in {data['wall_s']} s")
    return 0


def print_summary(data: dict[str, Any]) -> None:
    rows = []
    for name, f in data["figures"].items():
        rows.append(
            [
                name,
                f"{f['calls_per_s']['median']:.0f}",
                f"{f['calls_per_cpu_s']['median']:.0f}",
                f"{f['per_second']['q1']:.0f}-{f['per_second']['q3']:.0f}",
                f"{f['p50_ms']['median']:.1f}",
                f"{f['p99_ms']['median']:.1f}",
                str(f["errors"]),
                f"{f['server_cpu']['median']:.2f}",
                f"{f['loadgen_cpu']['median']:.2f}",
            ]
        )
    headers = [
        "case",
        "calls/s",
        "/CPU-s",
        "per-s IQR",
        "p50 ms",
        "p99 ms",
        "errors",
        "srv CPU",
        "lg CPU",
    ]
    print(table(headers, rows))
    for name, t in data["targets"].items():
        value = "n/a" if t["value"] is None else f"{t['value']:.2f}"
        print(f"{'met   ' if t['met'] else 'MISSED'}  {name}: {value}")
    if data["fault"]:
        print(json.dumps({k: v for k, v in data["fault"].items() if k != "per_second"}))


if __name__ == "__main__":
    raise SystemExit(main())
