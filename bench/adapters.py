"""Adapters at native speed (issue 24): three same-run comparisons, shuffled rounds.

1. pydantic-ai: the adapter (``as_toolset(ts)``) against pydantic-ai's native
   ``FunctionToolset``, each driven as an agent run drives it per call
   (``args_validator.validate_json`` / ``validate_python``, then
   ``await call_tool(name, validated, ctx, tool)``), for the async ``add_async`` and the sync
   ``add``, from JSON text and from a dict. Target: async tool <= 1.5x native.
2. ``Toolset.call_sync("add", dict)`` and ``Tool.invoke_sync(dict)`` from plain synchronous
   code, for the sync tool (runs on the calling thread) and for the same tool with a timeout
   (runs in a thread of its own, under the loop's timeout: the path every sync call took
   before). Target: the plain sync tool <= 20 us a call.
3. llm: the adapter's implementation (``as_tools(ts)``) against llm's own
   ``llm.Tool.function(add).implementation`` (a direct call of the function).

Each round times one batch of every case of a group, in a shuffled order (``_common``); a
ratio is taken per round (case against its floor of the same round), then summarised: median
and spread (min-max) over the rounds.

Usage: ``.venv/bin/python bench/adapters.py [--rounds N] [--target-ms MS]``; writes
``bench/results/adapters_native.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    calibrate_async,
    calibrate_sync,
    interleave_async,
    interleave_sync,
    machine_info,
    paired_ratios,
    summary,
    table,
    write_json,
)
from _defs import ADD_ARGS, ADD_JSON, add, add_async

MODES = ("async tool, JSON", "async tool, dict", "sync tool, JSON", "sync tool, dict")


async def pydantic_cases() -> dict[str, Any]:
    """``cases["native|mode"]`` / ``cases["adapter|mode"]``: a batch of n calls."""
    from pydantic_ai import FunctionToolset, RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    from toolpacks import Toolset, tool
    from toolpacks.integrations.pydantic_ai import as_toolset

    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    cases: dict[str, Any] = {}
    toolsets = {
        "native": FunctionToolset([add, add_async]),
        "adapter": as_toolset(Toolset([tool(add), tool(add_async)])),
    }
    for label, toolset in toolsets.items():
        tools = await toolset.get_tools(ctx)
        for mode in MODES:
            name = "add_async" if mode.startswith("async") else "add"
            listed = tools[name]
            json_mode = mode.endswith("JSON")
            validate = (
                listed.args_validator.validate_json
                if json_mode
                else listed.args_validator.validate_python
            )
            arg = ADD_JSON if json_mode else ADD_ARGS
            call_tool = toolset.call_tool
            value = await call_tool(name, validate(arg), ctx, listed)
            assert value == 3, (label, mode, value)

            async def batch(
                n: int, name: str = name, listed: Any = listed, validate: Any = validate,
                arg: Any = arg, call_tool: Any = call_tool,
            ) -> None:
                for _ in range(n):
                    await call_tool(name, validate(arg), ctx, listed)

            cases[f"{label}|{mode}"] = batch
    return cases


def sync_cases() -> dict[str, Any]:
    """The synchronous calls: call_sync / invoke_sync, and llm's adapter and direct call."""
    import llm

    from toolpacks import Toolset, tool
    from toolpacks.integrations.llm import as_tools

    plain = tool(add)
    timed = tool(add, name="add_timed", timeout=30)
    ts = Toolset([plain, timed])
    llm_native = llm.Tool.function(add).implementation
    llm_adapter = {t.name: t.implementation for t in as_tools(ts)}["add"]
    cases = {
        "call_sync, sync tool (calling thread)": lambda: ts.call_sync("add", ADD_ARGS),
        "call_sync, sync tool with timeout (loop + thread)": lambda: ts.call_sync(
            "add_timed", ADD_ARGS
        ),
        "invoke_sync, sync tool (calling thread)": lambda: plain.invoke_sync(ADD_ARGS),
        "llm direct: Tool.function(add).implementation": lambda: llm_native(**ADD_ARGS),
        "llm adapter: as_tools(ts) implementation": lambda: llm_adapter(**ADD_ARGS),
    }
    for name, fn in cases.items():
        value = fn()
        value = getattr(value, "value", value)
        assert int(value) == 3, (name, value)
    return cases


