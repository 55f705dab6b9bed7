"""The framework adapters against each framework's own function tools, in one run (issue 16).

For the small ``add(a, b)`` tool, sync and async, from JSON text (what models send) and from a
dict, per call:

* ``toolset.call``: ``await Toolset.call(name, args)``, the road every adapter takes;
* pydantic-ai native: ``FunctionToolset`` (``args_validator.validate_json`` /
  ``validate_python``, then ``await call_tool(name, validated, ctx, tool)``, the toolset API an
  agent run uses per call);
* pydantic-ai adapter: the same two steps on ``as_toolset(ts)``;
* openai-agents native: ``await function_tool(add).on_invoke_tool(ToolContext, text)``;
* strands native: ``async for event in strands.tool(add).stream(tool_use, {})`` (what the
  agent's executor drives), against ``as_tools(ts)``;
* langchain native: ``await StructuredTool.from_function(add).ainvoke(args)`` (JSON text is
  parsed first: langchain tools take parsed arguments), against ``as_tools(ts)``;
* openai-agents adapter: the same on ``as_tools(ts)`` (a dict is ``json.dumps``-ed first for
  both, as the SDK only takes text).

Everything is interleaved (one batch of every case per repeat, shuffled; see ``_common``).
Reported per mode: the median per-call time, each adapter's per-repeat ratio to the framework's
native function tool (target: no adapter slower, i.e. ratio <= 1), and the overhead each
adapter adds over ``Toolset.call`` (for openai-agents this includes building the SDK's
``ToolContext`` per call, which both of its paths pay). The diagnostic row "toolset.call,
context given" passes a ``ToolContext`` made once: the difference to ``toolset.call`` is what
making one per call costs. A second table measures ``Toolset.call_sync`` from plain
code against ``asyncio.run(Toolset.call(...))``.

Usage: ``bench/.venv/bin/python bench/bench_adapters.py [--quick] [--repeats N]``; writes
``bench/results/adapters.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
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
    paired_ratios,
    summary,
    table,
    write_json,
)
from _defs import ADD_ARGS, ADD_JSON, add, add_async

MODES = ("async_json", "sync_json", "async_dict", "sync_dict")
MODE_LABELS = {
    "async_json": "async tool, JSON text",
    "sync_json": "sync tool, JSON text",
    "async_dict": "async tool, dict",
    "sync_dict": "sync tool, dict",
}
ADAPTERS = {
    "pydantic-ai adapter": "pydantic-ai native",
    "openai-agents adapter": "openai-agents native",
    "langchain adapter": "langchain native",
    "strands adapter": "strands native",
}
PREBUILT = "toolset.call, context given"
"""Diagnostic: ``Toolset.call`` with a ``ToolContext`` made once, not per call."""
CASES = ("toolset.call", PREBUILT, *(x for pair in ADAPTERS.items() for x in pair))


def _name(mode: str) -> str:
    return "add_async" if mode.startswith("async") else "add"


async def build() -> dict[str, dict[str, Any]]:
    """``paths[case][mode]``: a coroutine function taking the mode's argument (text or dict)."""
    from agents import function_tool
    from agents.tool_context import ToolContext as AgentsContext
    from pydantic_ai import FunctionToolset, RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    from toolpacks import ToolContext, Toolset, tool
    from toolpacks.integrations.openai_agents import as_tools
    from toolpacks.integrations.pydantic_ai import as_toolset

    ts = Toolset([tool(add), tool(add_async)])
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    dumps = json.dumps
    paths: dict[str, dict[str, Any]] = {case: {} for case in CASES}

    call = ts.call
    prebuilt = ToolContext(call_id="bench")
    for mode in MODES:
        name = _name(mode)

        async def direct(arg: Any, name: str = name) -> Any:
            return await call(name, arg)

        paths["toolset.call"][mode] = direct

        async def given(arg: Any, name: str = name, context: Any = prebuilt) -> Any:
            return await call(name, arg, context)

        paths[PREBUILT][mode] = given

    async def pydantic_paths(toolset: Any, label: str) -> None:
        tools = await toolset.get_tools(ctx)
        call_tool = toolset.call_tool
        for mode in MODES:
            name = _name(mode)
            t = tools[name]
            validate = (
                t.args_validator.validate_json
                if mode.endswith("json")
                else t.args_validator.validate_python
            )

            async def run(arg: Any, name: str = name, t: Any = t, validate: Any = validate) -> Any:
                return await call_tool(name, validate(arg), ctx, t)

            paths[label][mode] = run

    await pydantic_paths(FunctionToolset([add, add_async]), "pydantic-ai native")
    await pydantic_paths(as_toolset(ts), "pydantic-ai adapter")

    def agents_paths(tools: dict[str, Any], label: str) -> None:
        for mode in MODES:
            t = tools[_name(mode)]
            on_invoke, tool_name = t.on_invoke_tool, t.name

            async def from_json(text: str, on_invoke: Any = on_invoke, n: str = tool_name) -> Any:
                # A fresh context per call, as the runner builds one per tool call.
                tc = AgentsContext(None, tool_name=n, tool_call_id="call_1", tool_arguments=text)
                return await on_invoke(tc, text)

            async def from_dict(args: dict[str, Any], from_json: Any = from_json) -> Any:
                return await from_json(dumps(args))

            paths[label][mode] = from_json if mode.endswith("json") else from_dict

    native = {"add": function_tool(add), "add_async": function_tool(add_async)}
    agents_paths(native, "openai-agents native")
    agents_paths({t.name: t for t in as_tools(ts)}, "openai-agents adapter")

    from langchain_core.tools import StructuredTool

    from toolpacks.integrations.langchain import as_tools as langchain_tools

    def langchain_paths(tools: dict[str, Any], label: str) -> None:
        loads = json.loads
        for mode in MODES:
            ainvoke = tools[_name(mode)].ainvoke

            async def from_dict(args: dict[str, Any], ainvoke: Any = ainvoke) -> Any:
                return await ainvoke(args)

            async def from_json(text: str, ainvoke: Any = ainvoke) -> Any:
                return await ainvoke(loads(text))  # langchain takes parsed arguments

            paths[label][mode] = from_json if mode.endswith("json") else from_dict

    langchain_native = {
        "add": StructuredTool.from_function(add),
        "add_async": StructuredTool.from_function(coroutine=add_async),
    }
    langchain_paths(langchain_native, "langchain native")
    langchain_paths({t.name: t for t in langchain_tools(ts)}, "langchain adapter")

    from strands import tool as strands_tool

    from toolpacks.integrations.strands import as_tools as strands_tools

    def strands_paths(tools: dict[str, Any], label: str) -> None:
        loads = json.loads
        for mode in MODES:
            t = tools[_name(mode)]
            stream, tool_name = t.stream, t.tool_name

            async def from_dict(
                args: dict[str, Any], stream: Any = stream, n: str = tool_name
            ) -> Any:
                last = None  # the agent's executor drives stream(); the last event is the result
                async for event in stream({"toolUseId": "call_1", "name": n, "input": args}, {}):
                    last = event
                return last

            async def from_json(text: str, from_dict: Any = from_dict) -> Any:
                return await from_dict(loads(text))  # strands models hand tools parsed input

            paths[label][mode] = from_json if mode.endswith("json") else from_dict

    strands_native = {"add": strands_tool(add), "add_async": strands_tool(add_async)}
    strands_paths({k: v for k, v in strands_native.items()}, "strands native")
    strands_paths({t.tool_name: t for t in strands_tools(ts)}, "strands adapter")
    return paths


