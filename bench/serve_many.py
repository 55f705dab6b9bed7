"""``toolpacks serve`` of 10^4 and 10^5 tools: spawn -> ``tools/list`` reply, and memory (issue 24).

The packs are generated wheels installed with uv (``bench_startup.install``): 20 packs x 500
tools and 100 packs x 1,000 tools. A first serve imports them and writes their manifests;
every timed run lists from the manifests (no pack is imported). A run is timed from spawn
to the whole ``tools/list`` reply read (``initialize`` first); the server's peak resident
memory (``VmHWM`` in ``/proc``) is read before it is stopped. Repeats are interleaved.

Targets: 10^4 tools <= 1.0 s; 10^5 tools <= 10 s and <= 0.5 GiB.

Usage: ``.venv/bin/python bench/serve_many.py [--repeats N] [--skip-100k]``; writes
``bench/results/serve_many.json``. Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_info, summary, table, write_json
from bench_startup import HELLO, install

SETS = {"10^4": (20, 500, 1.0, None), "10^5": (100, 1000, 10.0, 0.5)}
"""Name: (packs, tools per pack, seconds target, GiB target)."""


def _send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def _reply(proc: subprocess.Popen[bytes], request_id: int) -> dict[str, Any]:
    assert proc.stdout is not None
    while line := proc.stdout.readline():
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == request_id:
            return message
    raise RuntimeError(f"the server exited without answering request {request_id}")


def _peak_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def timed_listing(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, int, int]:
    """Seconds from spawn to the ``tools/list`` reply, the tools listed, peak RSS in bytes."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=env, cwd=cwd,
    )  # fmt: skip
    try:
        _send(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HELLO})
        _reply(proc, 0)
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        listed = _reply(proc, 1)
        elapsed = time.perf_counter() - started
        return elapsed, len(listed["result"]["tools"]), _peak_bytes(proc.pid)
    finally:
        proc.kill()
        proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-100k", action="store_true", help="only 10^4 tools")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="toolpacks-serve-many-"))
    cwd = str(work / "cwd")
    os.makedirs(cwd)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TOOLPACKS_"))}
    base["TOOLPACKS_CACHE_DIR"] = str(work / "cache")
    serve = [sys.executable, "-m", "toolpacks", "serve"]
    sets = {k: v for k, v in SETS.items() if not (args.skip_100k and k == "10^5")}
    envs: dict[str, dict[str, str]] = {}
    for name, (packs, tools, _, _) in sets.items():
        print(f"installing {packs} packs x {tools} tools ...", flush=True)
        site = work / f"site-{packs}"
        install(site, packs, tools, work)
        env = {**base, "PYTHONPATH": str(site)}
        env["TOOLPACKS_PACKS"] = ",".join(f"p{p:03d}" for p in range(packs))
        first, count, _ = timed_listing(serve, env, cwd)  # imports the packs, writes manifests
        if count != packs * tools:
            raise RuntimeError(f"{name}: listed {count} tools, expected {packs * tools}")
        print(f"{name}: first serve (imports, manifests) {first:.1f} s", flush=True)
        envs[name] = env
    seconds: dict[str, list[float]] = {name: [] for name in sets}
    peaks: dict[str, list[int]] = {name: [] for name in sets}
    names = list(sets)
    rng = random.Random(24)
    for repeat in range(args.repeats):
        print(f"repeat {repeat + 1}/{args.repeats}", flush=True)
        rng.shuffle(names)
        for name in names:
            elapsed, _, peak = timed_listing(serve, envs[name], cwd)
            seconds[name].append(elapsed)
            peaks[name].append(peak)
    shutil.rmtree(work, ignore_errors=True)
    result: dict[str, Any] = {"machine": machine_info(("toolpacks",)), "cases": {}}
    rows = []
    for name, (_, _, limit_s, limit_gib) in sets.items():
        fig = summary(seconds[name])
        gib = max(peaks[name]) / 2**30
        met = fig["median"] <= limit_s and (limit_gib is None or gib <= limit_gib)
        result["cases"][name] = {
            "seconds": fig,
            "peak_gib": gib,
            "limit_s": limit_s,
            "limit_gib": limit_gib,
            "met": met,
        }
        rows.append(
            [
                name,
                f"{fig['median']:.2f} s",
                f"{fig['min']:.2f}-{fig['max']:.2f}",
                f"{gib:.2f} GiB",
                f"<= {limit_s} s" + (f", <= {limit_gib} GiB" if limit_gib else ""),
                "met" if met else "missed",
            ]
        )
    print(table(["tools", "spawn -> tools/list", "spread", "peak RSS", "target", ""], rows))
    print(f"wrote {write_json('serve_many.json', result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
