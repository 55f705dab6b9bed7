"""A worker SIGKILLed under load: how fast calls/s come back, and who takes the load (issue 24).

``toolpacks serve --http 127.0.0.1:0 --workers 2`` serves the HTTP benchmark's pack
(``_http_servers.py``); this process is the load: ``--users`` clients, each on one keep-alive
connection, sending ``tools/call add`` POSTs back to back (2025-11-25, JSON replies, every
reply checked). A client whose connection breaks or is closed by the server opens a new one.

Each run: a warm-up, a ``--before`` s window (the pre-kill rate), then the worker holding the
most connections is SIGKILLed, and ``--after`` s more are measured. Reported per run:

* ``pre_rate``: calls/s over the pre-kill window;
* ``recovered_after_s``: seconds from the kill to the end of the first 1 s window whose rate is
  at least 90 % of ``pre_rate`` (target: <= 5 s);
* ``rate_ratio_by_second``: each second after the kill, its calls/s over ``pre_rate``;
* ``replacement_listening_after_s``: seconds from the kill until a new worker listens on the
  port (its own socket: with ``SO_REUSEPORT`` a worker listens only once it can answer; with
  one shared socket the replacement holds it from birth, so this is not measured then);
* ``replacement_share``: the replacement's share of the server's established connections at
  the end (the survivor keeps the clients that stayed connected to it);
* ``calls_per_cpu_s`` before and after: calls over the CPU seconds the server's processes
  used in the window (two workers and the load share two cores here, so calls/s alone
  understates what a worker on a core of its own would do).

Every round runs each tree (``--src`` adds an older checkout's ``src`` to compare with, e.g. a
``git worktree`` of the commit before the change) once, in a shuffled order; figures are the
median and spread over rounds. Needs Linux (``/proc``).

Usage: ``.venv/bin/python bench/workers_fault.py [--rounds 3] [--users 16] [--src OLD/src]
[--new-src NEW/src]`` (``--new-src``: a snapshot of this checkout's ``src``, so that edits made
during the run do not reach one side only); writes ``bench/results/workers_fault.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_info, summary, table, write_json
from _http_servers import Server, connections_per_process, write_pack

BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
    }
).encode()
BUCKET = 0.1
"""Seconds per bucket of the completion histogram."""


def start(scratch: Path, src: str | None, name: str) -> Server:
    """``toolpacks serve --http --workers 2`` with ``src`` (when given) first on the path."""
    config = write_pack(scratch)
    path = [str(scratch)] + ([src] if src else [])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "PYTHONHASHSEED": "0"}
    argv = [sys.executable, "-m", "toolpacks", "serve", "--config", str(config)]
    argv += ["--agent", "bench", "--http", "127.0.0.1:0", "--workers", "2"]
    return Server(f"w2-{name}", argv, env, scratch)


# -- the load ---------------------------------------------------------------------------------


class Load:
    """``users`` keep-alive clients calling ``add`` back to back; completions by time bucket."""

    def __init__(self, port: int, users: int) -> None:
        self.port = port
        self.users = users
        self.t0 = time.monotonic()
        self.done: list[int] = []
        self.errors = 0
        self.reconnects = 0
        self.stop = False
        head = (
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\n"
            "MCP-Protocol-Version: 2025-11-25\r\n"
            f"Content-Length: {len(BODY)}\r\n\r\n"
        )
        self.request = head.encode() + BODY

    def _count(self) -> None:
        slot = int((time.monotonic() - self.t0) / BUCKET)
        while len(self.done) <= slot:
            self.done.append(0)
        self.done[slot] += 1

    async def _user(self) -> None:
        while not self.stop:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                self.errors += 1
                await asyncio.sleep(0.01)
                continue
            try:
                await self._session(reader, writer)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                self.errors += 1
            finally:
                writer.close()
                self.reconnects += 1

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while not self.stop:
            writer.write(self.request)
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").lower().split("\r\n")
            length = next(int(x.split(":", 1)[1]) for x in lines if x.startswith("content-length"))
            body = await reader.readexactly(length)
            if not lines[0].startswith("http/1.1 200") or b'"result"' not in body:
                raise ValueError(f"bad reply: {lines[0]} {body[:200]!r}")
            self._count()
            if "connection: close" in lines:
                return

    def rate(self, start: float, end: float) -> float:
        """Calls/s completed between ``start`` and ``end`` (seconds since the load began)."""
        first, last = int(start / BUCKET), int(end / BUCKET)
        return sum(self.done[first:last]) / (end - start)


def cpu_seconds(pids: list[int]) -> float:
    """utime + stime of ``pids`` (from /proc; a gone process counts 0)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def children_of(pid: int) -> list[int]:
    """The children of ``pid``'s main thread (Linux's ``/proc/PID/task/PID/children``)."""
    with contextlib.suppress(OSError):
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    return []


def listening_pids(pids: list[int], port: int) -> set[int]:
    """Those of ``pids`` holding a socket listening on ``port``."""
    inodes = set()
    for table_path in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for row in Path(table_path).read_text().splitlines()[1:]:
                cols = row.split()
                if int(cols[1].rsplit(":", 1)[1], 16) == port and cols[3] == "0A":
                    inodes.add(cols[9])
    found = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if target.startswith("socket:[") and target[8:-1] in inodes:
                        found.add(pid)
    return found


# -- one run ----------------------------------------------------------------------------------


def one_run(src: str | None, name: str, args: argparse.Namespace) -> dict[str, Any]:
    """Start a server, load it, kill a worker, measure; the run's figures."""
    with tempfile.TemporaryDirectory(prefix="workers-fault-") as scratch:
        server = start(Path(scratch), src, name)
        try:
            return asyncio.run(_measure(server, args))
        finally:
            server.stop()


