"""Listing installed packs: cost beyond interpreter start, cold and warm, vs importlib.metadata.

For N in (10, 100, 1000) this writes N fake installed packs into a temporary site directory:
``tp_bench_pack_<i>-1.0.<i>.dist-info/`` (METADATA, WHEEL, RECORD, entry_points.txt declaring
``pack<i> = tp_bench_pack_<i>``) beside a real module ``tp_bench_pack_<i>.py`` whose import is
detectable (it sets ``IMPORTED = True`` and bumps a counter on ``builtins``). Each sample is a
fresh subprocess with that directory on ``PYTHONPATH`` (the dev venv's site-packages is scanned
too, as in real use); cases are run interleaved and shuffled in each repeat:

* ``start``: ``python -c pass``, the floor;
* ``import``: ``import toolpacks.packs.entrypoints._discovery`` only (the packages,
  dataclasses, json);
* ``cold``: ``toolpacks.packs.entrypoints._discovery.discover()`` with
  ``TOOLPACKS_NO_CACHE=1`` (import + scan);
* ``warm``: the same with the cache primed (the site directory's mtime is set an hour back,
  since a directory changed in the last 2 s is never cached);
* ``importlib``: ``importlib.metadata.entry_points(group="toolpacks")``, for comparison.

Bytecode is cached (``PYTHONPYCACHEPREFIX`` in the temporary directory, written by the dropped
first round) as for an installed package. Figures are per-repeat differences to ``start`` (ms),
summarised as median [q1-q3] (min-max).
A separate check run per N asserts that every pack is found and no pack module was imported,
and records the in-process time of ``discover()`` itself.

Usage: ``python bench/bench_discovery.py [--repeats 7] [--sizes 10,100,1000]``; writes
``bench/results/discovery.json``. Target: ``cold`` under 100 ms beyond start at N=1000.
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

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"

CASES: dict[str, str] = {
    "start": "pass",
    "import": "import toolpacks.packs.entrypoints._discovery",
    "cold": "import toolpacks.packs.entrypoints._discovery as d; d.discover()",
    "warm": "import toolpacks.packs.entrypoints._discovery as d; d.discover()",
    "importlib": "from importlib.metadata import entry_points; entry_points(group='toolpacks')",
}

CHECK = """\
import builtins, json, sys, time
t0 = time.perf_counter()
import toolpacks.packs.entrypoints._discovery as d
t1 = time.perf_counter()
cold = d.discover(use_cache=False)
t2 = time.perf_counter()
d.discover()  # writes the cache
t3 = time.perf_counter()
warm = d.discover()
t4 = time.perf_counter()
print(json.dumps({
    "found": sum(e.name.startswith("pack") for e in cold.entries),
    "warm_found": sum(e.name.startswith("pack") for e in warm.entries),
    "warm_from_cache": warm.from_cache,
    "clashes": len(cold.clashes),
    "imported_packs": sorted(m for m in sys.modules if m.startswith("tp_bench_pack_")),
    "import_counter": getattr(builtins, "tp_bench_imports", 0),
    "heavy": sorted(m for m in ("pydantic", "pluggy", "importlib.metadata") if m in sys.modules),
    "import_ms": (t1 - t0) * 1e3,
    "discover_cold_ms": (t2 - t1) * 1e3,
    "discover_warm_ms": (t4 - t3) * 1e3,
    "path_entries": len(sys.path),
    "peak_rss_kib": __import__("resource").getrusage(__import__("resource").RUSAGE_SELF).ru_maxrss,
}))
"""

MODULE = """\
import builtins
builtins.tp_bench_imports = getattr(builtins, "tp_bench_imports", 0) + 1
IMPORTED = True

from toolpacks import hookimpl


def ping() -> str:
    \"\"\"Answer pong.\"\"\"
    return "pong"


@hookimpl
def register_tools(register):
    register(ping)
