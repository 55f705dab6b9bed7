"""toolpacks against its peers, side by side in one run (issue 9).

For toolpacks and each peer that installed (strands-agents, pydantic-ai, langchain-core,
openai-agents, fastmcp; adapters in ``bench/peers/``):

1. definition: decorate + JSON Schema, small and rich signature, against
   ``TypeAdapter(TypedDict(...)).json_schema()`` of the same parameters;
2. invocation of a trivial ``add(a, b)`` tool, sync and async, from a model-style dict and from
   a JSON string, through each library's documented path, against the floor
   (``validate_python`` + direct call; ``json.loads`` first for JSON text;
   ``await asyncio.to_thread`` for sync functions);
3. 1,000 concurrent async invocations (``asyncio.gather``) against bare ``asyncio.gather``
   over the same validated calls;
4. import wall time (subprocesses): ``import toolpacks`` and ``from toolpacks import tool``
   against ``import pydantic`` and ``from pydantic import BaseModel``; and the CLI
   (``toolpacks --version``, ``toolpacks list``) when it runs.

Everything is interleaved (one batch of every case per repeat, shuffled), reported as a
median with quartiles and min/max, and as a per-repeat ratio to the floor of the same repeat.
Discovery (N installed packs) is ``bench/bench_discovery.py``'s job; ``bench/run.sh`` runs it
and ``bench/report.py`` puts both into ``docs/benchmarks.md``.

Usage: ``python bench/bench_peers.py [--quick] [--only NAME ...]``; writes
``bench/results/peers.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    RESULTS_DIR,
    calibrate_async,
    calibrate_sync,
    figure,
    fmt_ratio,
    fmt_us,
    interleave_async,
    interleave_sync,
    machine_info,
    run_subprocess_timed,
    summary,
    table,
    write_json,
)
from _defs import (
    ADD_ADAPTER,
    ADD_ARGS,
    ADD_JSON,
    RICH_FIELDS,
    SMALL_FIELDS,
    add,
    add_async,
    create_user,
    create_user_str_descriptions,
    floor_define,
)
from peers import ADAPTERS, load

MODES = ("async_dict", "async_json", "sync_dict", "sync_json")
MODE_LABELS = {
    "async_dict": "async tool, dict args",
    "async_json": "async tool, JSON args",
    "sync_dict": "sync tool, dict args",
    "sync_json": "sync tool, JSON args",
}
CONCURRENCY = 1000


# -- loading the libraries ----------------------------------------------------------------


def load_libraries(only: list[str] | None) -> tuple[dict[str, Any], dict[str, str]]:
    """The adapter modules whose library imports, and why the others were left out."""
    modules: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    for name in ADAPTERS:
        module = load(name)
        if only and module.LABEL not in only and name not in only:
            continue
        try:
            module.define(add)  # imports the library
        except Exception as exc:
            skipped[module.LABEL] = f"{type(exc).__name__}: {exc}"
            continue
        modules[module.LABEL] = module
    return modules, skipped


# -- 1. definition -----------------------------------------------------------------------


def bench_define(modules: dict[str, Any], repeats: int, target_s: float) -> dict[str, Any]:
    cases: dict[str, Any] = {
        "floor|small": lambda: floor_define(SMALL_FIELDS),
        "floor|rich": lambda: floor_define(RICH_FIELDS),
    }
    notes: dict[str, str] = {}
    for label, module in modules.items():
        cases[f"{label}|small"] = lambda m=module: m.define(add)
        try:
            module.define(create_user)
            cases[f"{label}|rich"] = lambda m=module: m.define(create_user)
        except Exception as exc:
            # The library rejects part of the rich signature; measure the closest it accepts.
            first = str(exc).splitlines()[0][:160]
            try:
                module.define(create_user_str_descriptions)
            except Exception as exc2:
                notes[label] = f"rich signature unsupported: {first}; fallback failed too: {exc2}"
                continue
            notes[label] = (
                f"rich signature rejected ({type(exc).__name__}: {first}); measured with "
                "Annotated[T, 'text'] descriptions and no Field constraints instead"
            )
            cases[f"{label}|rich"] = lambda m=module: m.define(create_user_str_descriptions)
    for fn in cases.values():
        for _ in range(3):
            fn()
    numbers = {name: calibrate_sync(fn, target_s) for name, fn in cases.items()}
    samples = interleave_sync(cases, repeats=repeats, numbers=numbers)
    out: dict[str, Any] = {"notes": notes, "rows": {}}
    for size in ("small", "rich"):
        floor = samples[f"floor|{size}"]
        out["rows"][size] = {"floor": figure(floor)}
        for label in modules:
            key = f"{label}|{size}"
            if key in samples:
                out["rows"][size][label] = figure(samples[key], floor)
    return out


# -- 2. invocation -------------------------------------------------------------------------


def _floors() -> dict[str, Any]:
    validate = ADD_ADAPTER.validate_python
    loads = json.loads
    to_thread = asyncio.to_thread

    async def async_dict(args: dict[str, Any]) -> int:
        return await add_async(**validate(args))

    async def async_json(text: str) -> int:
        return await add_async(**validate(loads(text)))

    async def sync_dict(args: dict[str, Any]) -> int:
        return await to_thread(add, **validate(args))

    async def sync_json(text: str) -> int:
        return await to_thread(add, **validate(loads(text)))

    return {
        "async_dict": async_dict,
        "async_json": async_json,
        "sync_dict": sync_dict,
        "sync_json": sync_json,
    }


def _batch(fn: Any, arg: Any) -> Any:
    async def batch(n: int) -> None:
        for _ in range(n):
            await fn(arg)

    return batch


def _ratio_of_medians(row: dict[str, Any], mine: str, theirs: str) -> float | None:
    """``mine``'s median time over ``theirs``', both measured in this run; None if absent."""
    if mine not in row or theirs not in row:
        return None
    return float(row[mine]["median"] / row[theirs]["median"])


async def bench_invoke(
    modules: dict[str, Any], repeats: int, target_s: float
) -> tuple[dict[str, Any], dict[str, Any]]:
    adapters: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for label, module in modules.items():
        try:
            adapter = await module.build()
            for mode in MODES:
                arg = ADD_JSON if mode.endswith("json") else ADD_ARGS
                result = await getattr(adapter, mode)(arg)
                value = adapter.value(result)
                if value != 3:
                    raise AssertionError(f"{mode} returned {value!r}, expected 3")
            adapters[label] = adapter
        except Exception as exc:
            errors[label] = f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
    floors = _floors()
    cases: dict[str, Any] = {}
    for mode in MODES:
        arg = ADD_JSON if mode.endswith("json") else ADD_ARGS
        cases[f"floor|{mode}"] = _batch(floors[mode], arg)
        for label, adapter in adapters.items():
            cases[f"{label}|{mode}"] = _batch(getattr(adapter, mode), arg)
    for batch in cases.values():  # warm-up: thread pools, caches, lazy imports
        await batch(50)
    numbers = {name: await calibrate_async(batch, target_s) for name, batch in cases.items()}
    samples = await interleave_async(cases, repeats=repeats, numbers=numbers)
    out: dict[str, Any] = {"errors": errors, "rows": {}, "batch_sizes": numbers}
    for mode in MODES:
        floor = samples[f"floor|{mode}"]
        out["rows"][mode] = {"floor": figure(floor)}
        for label in adapters:
            out["rows"][mode][label] = figure(samples[f"{label}|{mode}"], floor)
    return out, adapters


# -- 3. concurrency ------------------------------------------------------------------------


async def bench_concurrency(adapters: dict[str, Any], repeats: int) -> dict[str, Any]:
    validate = ADD_ADAPTER.validate_python
    gather = asyncio.gather

    async def floor_call(args: dict[str, Any]) -> int:
        return await add_async(**validate(args))

    def gathered(fn: Any) -> Any:
        async def batch(n: int) -> None:
            for _ in range(n):
                results = await gather(*[fn(ADD_ARGS) for _ in range(CONCURRENCY)])
                assert len(results) == CONCURRENCY

        return batch

    cases = {"floor": gathered(floor_call)}
    cases.update({label: gathered(a.async_dict) for label, a in adapters.items()})
    for batch in cases.values():
        await batch(1)
    numbers = dict.fromkeys(cases, 1)
    samples = await interleave_async(cases, repeats=repeats, numbers=numbers)
    floor = samples["floor"]
    out: dict[str, Any] = {"concurrency": CONCURRENCY, "rows": {"floor": figure(floor, scale=1e3)}}
    for label in adapters:
        out["rows"][label] = figure(samples[label], floor, scale=1e3)
    return out


# -- 4. import and CLI wall time -------------------------------------------------------------


def bench_imports(repeats: int) -> dict[str, Any]:
    py = sys.executable
    statements = {
        "python -c pass": "pass",
        "import pydantic": "import pydantic",
        "from pydantic import BaseModel": "from pydantic import BaseModel",
        "import toolpacks": "import toolpacks",
        "from toolpacks import tool": "from toolpacks import tool",
    }
    cwd = tempfile.mkdtemp(prefix="toolpacks-bench-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["TOOLPACKS_CACHE_DIR"] = str(Path(cwd) / "cache")
    commands = {label: [py, "-c", code] for label, code in statements.items()}
    cli = shutil.which("toolpacks", path=str(Path(py).parent)) or None
    cli_errors: dict[str, str] = {}
    if cli:
        for label, argv in {
            "toolpacks --version": [cli, "--version"],
            "toolpacks list": [cli, "list"],
        }.items():
            try:
                run_subprocess_timed(argv, env=env, cwd=cwd)
                commands[label] = argv
            except Exception as exc:
                cli_errors[label] = str(exc).strip()[-300:]
    else:
        cli_errors["toolpacks"] = "no `toolpacks` script next to this Python"
    samples: dict[str, list[float]] = {k: [] for k in commands}
    for argv in commands.values():  # warm the file cache
        run_subprocess_timed(argv, env=env, cwd=cwd)
    import random

    rng = random.Random(1)
    names = list(commands)
    for _ in range(repeats):
        rng.shuffle(names)
        for name in names:
            samples[name].append(run_subprocess_timed(commands[name], env=env, cwd=cwd))
    shutil.rmtree(cwd, ignore_errors=True)
    base = samples["python -c pass"]
    out: dict[str, Any] = {"rows": {}, "cli_errors": cli_errors}
    for name, data in samples.items():
        fig = figure(data, scale=1e3)
        fig["net_of_startup_ms"] = (statistics.median(data) - statistics.median(base)) * 1e3
        out["rows"][name] = fig
    comparisons = {
        "from toolpacks import tool / from pydantic import BaseModel": (
            "from toolpacks import tool",
            "from pydantic import BaseModel",
        ),
        "from toolpacks import tool / import pydantic": (
            "from toolpacks import tool",
            "import pydantic",
        ),
        "import toolpacks / import pydantic": ("import toolpacks", "import pydantic"),
    }
    out["ratios"] = {}
    for label, (a, b) in comparisons.items():
        ratios = [x / y for x, y in zip(samples[a], samples[b], strict=True)]
        net = [
            (x - p) / (y - p) for x, y, p in zip(samples[a], samples[b], base, strict=True) if y > p
        ]
        out["ratios"][label] = {"wall": summary(ratios), "net_of_startup": summary(net)}
    return out


# -- running and printing ----------------------------------------------------------------


def render(result: dict[str, Any]) -> str:
    libs = result["libraries"]
    parts = []
    rows = []
    for size in ("small", "rich"):
        row = result["define"]["rows"][size]
        rows.append([f"floor ({size})", fmt_us(row["floor"]), "1.00x"])
        rows.extend(
            [f"{lib} ({size})", fmt_us(row[lib]), fmt_ratio(row[lib])] for lib in libs if lib in row
        )
    parts.append(
        "1. Definition (us; decorate + JSON Schema)\n" + table(["case", "us", "ratio"], rows)
    )
    for mode in MODES:
        row = result["invoke"]["rows"][mode]
        rows = [["floor", fmt_us(row["floor"]), "1.00x"]]
        rows.extend([lib, fmt_us(row[lib]), fmt_ratio(row[lib])] for lib in libs if lib in row)
        parts.append(
            f"2. Invoke: {MODE_LABELS[mode]} (us per call)\n"
            + table(["library", "us", "ratio"], rows)
        )
    row = result["concurrency"]["rows"]
    rows = [["bare gather", fmt_us(row["floor"]), "1.00x"]]
    rows.extend([lib, fmt_us(row[lib]), fmt_ratio(row[lib])] for lib in libs if lib in row)
    parts.append(
        f"3. {CONCURRENCY} concurrent async calls (ms per gather)\n"
        + table(["library", "ms", "ratio"], rows)
    )
    rows = [
        [name, fmt_us(fig), f"{fig['net_of_startup_ms']:.1f}"]
        for name, fig in result["imports"]["rows"].items()
    ]
    parts.append(
        "4. Import / CLI wall time (ms, subprocess)\n"
        + table(["command", "ms", "net of startup"], rows)
    )
    return "\n\n".join(parts)


async def _invoke_and_concurrency(
    modules: dict[str, Any], repeats: int, target_s: float, conc_repeats: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    invoke, adapters = await bench_invoke(modules, repeats, target_s)
    concurrency = await bench_concurrency(adapters, conc_repeats)
    return invoke, concurrency


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few, short repeats (smoke run)")
    parser.add_argument("--repeats", type=int, default=40, help="interleaved repeats per case")
    parser.add_argument("--only", nargs="*", help="library labels to include (toolpacks always)")
    parser.add_argument("--out", default="peers.json")
    args = parser.parse_args(argv)
    repeats = 4 if args.quick else args.repeats
    target = 0.005 if args.quick else 0.02
    only = None if not args.only else ["toolpacks", *args.only]
    modules, skipped = load_libraries(only)
    install_file = RESULTS_DIR / "install.json"
    install = json.loads(install_file.read_text()) if install_file.exists() else None
    dists = ["pydantic", "pydantic-core"] + [m.DIST for m in modules.values()]
    result: dict[str, Any] = {
        "benchmark": "peers",
        "machine": machine_info(dists),
        "repeats": repeats,
        "libraries": list(modules),
        "skipped": skipped,
        "install": install,
        "paths": {label: m.PATHS for label, m in modules.items()},
        "method": "interleaved shuffled batches; per-call time = batch time / batch size; gc "
        "paused during a batch; ratio = per-repeat case/floor, summarised over repeats",
    }
    import time

    started = time.perf_counter()

    def phase(text: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {text}", flush=True)

    phase(f"libraries: {', '.join(modules)}" + (f"; skipped: {skipped}" if skipped else ""))
    phase("1. definition ...")
    result["define"] = bench_define(modules, max(5, repeats // 2), target * 2)
    phase("2-3. invocation and concurrency ...")
    result["invoke"], result["concurrency"] = asyncio.run(
        _invoke_and_concurrency(modules, repeats, target, max(5, repeats // 2))
    )
    phase("4. import and CLI wall time ...")
    result["imports"] = bench_imports(max(5, repeats // 2 if args.quick else 20))
    tp = result["invoke"]["rows"]
    peers_async = {
        lib: fig["ratio"]["median"]
        for lib, fig in tp["async_dict"].items()
        if lib not in ("floor", "toolpacks")
    }
    tp_async = tp["async_dict"].get("toolpacks", {}).get("ratio", {}).get("median")
    tp_sync = tp["sync_dict"].get("toolpacks", {}).get("ratio", {}).get("median")
    conc = result["concurrency"]["rows"].get("toolpacks", {}).get("ratio", {}).get("median")
    json_vs_pydantic_ai = _ratio_of_medians(tp["async_json"], "toolpacks", "pydantic-ai")
    imp = result["imports"]["ratios"][
        "from toolpacks import tool / from pydantic import BaseModel"
    ]["wall"]["median"]
    define_small = result["define"]["rows"]["small"]
    define_rich = result["define"]["rows"]["rich"]

    def lowest(row: dict[str, Any]) -> bool:
        others = [fig["median"] for lib, fig in row.items() if lib not in ("floor", "toolpacks")]
        return "toolpacks" in row and all(row["toolpacks"]["median"] <= o for o in others)

    result["targets"] = {
        "per-call overhead lowest of all libraries (async, dict)": {
            "value": tp_async,
            "met": tp_async is not None and all(tp_async <= r for r in peers_async.values()),
        },
        "async invoke with JSON text within 1.3x of pydantic-ai's validate_json + call_tool "
        "(duplicate keys still refused)": {
            "value": json_vs_pydantic_ai,
            "met": json_vs_pydantic_ai is not None and json_vs_pydantic_ai <= 1.3,
        },
        "async invoke with a dict no slower than wave 1 (2.3x the floor)": {
            "value": tp_async,
            "met": tp_async is not None and tp_async <= 2.3,
        },
        "async invoke within 2x of the floor": {
            "value": tp_async,
            "met": tp_async is not None and tp_async <= 2.0,
        },
        "sync invoke within 1.2x of validate_python + to_thread": {
            "value": tp_sync,
            "met": tp_sync is not None and tp_sync <= 1.2,
        },
        "definition cost the lowest (small and rich)": {
            "value": define_small.get("toolpacks", {}).get("ratio", {}).get("median"),
            "met": lowest(define_small) and lowest(define_rich),
        },
        f"{CONCURRENCY} concurrent calls within 1.3x of bare gather": {
            "value": conc,
            "met": conc is not None and conc <= 1.3,
        },
        "from toolpacks import tool within 1.2x of from pydantic import BaseModel": {
            "value": imp,
            "met": imp <= 1.2,
        },
    }
    phase("done")
    result["elapsed_s"] = time.perf_counter() - started
    path = write_json(args.out, result)
    print()
    print(render(result))
    print()
    for name, t in result["targets"].items():
        value = "-" if t["value"] is None else f"{t['value']:.2f}x"
        print(f"target: {name}: {value} -> {'met' if t['met'] else 'MISSED'}")
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