async def _measure(server: Server, args: argparse.Namespace) -> dict[str, Any]:
    port = int(server.base.rsplit(":", 1)[1])
    load = Load(port, args.users)
    users = [asyncio.ensure_future(load._user()) for _ in range(args.users)]
    await asyncio.sleep(args.warmup)
    before = server.workers()
    tree = [server.pid, *before]
    pre_start = time.monotonic() - load.t0
    cpu0 = cpu_seconds(tree)
    await asyncio.sleep(args.before)
    pre_end = time.monotonic() - load.t0
    cpu1 = cpu_seconds(tree)
    spread = connections_per_process(before, port)
    victim = max(before, key=lambda pid: spread.get(pid, 0))
    os.kill(victim, signal.SIGKILL)
    killed = time.monotonic()
    kill_at = killed - load.t0
    survivor = [pid for pid in before if pid != victim]
    listening_after: list[float] = []
    watching = threading.Event()

    def watch() -> None:
        # In a thread of the load's process, so kept cheap (a scan of all of /proc every few
        # ms took the load's GIL enough to halve its rate): the supervisor's children only.
        while not watching.is_set() and time.monotonic() - killed < args.after:
            new = [p for p in children_of(server.pid) if p not in before]
            if new and listening_pids(new, port):
                listening_after.append(time.monotonic() - killed)
                return
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    await asyncio.sleep(0.5)
    after_workers = server.workers()
    post_tree = [server.pid, *after_workers]
    cpu2 = cpu_seconds(post_tree)
    post_cpu_from = time.monotonic() - load.t0
    await asyncio.sleep(args.after - 0.5)
    end = time.monotonic() - load.t0
    after_workers = server.workers()
    cpu3 = cpu_seconds([server.pid, *after_workers])
    spread_after = connections_per_process(after_workers, port)
    load.stop = True
    watching.set()
    for task in users:
        task.cancel()
    await asyncio.gather(*users, return_exceptions=True)
    pre_rate = load.rate(pre_start, pre_end)
    recovered = None
    t = kill_at
    while t + 1.0 <= end:
        if load.rate(t, t + 1.0) >= 0.9 * pre_rate:
            recovered = t + 1.0 - kill_at
            break
        t += BUCKET
    replacement = [p for p in after_workers if p not in before]
    total_after = sum(spread_after.values()) or 1
    return {
        "pre_rate": pre_rate,
        "post_rate": load.rate(kill_at + 1.0, end),
        "recovered_after_s": recovered,
        "rate_ratio_by_second": [
            round(load.rate(kill_at + s, kill_at + s + 1.0) / pre_rate, 3)
            for s in range(int(end - kill_at))
        ],
        "replacement_listening_after_s": listening_after[0] if listening_after else None,
        "replacement_share": sum(spread_after.get(p, 0) for p in replacement) / total_after,
        "connections_after": {
            "survivor": sum(spread_after.get(p, 0) for p in survivor),
            "replacement": sum(spread_after.get(p, 0) for p in replacement),
        },
        "calls_per_cpu_s_before": load.rate(pre_start, pre_end) * (pre_end - pre_start)
        / max(cpu1 - cpu0, 1e-9),
        "calls_per_cpu_s_after": load.rate(post_cpu_from, end) * (end - post_cpu_from)
        / max(cpu3 - cpu2, 1e-9),
        "server_cpus_before": (cpu1 - cpu0) / (pre_end - pre_start),
        "server_cpus_after": (cpu3 - cpu2) / (end - post_cpu_from),
        "client_errors": load.errors,
        "reconnects": load.reconnects,
    }


# -- rounds and the report --------------------------------------------------------------------

FIELDS = (
    "pre_rate",
    "post_rate",
    "recovered_after_s",
    "replacement_listening_after_s",
    "replacement_share",
    "calls_per_cpu_s_before",
    "calls_per_cpu_s_after",
    "server_cpus_before",
    "server_cpus_after",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--users", type=int, default=16)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--before", type=float, default=4.0)
    parser.add_argument("--after", type=float, default=8.0)
    parser.add_argument("--src", help="an older checkout's src directory to compare with")
    parser.add_argument("--new-src", help="the src directory measured as new (default: installed)")
    args = parser.parse_args(argv)
    trees = {"new": args.new_src} | ({"old": args.src} if args.src else {})
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for round_no in range(args.rounds):
        order = list(trees)
        random.shuffle(order)
        for name in order:
            run = one_run(trees[name], name, args)
            runs[name].append(run)
            print(f"round {round_no + 1} {name}: " + json.dumps(run), flush=True)
    figures = {
        name: {
            field: summary(r[field] for r in rs if r[field] is not None) for field in FIELDS
        }
        | {"never_recovered": sum(1 for r in rs if r["recovered_after_s"] is None)}
        for name, rs in runs.items()
    }
    rows = []
    for name, fig in figures.items():
        for field in FIELDS:
            s = fig[field]
            if s.get("n"):
                spread = f"[{s['min']:.3g}-{s['max']:.3g}]"
                rows.append([name, field, f"{s['median']:.3g}", spread, str(s["n"])])
            else:
                rows.append([name, field, "-", "-", "0"])
    print(table(["tree", "figure", "median", "min-max", "runs"], rows))
    path = write_json(
        "workers_fault.json",
        {"machine": machine_info(), "args": vars(args), "figures": figures, "runs": runs},
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