"""

TOOLSET = """\
import builtins, sys
from toolpacks import Host
toolset = Host({}).toolset(packs=["pack0"])
assert toolset.names() == ["ping"], toolset.names()
imported = sorted(m for m in sys.modules if m.startswith("tp_bench_pack_"))
assert imported == ["tp_bench_pack_0"], imported
assert builtins.tp_bench_imports == 1
"""


def toolset_case(site: Path, n: int) -> str | None:
    """Hook: code that builds a toolset from one pack, to time once the host exists.

    Return a ``python -c`` program (run with ``site`` on the path) to add it as the case
    ``toolset``; ``None`` leaves it out. The pack ``pack0`` (module ``tp_bench_pack_0``) is
    installed in every size. The program checks that only that pack was imported.
    """
    return TOOLSET


def make_site(root: Path, n: int) -> Path:
    """``n`` fake installed packs (metadata and a tiny module each) in ``root/site-<n>``."""
    site = root / f"site-{n}"
    site.mkdir()
    for i in range(n):
        name = f"tp_bench_pack_{i}"
        meta = site / f"{name}-1.0.{i}.dist-info"
        meta.mkdir()
        description = "A benchmark pack.\n\n" + "Some long description text.\n" * 40
        (meta / "METADATA").write_text(
            f"Metadata-Version: 2.3\nName: tp-bench-pack-{i}\nVersion: 1.0.{i}\n"
            "Summary: benchmark pack\nRequires-Python: >=3.11\nRequires-Dist: toolpacks\n"
            f"Description-Content-Type: text/markdown\n\n{description}",
            encoding="utf-8",
        )
        (meta / "WHEEL").write_text("Wheel-Version: 1.0\nGenerator: bench\n", encoding="utf-8")
        (meta / "RECORD").write_text(f"{name}.py,,\n{meta.name}/METADATA,,\n", encoding="utf-8")
        (meta / "entry_points.txt").write_text(
            f"[console_scripts]\n{name} = {name}:main\n\n[toolpacks]\npack{i} = {name}\n",
            encoding="utf-8",
        )
        (site / f"{name}.py").write_text(MODULE, encoding="utf-8")
    past = time.time() - 3600  # an install that happened earlier: cacheable (not racy-fresh)
    os.utime(site, (past, past))
    return site


def env_for(site: Path, cache: Path, *, no_cache: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLPACKS_")}
    # An installed toolpacks has .pyc files; let the dropped first round write them (in a
    # temporary prefix, not the source tree) instead of compiling src/ in every sample.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(cache.parent / "pycache")
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(site)])
    env["TOOLPACKS_CACHE_DIR"] = str(cache)
    if no_cache:
        env["TOOLPACKS_NO_CACHE"] = "1"
    return env


def run(code: str, env: dict[str, str], cwd: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    argv = [sys.executable, "-c", code]
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{code!r} exited {proc.returncode}: {proc.stderr[-800:]}")
    return elapsed, proc.stdout


def measure(site: Path, cache: Path, cwd: Path, n: int, repeats: int) -> dict[str, Any]:
    """Check run, then ``repeats`` interleaved rounds of every case; figures in ms."""
    cases = dict(CASES)
    extra = toolset_case(site, n)
    if extra is not None:
        cases["toolset"] = extra
    envs = {name: env_for(site, cache, no_cache=(name == "cold")) for name in cases}
    _, out = run(CHECK, envs["warm"], cwd)  # also primes the cache for "warm"
    check = json.loads(out)
    assert check["found"] == n, check
    assert check["warm_from_cache"], check
    assert check["warm_found"] == n, check
    assert check["imported_packs"] == [], check
    assert check["import_counter"] == 0, check
    assert check["heavy"] == [], check
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for repeat in range(repeats + 1):  # the first round warms the OS caches and is dropped
        order = list(cases)
        random.shuffle(order)
        for name in order:
            elapsed, _ = run(cases[name], envs[name], cwd)
            if repeat:
                samples[name].append(elapsed)
    start = samples["start"]
    figures: dict[str, Any] = {"start_ms": summary([s * 1e3 for s in start])}
    for name in cases:
        if name != "start":
            beyond = [(s - f) * 1e3 for s, f in zip(samples[name], start, strict=True)]
            figures[name] = {
                "beyond_start_ms": summary(beyond),
                "total_ms": summary([s * 1e3 for s in samples[name]]),
            }
    return {"n": n, "check": check, "figures": figures}


def fmt(fig: dict[str, Any]) -> str:
    return (
        f"{fig['median']:6.1f} [{fig['q1']:.1f}-{fig['q3']:.1f}] "
        f"({fig['min']:.1f}-{fig['max']:.1f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sizes", default="10,100,1000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    root = Path(tempfile.mkdtemp(prefix="tp-bench-discovery-"))
    results: list[dict[str, Any]] = []
    try:
        sites = {n: make_site(root, n) for n in sizes}
        # '' (the working directory) is on sys.path under -c: use a quiet, old, empty one.
        cwd = root / "cwd"
        cwd.mkdir()
        past = time.time() - 3600
        os.utime(cwd, (past, past))
        for n in sizes:
            results.append(measure(sites[n], root / f"cache-{n}", cwd, n, args.repeats))
    finally:
        shutil.rmtree(root, ignore_errors=True)

    headers = [
        "N",
        "start (ms)",
        "case",
        "beyond start, ms: median [q1-q3] (min-max)",
        "discover() in-process (ms)",
    ]
    rows: list[list[str]] = []
    for result in results:
        check, figures = result["check"], result["figures"]
        for name, fig in figures.items():
            if name == "start_ms":
                continue
            inproc = {
                "cold": f"{check['discover_cold_ms']:.1f}",
                "warm": f"{check['discover_warm_ms']:.1f}",
            }.get(name, "")
            if name == "cold":
                inproc += f" (peak RSS {check['peak_rss_kib'] / 1024:.0f} MiB)"
            rows.append(
                [
                    str(result["n"]),
                    f"{figures['start_ms']['median']:.1f}",
                    name,
                    fmt(fig["beyond_start_ms"]),
                    inproc,
                ]
            )
    print(table(headers, rows))
    worst = max(r["figures"]["cold"]["beyond_start_ms"]["median"] for r in results)
    print(f"\nno pack module imported in any check run; worst cold median: {worst:.1f} ms")
    path = write_json(
        "discovery.json",
        {
            "benchmark": "discovery",
            "machine": machine_info(),
            "repeats": args.repeats,
            "method": "one subprocess per sample, cases interleaved and shuffled per repeat, first "
            "round dropped; beyond_start = per-repeat case - start",
            "cases": CASES,
            "results": results,
            "median_cold_1000_ms": next(
                (
                    r["figures"]["cold"]["beyond_start_ms"]["median"]
                    for r in results
                    if r["n"] == 1000
                ),
                None,
            ),
        },
    )
    print(f"wrote {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()
