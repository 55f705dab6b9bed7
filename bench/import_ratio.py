"""Import cost against pydantic's, paired (issue 35): is ``from toolpacks import tool`` within
1.2x of ``from pydantic import BaseModel``, and ``from toolpacks import Host`` within 1.5x?

Each repeat runs the three imports, each in a fresh interpreter, in a shuffled order; each
process times its own import statement (``time.perf_counter`` around it, so interpreter
start-up is left out of all three alike). A repeat's ratio is its toolpacks import over its
pydantic import, so a machine that slows down slows both sides of a ratio: the median of the
per-repeat ratios is the figure. The pass/fail guard is not here (timing is not a test): it is
``tests/core/test_import_guard.py``, which checks which modules each import loads.

Two more cases have no target; they show where the cost went. ``from toolpacks import Host``
imports only the ``Host`` class: what building a toolset needs is imported by ``Host()`` and
``Host.toolset``, so ``Toolset`` (what the framework adapters import) and a host that builds
an empty toolset (``Host built``: import, ``Host({}, discover=False).toolset()``) are timed
too, against the same pydantic import of the same repeat.

Usage: ``python bench/import_ratio.py [--repeats N] [--check] [--before DIR] [--out NAME]``
(any venv with toolpacks). ``--check`` exits 1 when a median ratio of this tree is over its
target; ``--before DIR`` times the toolpacks package under ``DIR`` too, in the same repeats
(``git archive COMMIT src/toolpacks | tar -x -C DIR`` for an older commit, then ``DIR/src``;
``--label`` names it in the results).
Results: ``bench/results/import_ratio.json`` (or ``NAME``).
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
    "Toolset": "from toolpacks import Toolset",
    "Host built": "from toolpacks import Host\nHost({}, discover=False).toolset()",
}
TARGETS: dict[str, float | None] = {"tool": 1.2, "Host": 1.5, "Toolset": None, "Host built": None}
TIMED = "import time\nt0 = time.perf_counter()\n{stmt}\nprint(time.perf_counter() - t0)\n"
BEFORE = " (before)"
"""Suffix of the cases timed from ``--before DIR``."""


def once(stmt: str, src: str | None = None) -> float:
    """Seconds a fresh interpreter spends in ``stmt`` (an import); toolpacks from ``src``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    head = f"import sys\nsys.path.insert(0, {src!r})\n" if src else ""
    done = subprocess.run(
        [sys.executable, "-c", head + TIMED.format(stmt=stmt)],
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
    parser.add_argument("--before", help="also time the toolpacks package in this directory")
    parser.add_argument("--label", help="what the --before tree is (default: its path)")
    parser.add_argument("--out", default="import_ratio.json", help="results file name")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    runs = {name: (stmt, None) for name, stmt in CASES.items()}
    if args.before:
        runs |= {name + BEFORE: (stmt, args.before) for name, stmt in CASES.items()}
        del runs["pydantic" + BEFORE]
    samples: dict[str, list[float]] = {name: [] for name in runs}
    out: dict[str, object] = {"machine": machine_info(), "repeats": args.repeats}
    out["before"] = args.label or args.before
    for _ in range(3):  # warm the file cache and the bytecode caches for every case
        for stmt, src in runs.values():
            once(stmt, src)
    for _ in range(args.repeats):
        order = list(runs)
        rng.shuffle(order)
        for name in order:
            samples[name].append(once(*runs[name]))
    out["loadavg_at_end"] = os.getloadavg()
    failed = False
    for name in sorted(samples.keys() - {"pydantic"}, key=lambda n: (n.endswith(BEFORE), n)):
        target = TARGETS[name.removesuffix(BEFORE)]
        ratios = summary(paired_ratios(samples[name], samples["pydantic"]))
        ms = summary(s * 1e3 for s in samples[name])
        out[name] = {"target": target, "ratio": ratios, "ms": ms}
        if target is None:
            verdict = "(no target: where the cost went)"
        else:
            verdict = "ok" if ratios["median"] <= target else "OVER"
            failed |= verdict == "OVER" and not name.endswith(BEFORE)
        print(
            f"{name:<20} median {ratios['median']:.2f}x of pydantic "
            f"(IQR {ratios['q1']:.2f}-{ratios['q3']:.2f}, target {target or '-'}x; "
            f"{ms['median']:.1f} ms) {verdict}"
        )
    base = summary(s * 1e3 for s in samples["pydantic"])
    out["pydantic_ms"] = base
    print(f"{CASES['pydantic']} median {base['median']:.1f} ms")
    write_json(args.out, out)
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