def _fig(samples: list[float], floor: list[float] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"us": summary([s * 1e6 for s in samples])}
    if floor is not None:
        out["ratio"] = summary(paired_ratios(samples, floor))
    return out


def _us(fig: dict[str, Any]) -> str:
    s = fig["us"]
    return f"{s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f})"


def _ratio(fig: dict[str, Any]) -> str:
    r = fig.get("ratio")
    return f"{r['median']:.2f}x ({r['min']:.2f}-{r['max']:.2f})" if r else "-"


async def run_async(rounds: int, target_s: float) -> dict[str, Any]:
    cases = await pydantic_cases()
    for batch in cases.values():
        await batch(200)  # warm-up: plans, pools, lazy imports
    numbers = {name: await calibrate_async(batch, target_s) for name, batch in cases.items()}
    samples = await interleave_async(cases, repeats=rounds, numbers=numbers)
    rows = {}
    for mode in MODES:
        native = samples[f"native|{mode}"]
        rows[mode] = {
            "native": _fig(native),
            "adapter": _fig(samples[f"adapter|{mode}"], native),
        }
    return rows


def run_sync(rounds: int, target_s: float) -> dict[str, Any]:
    cases = sync_cases()
    for fn in cases.values():
        for _ in range(200):
            fn()
    numbers = {name: calibrate_sync(fn, target_s) for name, fn in cases.items()}
    samples = interleave_sync(cases, repeats=rounds, numbers=numbers)
    floor = samples["call_sync, sync tool with timeout (loop + thread)"]
    direct = samples["llm direct: Tool.function(add).implementation"]
    rows = {}
    for name, data in samples.items():
        if name.startswith("llm adapter"):
            rows[name] = _fig(data, direct)
        elif name.startswith(("call_sync", "invoke_sync")) and data is not floor:
            rows[name] = _fig(data, floor)
        else:
            rows[name] = _fig(data)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--target-ms", type=float, default=40.0)
    args = parser.parse_args()
    target_s = args.target_ms / 1000
    pyd = asyncio.run(run_async(args.rounds, target_s))
    syn = run_sync(args.rounds, target_s)
    print(f"pydantic-ai: adapter vs native FunctionToolset ({args.rounds} shuffled rounds)")
    print(
        table(
            ["mode", "native us", "adapter us", "adapter / native"],
            [
                [m, _us(r["native"]), _us(r["adapter"]), _ratio(r["adapter"])]
                for m, r in pyd.items()
            ],
        )
    )
    print()
    print("synchronous calls (ratio: call_sync paths to the loop + thread path; llm to direct)")
    print(table(["path", "us", "ratio"], [[n, _us(f), _ratio(f)] for n, f in syn.items()]))
    worst = max(pyd[m]["adapter"]["ratio"]["median"] for m in MODES if m.startswith("async"))
    dict_us = syn["call_sync, sync tool (calling thread)"]["us"]["median"]
    targets = {
        "pydantic-ai adapter <= 1.5x native, async tool (worst mode, median)": [
            worst,
            worst <= 1.5,
        ],
        "call_sync dict path <= 20 us (median)": [dict_us, dict_us <= 20.0],
    }
    print()
    for name, (value, met) in targets.items():
        print(f"{name}: {value:.2f} -> {'met' if met else 'MISSED'}")
    write_json(
        "adapters_native.json",
        {
            "machine": machine_info(("toolpacks", "pydantic", "pydantic-ai-slim", "llm")),
            "rounds": args.rounds,
            "pydantic_ai": pyd,
            "sync": syn,
            "targets": targets,
        },
    )


if __name__ == "__main__":
    main()