def _value(result: Any) -> Any:
    try:  # a strands ToolResultEvent (or the ToolResult it carries): its first content block
        block = result.get("tool_result", result)["content"][0]
        result = block.get("json", block.get("text"))
    except (AttributeError, TypeError, KeyError, IndexError):
        pass
    value = getattr(result, "value", result)
    return int(value) if isinstance(value, str) else value


def _batch(fn: Any, arg: Any) -> Any:
    async def batch(n: int) -> None:
        for _ in range(n):
            await fn(arg)

    return batch


async def bench_calls(repeats: int, target_s: float) -> dict[str, Any]:
    paths = await build()
    cases: dict[str, Any] = {}
    for case, by_mode in paths.items():
        for mode, fn in by_mode.items():
            arg = ADD_JSON if mode.endswith("json") else ADD_ARGS
            value = _value(await fn(arg))
            if value != 3:
                raise AssertionError(f"{case} ({mode}) returned {value!r}, expected 3")
            cases[f"{case}|{mode}"] = _batch(fn, arg)
    for batch in cases.values():  # warm-up: thread pools, caches, lazy imports
        await batch(50)
    numbers = {name: await calibrate_async(batch, target_s) for name, batch in cases.items()}
    samples = await interleave_async(cases, repeats=repeats, numbers=numbers)
    rows: dict[str, Any] = {}
    for mode in MODES:
        base = samples[f"toolset.call|{mode}"]
        row: dict[str, Any] = {"toolset.call": figure(base)}
        row[PREBUILT] = figure(samples[f"{PREBUILT}|{mode}"], base)
        for adapter, native in ADAPTERS.items():
            mine, theirs = samples[f"{adapter}|{mode}"], samples[f"{native}|{mode}"]
            row[native] = figure(theirs, base)
            row[adapter] = figure(mine, base)
            row[adapter]["vs_native"] = summary(paired_ratios(mine, theirs))
            row[adapter]["over_toolset_call_us"] = row[adapter].pop("overhead_us")
        rows[mode] = row
    return {"rows": rows, "batch_sizes": numbers}


