"""toolpacks' own overhead, against the floor measured in the same process (issue 2).

Per call: ``await t.invoke(args)`` for a trivial sync and a trivial async tool
(``add(a: int, b: int) -> int``), from a dict and from a JSON string, and for a rich signature,
against the floor: pydantic ``TypeAdapter(<TypedDict of the same params>).validate_python(args)``
plus a direct call (``fn(**v)`` / ``await fn(**v)``). For sync tools the floor also includes the
thread hop, ``await asyncio.to_thread(fn, **v)``: toolpacks never runs sync code on the event
loop. From JSON the floor is ``json.loads`` + ``validate_python`` (``validate_json`` is shown too).

Definition: ``tool(fn)`` (decorate, schema and validator) for a small and a rich signature,
against ``TypeAdapter(TypedDict(...)).json_schema()`` of the same parameters.

Usage: ``python bench/bench_core.py [--repeats N] [--quick] [--profile]``; writes
``bench/results/core.json`` and prints a table. Targets: async invoke within 2x of the floor;
sync invoke within 1.2x of the floor with ``to_thread``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    calibrate_async,
    calibrate_sync,
    figure,
    fmt_ratio,
    fmt_us,
    interleave_async,
    interleave_sync,
    machine_info,
    table,
    write_json,
)
from _defs import (
    ADD_ADAPTER,
    ADD_ARGS,
    ADD_JSON,
    RICH_ADAPTER,
    RICH_ARGS,
    RICH_FIELDS,
    SMALL_FIELDS,
    add,
    add_async,
    create_user,
    create_user_async,
    floor_define,
)

from toolpacks import tool

# (case, floor) pairs reported in the invoke table, in display order.
INVOKE_PAIRS: list[tuple[str, str, str]] = [
    ("async tool, dict args", "tp_async_dict", "floor_async_dict"),
    ("async tool, JSON args", "tp_async_json", "floor_async_json"),
    ("async tool, rich signature, dict", "tp_async_rich", "floor_async_rich"),
    ("sync tool, dict args", "tp_sync_dict", "floor_sync_dict"),
    ("sync tool, JSON args", "tp_sync_json", "floor_sync_json"),
]
REFERENCE_CASES = {
    "floor_async_validate_json": "floor: validate_json + await fn(**v)",
    "floor_sync_no_thread": "floor: validate_python + fn(**v), no thread (reference)",
}


def _invoke_cases() -> dict[str, Any]:
    t_sync = tool(add)
    t_async = tool(add_async)
    t_rich = tool(create_user_async)
    validate = ADD_ADAPTER.validate_python
    validate_json = ADD_ADAPTER.validate_json
    rich_validate = RICH_ADAPTER.validate_python
    loads = json.loads

    async def tp_async_dict(n: int) -> None:
        inv = t_async.invoke
        for _ in range(n):
            await inv(ADD_ARGS)

    async def tp_async_json(n: int) -> None:
        inv = t_async.invoke
        for _ in range(n):
            await inv(ADD_JSON)

    async def tp_async_rich(n: int) -> None:
        inv = t_rich.invoke
        for _ in range(n):
            await inv(RICH_ARGS)

    async def tp_sync_dict(n: int) -> None:
        inv = t_sync.invoke
        for _ in range(n):
            await inv(ADD_ARGS)

    async def tp_sync_json(n: int) -> None:
        inv = t_sync.invoke
        for _ in range(n):
            await inv(ADD_JSON)

    async def floor_async_dict(n: int) -> None:
        for _ in range(n):
            v = validate(ADD_ARGS)
            await add_async(**v)

    async def floor_async_json(n: int) -> None:
        for _ in range(n):
            v = validate(loads(ADD_JSON))
            await add_async(**v)

    async def floor_async_validate_json(n: int) -> None:
        for _ in range(n):
            v = validate_json(ADD_JSON)
            await add_async(**v)

    async def floor_async_rich(n: int) -> None:
        for _ in range(n):
            v = rich_validate(RICH_ARGS)
            await create_user_async(**v)

    to_thread = asyncio.to_thread

    async def floor_sync_dict(n: int) -> None:
        for _ in range(n):
            v = validate(ADD_ARGS)
            await to_thread(add, **v)

    async def floor_sync_json(n: int) -> None:
        for _ in range(n):
            v = validate(loads(ADD_JSON))
            await to_thread(add, **v)

    async def floor_sync_no_thread(n: int) -> None:
        for _ in range(n):
            v = validate(ADD_ARGS)
            add(**v)

    return {
        "tools": (t_sync, t_async, t_rich),
        "cases": {
            "tp_async_dict": tp_async_dict,
            "tp_async_json": tp_async_json,
            "tp_async_rich": tp_async_rich,
            "tp_sync_dict": tp_sync_dict,
            "tp_sync_json": tp_sync_json,
            "floor_async_dict": floor_async_dict,
            "floor_async_json": floor_async_json,
            "floor_async_validate_json": floor_async_validate_json,
            "floor_async_rich": floor_async_rich,
            "floor_sync_dict": floor_sync_dict,
            "floor_sync_json": floor_sync_json,
            "floor_sync_no_thread": floor_sync_no_thread,
        },
    }


async def _check(tools: tuple[Any, Any, Any]) -> None:
    t_sync, t_async, t_rich = tools
    for t, args, expected in (
        (t_sync, ADD_ARGS, 3),
        (t_sync, ADD_JSON, 3),
        (t_async, ADD_ARGS, 3),
        (t_async, ADD_JSON, 3),
    ):
        result = await t.invoke(args)
        assert not result.is_error, result
        assert result.value == expected, result
    result = await t_rich.invoke(RICH_ARGS)
    assert not result.is_error, result
    assert result.value["city"] == "London", result


async def measure_invoke(repeats: int, target_s: float) -> dict[str, Any]:
    built = _invoke_cases()
    await _check(built["tools"])
    cases = built["cases"]
    for batch in cases.values():  # warm up: thread pool, caches, first-call plans
        await batch(200)
    numbers = {name: await calibrate_async(batch, target_s) for name, batch in cases.items()}
    samples = await interleave_async(cases, repeats=repeats, numbers=numbers)
    out: dict[str, Any] = {"batch_sizes": numbers, "figures": {}, "pairs": []}
    for name, data in samples.items():
        out["figures"][name] = figure(data)
    for label, case, floor in INVOKE_PAIRS:
        fig = figure(samples[case], samples[floor])
        out["pairs"].append(
            {
                "label": label,
                "case": case,
                "floor": floor,
                "figure": fig,
                "floor_figure": figure(samples[floor]),
            }
        )
    # Reference ratios: async JSON against validate_json, and the thread hop itself.
    out["reference"] = {
        "async_json_vs_validate_json": figure(
            samples["tp_async_json"], samples["floor_async_validate_json"]
        ),
        "sync_floor_thread_hop": figure(
            samples["floor_sync_dict"], samples["floor_sync_no_thread"]
        ),
        "sync_tool_vs_no_thread_floor": figure(
            samples["tp_sync_dict"], samples["floor_sync_no_thread"]
        ),
    }
    return out


def measure_define(repeats: int, target_s: float) -> dict[str, Any]:
    cases = {
        "tp_define_small": lambda: tool(add).input_schema,
        "tp_define_rich": lambda: tool(create_user).input_schema,
        "floor_define_small": lambda: floor_define(SMALL_FIELDS),
        "floor_define_rich": lambda: floor_define(RICH_FIELDS),
    }
    for fn in cases.values():
        for _ in range(5):
            fn()
    numbers = {name: calibrate_sync(fn, target_s) for name, fn in cases.items()}
    samples = interleave_sync(cases, repeats=repeats, numbers=numbers)
    return {
        "batch_sizes": numbers,
        "pairs": [
            {
                "label": "define small (a: int, b: int)",
                "case": "tp_define_small",
                "floor": "floor_define_small",
                "figure": figure(samples["tp_define_small"], samples["floor_define_small"]),
                "floor_figure": figure(samples["floor_define_small"]),
            },
            {
                "label": "define rich (model, Optional, Literal, list, Field)",
                "case": "tp_define_rich",
                "floor": "floor_define_rich",
                "figure": figure(samples["tp_define_rich"], samples["floor_define_rich"]),
                "floor_figure": figure(samples["floor_define_rich"]),
            },
        ],
    }


def profile_invoke(calls: int = 50_000) -> str:
    """cProfile of ``await t.invoke(ADD_ARGS)`` for the async tool (sorted by own time)."""
    import cProfile
    import io
    import pstats

    t_async = tool(add_async)

    async def run() -> None:
        for _ in range(calls):
            await t_async.invoke(ADD_ARGS)

    prof = cProfile.Profile()
    prof.enable()
    asyncio.run(run())
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(20)
    return buf.getvalue()


def render(result: dict[str, Any]) -> str:
    rows = []
    for pair in result["invoke"]["pairs"]:
        fig, floor = pair["figure"], pair["floor_figure"]
        rows.append(
            [
                pair["label"],
                fmt_us(fig),
                fmt_us(floor),
                f"{fig['overhead_us']:+.2f}",
                fmt_ratio(fig),
            ]
        )
    ref = result["invoke"]["reference"]
    rows.append(
        [
            "async tool, JSON vs validate_json floor",
            fmt_us(ref["async_json_vs_validate_json"]),
            fmt_us(result["invoke"]["figures"]["floor_async_validate_json"]),
            f"{ref['async_json_vs_validate_json']['overhead_us']:+.2f}",
            fmt_ratio(ref["async_json_vs_validate_json"]),
        ]
    )
    rows.append(
        [
            "(thread hop: to_thread floor vs no-thread floor)",
            fmt_us(ref["sync_floor_thread_hop"]),
            fmt_us(result["invoke"]["figures"]["floor_sync_no_thread"]),
            f"{ref['sync_floor_thread_hop']['overhead_us']:+.2f}",
            fmt_ratio(ref["sync_floor_thread_hop"]),
        ]
    )
    text = "Per call (us, median [q1-q3] over repeats; ratio = per-repeat case/floor)\n"
    text += table(["case", "toolpacks", "floor", "overhead", "ratio to floor"], rows)
    rows = []
    for pair in result["define"]["pairs"]:
        fig, floor = pair["figure"], pair["floor_figure"]
        rows.append([pair["label"], fmt_us(fig), fmt_us(floor), fmt_ratio(fig)])
    text += "\n\nDefinition (us, decorate + JSON Schema + validator)\n"
    text += table(["case", "toolpacks", "floor", "ratio"], rows)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=60, help="interleaved repeats per case")
    parser.add_argument("--quick", action="store_true", help="few, short repeats (smoke run)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of invoke")
    parser.add_argument("--out", default="core.json", help="file name under bench/results/")
    args = parser.parse_args(argv)
    repeats = 5 if args.quick else args.repeats
    target = 0.005 if args.quick else 0.02
    result: dict[str, Any] = {
        "benchmark": "core",
        "machine": machine_info(),
        "repeats": repeats,
        "method": "interleaved shuffled batches; per-call time = batch time / batch size; "
        "gc paused during a batch; ratio = per-repeat case/floor",
    }
    result["invoke"] = asyncio.run(measure_invoke(repeats, target))
    result["define"] = measure_define(max(5, repeats // 2), target * 2)
    invoke_async = result["invoke"]["pairs"][0]["figure"]["ratio"]["median"]
    invoke_sync = result["invoke"]["pairs"][3]["figure"]["ratio"]["median"]
    result["targets"] = {
        "async_within_2x_of_floor": {"ratio": invoke_async, "met": invoke_async <= 2.0},
        "sync_within_1.2x_of_to_thread_floor": {"ratio": invoke_sync, "met": invoke_sync <= 1.2},
    }
    if args.profile:
        result["profile"] = profile_invoke()
    path = write_json(args.out, result)
    print(render(result))
    print()
    for name, t in result["targets"].items():
        print(f"target {name}: {t['ratio']:.2f}x -> {'met' if t['met'] else 'MISSED'}")
    if args.profile:
        print()
        print(result["profile"])
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
