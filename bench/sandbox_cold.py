"""The sandbox's cost (issue 32): an isolated pack's cold start and its calls, with and without.

Cases, paired and interleaved (each repeat runs both, in shuffled order):

* ``cold``: a fresh host with ``[packs.benchiso] isolate = {...}`` whose manifest exists,
  timed from ``Host()`` to the first call's result (the child started, handshake, one call),
  with ``sandbox = "off"`` and with the sandbox (Landlock rules + PID namespace);
* ``call``: the mean of a batch of calls to a running child, both ways.

Target: the sandbox adds <= 20 % to a cold start and nothing measurable per call.
Run: ``.venv/bin/python bench/sandbox_cold.py [repeats]``; writes bench/results/sandbox_cold.json.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

PACK = """
from toolpacks import hookimpl, tool

@tool
def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b

@hookimpl
def register_tools(register):
    register(add)
"""
BATCH = 200


def _site(root: Path) -> Path:
    site = root / "site"
    info = site / "toolpacks_benchiso-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "benchiso.py").write_text(textwrap.dedent(PACK), encoding="utf-8")
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toolpacks-benchiso\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text("[toolpacks]\nbenchiso = benchiso\n", encoding="utf-8")
    return site


def _cold(site: Path, mode: str) -> float:
    from toolpacks import Host

    config = {"packs": {"benchiso": {"isolate": {"sandbox": mode}}}}
    start = time.perf_counter()
    with Host(config, path=[str(site)]) as host:
        result = asyncio.run(host.toolset(packs=["benchiso"]).call("add", {"a": 1, "b": 2}))
        took = time.perf_counter() - start
    assert result.value == 3, result
    return took


def _calls(site: Path, mode: str) -> float:
    from toolpacks import Host

    config = {"packs": {"benchiso": {"isolate": {"sandbox": mode}}}}
    with Host(config, path=[str(site)]) as host:
        toolset = host.toolset(packs=["benchiso"])

        async def batch() -> float:
            await toolset.call("add", {"a": 1, "b": 2})  # started
            start = time.perf_counter()
            for _ in range(BATCH):
                await toolset.call("add", {"a": 1, "b": 2})
            return (time.perf_counter() - start) / BATCH

        return asyncio.run(batch())


def main(repeats: int = 15) -> dict[str, Any]:
    """Run the paired cases ``repeats`` times and print (and save) the medians."""
    root = Path(tempfile.mkdtemp(prefix="bench-sandbox-"))
    site = _site(root)
    _cold(site, "off")  # writes the manifest both modes share
    cold: dict[str, list[float]] = {"off": [], "auto": []}
    call: dict[str, list[float]] = {"off": [], "auto": []}
    ratios: list[float] = []
    for _ in range(repeats):
        order = ["off", "auto"]
        random.shuffle(order)
        got = {mode: _cold(site, mode) for mode in order}
        for mode in order:
            cold[mode].append(got[mode])
        ratios.append(got["auto"] / got["off"])
    for _ in range(max(3, repeats // 3)):
        order = ["off", "auto"]
        random.shuffle(order)
        for mode in order:
            call[mode].append(_calls(site, mode))
    med = statistics.median
    report = {
        "repeats": repeats,
        "cold_off_ms": round(med(cold["off"]) * 1000, 1),
        "cold_sandbox_ms": round(med(cold["auto"]) * 1000, 1),
        "cold_ratio_median_of_pairs": round(med(ratios), 3),
        "call_off_us": round(med(call["off"]) * 1e6, 1),
        "call_sandbox_us": round(med(call["auto"]) * 1e6, 1),
        "call_ratio": round(med(call["auto"]) / med(call["off"]), 3),
    }
    print(json.dumps(report, indent=1))
    out = Path(__file__).parent / "results" / "sandbox_cold.json"
    out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return report


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
