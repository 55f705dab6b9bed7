"""Import cost against pydantic's, paired (issue 35): is ``from toolpacks import tool`` within
1.2x of ``from pydantic import BaseModel``, and ``from toolpacks import Host`` within 1.5x?

Each repeat runs the three imports, each in a fresh interpreter, in a shuffled order; each
process times its own import statement (``time.perf_counter`` around it, so interpreter
start-up is left out of all three alike). A repeat's ratio is its toolpacks import over its
pydantic import, so a machine that slows down slows both sides of a ratio: the median of the
per-repeat ratios is the figure. The pass/fail guard is not here (timing is not a test): it is
``tests/core/test_import_guard.py``, which checks which modules each import loads.

Usage: ``python bench/import_ratio.py [--repeats N] [--check]`` (any venv with toolpacks).
``--check`` exits 1 when a median ratio is over its target. Results:
``bench/results/import_ratio.json``.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys

from _common import machine_info, paired_ratios, summary, write_json

CASES = {
    "pydantic": "from pydantic import BaseModel",
    "tool": "from toolpacks import tool",
    "Host": "from toolpacks import Host",
}
TARGETS = {"tool": 1.2, "Host": 1.5}
TIMED = "import time\nt0 = time.perf_counter()\n{stmt}\nprint(time.perf_counter() - t0)\n"


def once(stmt: str) -> float:
    """Seconds a fresh interpreter spends in ``stmt`` (an import)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    done = subprocess.run(
        [sys.executable, "-c", TIMED.format(stmt=stmt)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    return float(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--check", action="store_true", help="exit 1 over a target")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    samples: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(3):  # warm the file cache and the bytecode caches for all three
        for stmt in CASES.values():
            once(stmt)
    for _ in range(args.repeats):
        order = list(CASES)
        rng.shuffle(order)
        for name in order:
            samples[name].append(once(CASES[name]))
    out: dict[str, object] = {"machine": machine_info(), "repeats": args.repeats}
    failed = False
    for name, target in TARGETS.items():
        ratios = summary(paired_ratios(samples[name], samples["pydantic"]))
        out[name] = {"target": target, "ratio": ratios, "ms": summary(
            s * 1e3 for s in samples[name])}
        verdict = "ok" if ratios["median"] <= target else "OVER"
        failed |= verdict == "OVER"
        print(
            f"{CASES[name]:<32} median {ratios['median']:.2f}x of pydantic "
            f"(IQR {ratios['q1']:.2f}-{ratios['q3']:.2f}, target {target}x) {verdict}"
        )
    base = summary(s * 1e3 for s in samples["pydantic"])
    out["pydantic_ms"] = base
    print(f"{CASES['pydantic']:<32} median {base['median']:.1f} ms")
    write_json("import_ratio.json", out)
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
