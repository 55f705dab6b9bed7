"""Shared helpers of the benchmark scripts: timing, statistics, machine info.

Measurements on a small, noisy machine follow three rules here:

* the things being compared are measured *interleaved*: each repeat times one batch of every
  case, in a shuffled order, so a burst of noise hits all cases of that repeat alike;
* every figure is a median over repeats, reported with its spread (quartiles and min/max);
* ratios to a floor are computed *per repeat* (a case's batch against the floor's batch of the
  same repeat) and then summarised, which cancels slow drifts of the machine.

As in ``timeit``, the garbage collector is paused while a batch runs (and collected before;
survivors are frozen so that collecting stays cheap however much the libraries import).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"

AsyncBatch = Callable[[int], Awaitable[None]]
"""``await batch(n)`` runs ``n`` calls of one case back to back."""
SyncBatch = Callable[[int], None]


def summary(samples: Iterable[float]) -> dict[str, float | int]:
    """Median, quartiles, IQR, min, max and count of ``samples``."""
    data = sorted(samples)
    if not data:
        return {"n": 0}
    if len(data) >= 4:
        q1, _, q3 = statistics.quantiles(data, n=4, method="inclusive")
    else:
        q1, q3 = data[0], data[-1]
    return {
        "median": statistics.median(data),
        "q1": q1,
        "q3": q3,
        "iqr": q3 - q1,
        "min": data[0],
        "max": data[-1],
        "n": len(data),
    }


def _settle_gc() -> None:
    # Collect, then move every survivor to the permanent generation: later collections (and the
    # next settle) no longer walk the hundreds of thousands of objects the libraries import.
    gc.collect()
    gc.freeze()


def _timed_batch(fn: Callable[[], Any]) -> float:
    _settle_gc()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    finally:
        if was_enabled:
            gc.enable()


async def _timed_abatch(batch: AsyncBatch, number: int) -> float:
    _settle_gc()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        await batch(number)
        return time.perf_counter() - t0
    finally:
        if was_enabled:
            gc.enable()


async def calibrate_async(batch: AsyncBatch, target_s: float = 0.02, cap: int = 200_000) -> int:
    """A batch size for which ``batch`` takes about ``target_s`` seconds."""
    number = 1
    while True:
        elapsed = await _timed_abatch(batch, number)
        if elapsed >= target_s / 4 or number >= cap:
            break
        number *= 4
    per_call = elapsed / number
    return max(1, min(cap, int(target_s / per_call))) if per_call > 0 else cap


def calibrate_sync(fn: Callable[[], Any], target_s: float = 0.02, cap: int = 10_000) -> int:
    """A batch size for which ``fn()`` called ``number`` times takes about ``target_s``."""
    number = 1
    while True:

        def run(n: int = number) -> None:
            for _ in range(n):
                fn()

        elapsed = _timed_batch(run)
        if elapsed >= target_s / 4 or number >= cap:
            break
        number *= 4
    per_call = elapsed / number
    return max(1, min(cap, int(target_s / per_call))) if per_call > 0 else cap


async def interleave_async(
    cases: dict[str, AsyncBatch],
    *,
    repeats: int,
    numbers: dict[str, int],
    seed: int = 0,
) -> dict[str, list[float]]:
    """Per-call seconds of each case, one sample per repeat, cases interleaved and shuffled."""
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {name: [] for name in cases}
    names = list(cases)
    for _ in range(repeats):
        rng.shuffle(names)
        for name in names:
            number = numbers[name]
            samples[name].append(await _timed_abatch(cases[name], number) / number)
    return samples


def interleave_sync(
    cases: dict[str, Callable[[], Any]],
    *,
    repeats: int,
    numbers: dict[str, int],
    seed: int = 0,
) -> dict[str, list[float]]:
    """Per-call seconds of each sync case, one sample per repeat, interleaved and shuffled."""
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {name: [] for name in cases}
    names = list(cases)
    for _ in range(repeats):
        rng.shuffle(names)
        for name in names:
            fn, number = cases[name], numbers[name]

            def run(fn: Callable[[], Any] = fn, number: int = number) -> None:
                for _ in range(number):
                    fn()

            samples[name].append(_timed_batch(run) / number)
    return samples


def paired_ratios(case: list[float], floor: list[float]) -> list[float]:
    """Per-repeat ratios of a case to its floor (the samples of the same repeats)."""
    return [c / f for c, f in zip(case, floor, strict=True) if f > 0]


def figure(
    samples: list[float], floor: list[float] | None = None, *, scale: float = 1e6
) -> dict[str, Any]:
    """A figure: summary of samples in microseconds (by default) and, with a floor, the ratio."""
    out: dict[str, Any] = {"unit": "us" if scale == 1e6 else ("ms" if scale == 1e3 else "s")}
    out.update({k: (v * scale if k != "n" else v) for k, v in summary(samples).items()})
    if floor is not None:
        ratios = paired_ratios(samples, floor)
        out["ratio"] = summary(ratios)
        out["overhead_us"] = (statistics.median(samples) - statistics.median(floor)) * 1e6
    return out


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def version_of(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def machine_info(
    dists: Iterable[str] = ("toolpacks", "pydantic", "pydantic-core"),
) -> dict[str, Any]:
    """CPU model, cores, Python and OS, and the versions of ``dists``."""
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "os": platform.platform(),
        "loadavg_at_start": load,
        "versions": {d: version_of(d) for d in dists},
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def write_json(name: str, data: Any) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / name
    path.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return path


def fmt_us(fig: dict[str, Any]) -> str:
    """``12.3 us [11.9-13.0]`` (median [q1-q3])."""
    return f"{fig['median']:.2f} [{fig['q1']:.2f}-{fig['q3']:.2f}]"


def fmt_ratio(fig: dict[str, Any]) -> str:
    r = fig.get("ratio")
    if not r or not r.get("n"):
        return "-"
    return f"{r['median']:.2f}x [{r['q1']:.2f}-{r['q3']:.2f}]"


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A plain-text table for the terminal."""
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows, strict=False)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out.extend("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows)
    return "\n".join(out)


def run_subprocess_timed(
    argv: list[str], env: dict[str, str] | None = None, cwd: str | None = None
) -> float:
    """Wall time of a subprocess (seconds); raises if it fails."""
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(
            f"{argv!r} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-500:]}"
        )
    return elapsed


def python_exe() -> str:
    return sys.executable


def run_loop(coro: Awaitable[Any]) -> Any:
    return asyncio.run(coro)  # type: ignore[arg-type]