def bench_sync(repeats: int, target_s: float) -> dict[str, Any]:
    import llm

    from toolpacks import Toolset, tool
    from toolpacks.integrations.llm import as_tools as llm_tools

    ts = Toolset([tool(add), tool(add_async)])
    llm_native = llm.Tool.function(add).implementation
    llm_adapter = {t.name: t.implementation for t in llm_tools(ts)}["add"]
    cases = {
        "llm native: Tool.function(add).implementation(**args)": lambda: llm_native(**ADD_ARGS),
        "llm adapter: as_tools(ts) implementation(**args)": lambda: llm_adapter(**ADD_ARGS),
        "call_sync (sync tool)": lambda: ts.call_sync("add", ADD_ARGS),
        "asyncio.run(call) (sync tool)": lambda: asyncio.run(ts.call("add", ADD_ARGS)),
        "call_sync (async tool)": lambda: ts.call_sync("add_async", ADD_ARGS),
        "asyncio.run(call) (async tool)": lambda: asyncio.run(ts.call("add_async", ADD_ARGS)),
    }
    for fn in cases.values():
        assert _value(fn()) == 3
        for _ in range(20):
            fn()
    numbers = {name: calibrate_sync(fn, target_s) for name, fn in cases.items()}
    samples = interleave_sync(cases, repeats=repeats, numbers=numbers)
    rows = {}
    for kind in ("sync tool", "async tool"):
        floor = samples[f"asyncio.run(call) ({kind})"]
        rows[f"asyncio.run(call) ({kind})"] = figure(floor)
        rows[f"call_sync ({kind})"] = figure(samples[f"call_sync ({kind})"], floor)
    native = samples["llm native: Tool.function(add).implementation(**args)"]
    rows["llm native: Tool.function(add).implementation(**args)"] = figure(native)
    rows["llm adapter: as_tools(ts) implementation(**args)"] = figure(
        samples["llm adapter: as_tools(ts) implementation(**args)"], native
    )
    return {"rows": rows}


def render(result: dict[str, Any]) -> str:
    parts = []
    for mode in MODES:
        row = result["calls"]["rows"][mode]
        lines = [
            ["toolset.call", fmt_us(row["toolset.call"]), "-", "-"],
            [PREBUILT, fmt_us(row[PREBUILT]), "-", f"{row[PREBUILT]['overhead_us']:+.2f}"],
        ]
        for adapter, native in ADAPTERS.items():
            lines.append([native, fmt_us(row[native]), "1.00x", "-"])
            vs = row[adapter]["vs_native"]
            lines.append(
                [
                    adapter,
                    fmt_us(row[adapter]),
                    f"{vs['median']:.2f}x [{vs['q1']:.2f}-{vs['q3']:.2f}]",
                    f"{row[adapter]['over_toolset_call_us']:+.2f}",
                ]
            )
        parts.append(
            f"{MODE_LABELS[mode]} (us per call)\n"
            + table(["path", "us", "vs native", "us over toolset.call"], lines)
        )
    lines = [[name, fmt_us(fig), fmt_ratio(fig)] for name, fig in result["sync"]["rows"].items()]
    parts.append(
        "Synchronous calls from plain code (us per call)\n"
        + table(["path", "us", "vs asyncio.run"], lines)
    )
    targets = [
        [name, f"{t['value']:.2f}", "met" if t["met"] else "MISSED"]
        for name, t in result["targets"].items()
    ]
    parts.append("Targets\n" + table(["target", "value", ""], targets))
    return "\n\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few, short repeats (smoke run)")
    parser.add_argument("--repeats", type=int, default=40, help="interleaved repeats per case")
    parser.add_argument("--out", default="adapters.json")
    args = parser.parse_args(argv)
    repeats = 4 if args.quick else args.repeats
    target = 0.005 if args.quick else 0.02
    started = time.perf_counter()
    result: dict[str, Any] = {
        "benchmark": "adapters",
        "machine": machine_info(
            ("toolpacks", "pydantic", "pydantic-core", "pydantic-ai-slim", "openai-agents")
        ),
        "repeats": repeats,
        "method": "interleaved shuffled batches; per-call time = batch time / batch size; gc "
        "paused during a batch; 'vs native' = per-repeat adapter/native ratio; 'over "
        "toolset.call' = difference of medians",
    }
    print("calls ...", flush=True)
    result["calls"] = asyncio.run(bench_calls(repeats, target))
    print(f"[{time.perf_counter() - started:.0f}s] synchronous calls ...", flush=True)
    result["sync"] = bench_sync(max(5, repeats // 2), target)
    targets: dict[str, Any] = {}
    for adapter, native in ADAPTERS.items():
        worst = max(result["calls"]["rows"][mode][adapter]["vs_native"]["median"] for mode in MODES)
        targets[f"{adapter} no slower than {native} (worst mode, median ratio)"] = {
            "value": worst,
            "met": worst <= 1.0,
        }
    llm_row = result["sync"]["rows"]["llm adapter: as_tools(ts) implementation(**args)"]
    targets["llm adapter no slower than llm native (sync tool, median ratio)"] = {
        "value": llm_row["ratio"]["median"],
        "met": llm_row["ratio"]["median"] <= 1.0,
    }
    result["targets"] = targets
    result["elapsed_s"] = time.perf_counter() - started
    path = write_json(args.out, result)
    print(render(result))
    print(f"\nwrote {path} in {result['elapsed_s']:.0f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
