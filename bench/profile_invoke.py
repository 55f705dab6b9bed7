"""Where the time of ``await tool.invoke(...)`` goes, measured on the paths that ship.

For the async ``add(a: int, b: int) -> int`` tool of ``bench/_defs.py``:

1. **Whole calls in a running event loop** (interleaved, median over repeats, ratio to the
   floor per repeat):

   * ``await tool.invoke(dict)``: the short path. ``Tool.invoke`` calls
     ``toolpacks.core.call._invoke.start``, which picks ``_fast_invoke`` for a plain tool
     (the script checks that it really does);
   * ``await tool.invoke(json_text)``: the general path (``_invoke.invoke``: the gate's
     ``prepare`` parses the text under caps, checks and validates, then the run);
   * ``_invoke.invoke(tool, dict)``: the general path with a dict, to show what the short path
     saves;
   * the floor: the tool's own validator (``CallPlan.validate``, the pydantic-core validator
     ``Tool.invoke`` uses), ``await fn(**kwargs)`` and a ``ToolResult(...)``; for JSON text,
     the adapter's ``validate_json`` in place of ``validate_python``.

2. **Each step of the short path timed alone**, with no event loop (a coroutine that never
   suspends is driven with ``send(None)``, as ``await`` would drive it): dispatch in
   ``start``, validation, the clock reads, the call id, the call, the result allocation, the
   metadata writes. Their sum is compared with the short path driven whole. What is left over
   is inline code that cannot be timed alone without copying it: the bool/number scan, the
   result's slot writes, coroutine frames, attribute reads and branches. (Each step timed
   alone also carries one call of the timing loop's own, so the split is approximate.)

3. For scale, the general path's own steps: ``parse_arguments`` (JSON text under caps) and
   the gate's ``prepare`` with a dict and with JSON text.

Every case calls library code: nothing here re-implements a toolpacks step. The script reads
internals (``toolpacks.core.call._invoke``, ``_gate``, ``_plan``, ``_run``, ``_jsonargs``), so it
may need updating when they change; a step whose internal is gone is reported and left out.
It is never part of the benchmarks' pass/fail.

Usage: ``python bench/profile_invoke.py [--repeats N] [--number N] [--cprofile]``; writes
``bench/results/profile_invoke.json`` (read by ``bench/report.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import figure, interleave_async, interleave_sync, machine_info, table, write_json
from _defs import ADD_ARGS, ADD_JSON, add_async

from toolpacks import Tool, ToolResult, tool
from toolpacks.core._jsonargs import DEFAULT_LIMITS, parse_arguments
from toolpacks.core.call import _invoke, _run
from toolpacks.core.call._gate import prepare
from toolpacks.core.call._options import DEFAULT_OPTIONS
from toolpacks.core.call._plan import plan_of

SHORT = "(a) await tool.invoke(dict)  [short path, as shipped]"
JSON = "(b) await tool.invoke(json text)  [general path, as shipped]"
GENERAL_DICT = "general path with a dict: await _invoke.invoke(tool, dict)"
FLOOR = "(c) floor: validate + await fn + ToolResult(...)"
FLOOR_JSON = "floor, JSON text: validate_json + await fn + ToolResult(...)"

WHOLE = "Tool.invoke(dict), short path driven whole (no loop)"


def _drive(coro: Any) -> Any:
    """Run a coroutine that never suspends, without an event loop (as ``await`` would)."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("the coroutine suspended: this step needs an event loop")


def _path_of(coro: Any) -> str:
    """Which engine function a coroutine returned by ``Tool.invoke`` runs (then close it)."""
    code = coro.cr_code
    coro.close()
    for name in ("_fast_invoke", "invoke"):
        fn = getattr(_invoke, name, None)
        if fn is not None and code is fn.__code__:
            return f"_invoke.{name}"
    return code.co_qualname


def _whole_calls(t: Tool) -> dict[str, Callable[[int], Any]]:
    """The batches of section 1: ``await batch(n)`` runs ``n`` calls back to back."""
    plan = plan_of(t)
    validate = plan.validate  # the validator Tool.invoke uses for this tool
    validate_json = t.signature.adapter.validate_json
    fn, name = t.fn, t.name

    async def short(n: int) -> None:
        for _ in range(n):
            await t.invoke(ADD_ARGS)

    async def json_text(n: int) -> None:
        for _ in range(n):
            await t.invoke(ADD_JSON)

    async def general_dict(n: int) -> None:
        run = _invoke.invoke
        for _ in range(n):
            await run(t, ADD_ARGS, None, None)

    async def floor(n: int) -> None:
        for _ in range(n):
            value = await fn(**validate(ADD_ARGS))
            ToolResult(value, tool_name=name, call_id="call_1", started_at=1.0, duration=1.0)

    async def floor_json(n: int) -> None:
        for _ in range(n):
            value = await fn(**validate_json(ADD_JSON))
            ToolResult(value, tool_name=name, call_id="call_1", started_at=1.0, duration=1.0)

    return {
        SHORT: short,
        JSON: json_text,
        GENERAL_DICT: general_dict,
        FLOOR: floor,
        FLOOR_JSON: floor_json,
    }


def _steps(t: Tool) -> tuple[dict[str, Callable[[], Any]], list[str]]:
    """Section 2 and 3: each step alone, and the names of those the short path is made of."""
    plan = plan_of(t)
    validate = plan.validate
    kwargs = validate(ADD_ARGS)
    meta = t.metadata
    new_result = _invoke.new_result
    perf, now = time.perf_counter, time.time

    def dispatch() -> None:
        t.invoke(ADD_ARGS).close()

    def write_metadata() -> None:
        meta.start = 1.0
        meta.end = 2.0

    short_path = {
        "Tool.invoke -> start(): pick the short path, make its coroutine (closed unrun)": dispatch,
        "validation: CallPlan.validate(dict) (pydantic-core validator)": lambda: validate(ADD_ARGS),
        "clock: time.time() + 2 x time.perf_counter()": lambda: (now(), perf(), perf()),
        "call id: _run.next_call_id() (short path inlines the f-string)": _run.next_call_id,
        "the call: await fn(**kwargs)": lambda: _drive(add_async(**kwargs)),
        "result: _invoke.new_result(ToolResult) (allocation; slots filled inline)": lambda: (
            new_result(ToolResult)
        ),
        "metadata writes: tool.metadata.start / .end": write_metadata,
    }
    others = {
        WHOLE: lambda: _drive(t.invoke(ADD_ARGS)),
        "Tool.invoke(json text), general path driven whole (no loop)": lambda: _drive(
            t.invoke(ADD_JSON)
        ),
        "_invoke.invoke(tool, dict), general path driven whole (no loop)": lambda: _drive(
            _invoke.invoke(t, ADD_ARGS, None, None)
        ),
        "  gate: prepare(dict)": lambda: prepare(
            t, plan, ADD_ARGS, None, DEFAULT_OPTIONS, "call_1", 0.0
        ),
        "  gate: prepare(json text)": lambda: prepare(
            t, plan, ADD_JSON, None, DEFAULT_OPTIONS, "call_1", 0.0
        ),
        "  gate: parse_arguments(json text) (caps, duplicate keys, non-finite)": lambda: (
            parse_arguments(ADD_JSON, DEFAULT_LIMITS)
        ),
        "  ToolResult(...) keyword constructor (general path, floor)": lambda: ToolResult(
            3, tool_name="add_async", call_id="call_1", started_at=1.0, duration=1.0
        ),
    }
    return {**short_path, **others}, list(short_path)


def _check_paths(t: Tool) -> dict[str, str]:
    """Which engine function each whole call runs; refuse to measure the wrong thing."""
    paths = {
        "tool.invoke(dict)": _path_of(t.invoke(ADD_ARGS)),
        "tool.invoke(json text)": _path_of(t.invoke(ADD_JSON)),
    }
    if paths["tool.invoke(dict)"] != "_invoke._fast_invoke":
        raise SystemExit(f"tool.invoke(dict) no longer takes the short path: {paths}")
    result = asyncio.run(t.invoke(ADD_ARGS))
    if result.is_error or result.value != 3 or result.content != "3":
        raise SystemExit(f"the call does not work: {result!r}")
    return paths


def _call_counts(t: Tool, number: int = 1000) -> dict[str, float]:
    """Function calls per call on each path, counted by cProfile (deterministic, unlike time).

    A change that moves code between modules must leave these the same or lower.
    """
    import cProfile
    import pstats

    cases: dict[str, Callable[[], Any]] = {
        "await tool.invoke(dict)  [short path]": lambda: t.invoke(ADD_ARGS),
        "await tool.invoke(json text)": lambda: t.invoke(ADD_JSON),
        "await _invoke.invoke(tool, dict)  [general path]": lambda: _invoke.invoke(
            t, ADD_ARGS, None, None
        ),
        "await tool.invoke(bad dict)  [an error result]": lambda: t.invoke({"a": "x", "b": 2}),
    }

    async def count() -> dict[str, float]:
        out: dict[str, float] = {}
        for name, make in cases.items():
            await make()  # warm up: the plan, the engine
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(number):
                await make()
            prof.disable()
            out[name] = pstats.Stats(prof).total_calls / number  # type: ignore[attr-defined]
        return out

    return asyncio.run(count())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--number", type=int, default=20_000, help="calls per batch")
    parser.add_argument("--repeats", type=int, default=25, help="batches per case")
    parser.add_argument("--cprofile", action="store_true", help="also print a cProfile")
    args = parser.parse_args(argv)
    number, repeats = args.number, args.repeats

    t = tool(add_async)
    paths = _check_paths(t)

    # 1. whole calls, in a running event loop
    batches = _whole_calls(t)

    async def loop_side() -> dict[str, list[float]]:
        for batch in batches.values():  # warm up
            await batch(min(number, 1000))
        return await interleave_async(
            batches, repeats=repeats, numbers=dict.fromkeys(batches, number)
        )

    loop_samples = asyncio.run(loop_side())
    # JSON text is compared with the JSON floor, everything else with the dict floor.
    floor_of = {JSON: FLOOR_JSON, FLOOR_JSON: FLOOR_JSON}
    in_loop = {
        name: figure(samples, loop_samples[floor_of.get(name, FLOOR)])
        for name, samples in loop_samples.items()
    }

    # 2 and 3. steps alone
    candidates, short_parts = _steps(t)
    steps: dict[str, Callable[[], Any]] = {}
    skipped: dict[str, str] = {}
    for name, fn in candidates.items():
        try:
            for _ in range(1000):  # warm up
                fn()
        except Exception as exc:
            skipped[name] = f"{type(exc).__name__}: {exc}"
            continue
        steps[name] = fn
    step_samples = interleave_sync(steps, repeats=repeats, numbers=dict.fromkeys(steps, number))
    steps_us = {name: statistics.median(s) * 1e6 for name, s in step_samples.items()}
    accounted = sum(steps_us[p] for p in short_parts if p in steps_us)
    whole = steps_us.get(WHOLE, float("nan"))

    # report
    print(f"async add tool; paths taken: {paths}")
    print(f"\n1. In a running event loop (us per call, median of {repeats} batches of {number})")
    rows = [
        [name, f"{fig['median']:.2f}", f"{fig['q1']:.2f}-{fig['q3']:.2f}", _ratio(name, fig)]
        for name, fig in in_loop.items()
    ]
    print(table(["case", "us", "IQR", "ratio to its floor"], rows))
    print("\n2. The short path's steps, each alone, no event loop (us per call, median)")
    rows = [[name, f"{steps_us[name]:.3f}"] for name in short_parts if name in steps_us]
    rows.append(["sum of the steps", f"{accounted:.3f}"])
    rows.append([WHOLE, f"{whole:.3f}"])
    rows.append(
        [
            "rest: bool/number scan, slot writes, frames, attribute reads (inline)",
            f"{whole - accounted:.3f}",
        ]
    )
    print(table(["step", "us"], rows))
    print("\n3. The general path, for scale (us per call, median)")
    rows = [
        [name, f"{us:.3f}"]
        for name, us in steps_us.items()
        if name not in short_parts and name != WHOLE
    ]
    print(table(["step", "us"], rows))
    for name, why in skipped.items():
        print(f"left out: {name}: {why}")
    calls = _call_counts(t)
    print("\n4. Python-level function calls per call (cProfile counts: the same on any machine)")
    print(table(["case", "calls"], [[name, f"{n:g}"] for name, n in calls.items()]))

    result: dict[str, Any] = {
        "benchmark": "profile_invoke",
        "machine": machine_info(),
        "tool": "async add(a: int, b: int) -> int (bench/_defs.py)",
        "number": number,
        "repeats": repeats,
        "paths": paths,
        "floor": FLOOR,
        "in_loop_us": {name: fig["median"] for name, fig in in_loop.items()},
        "in_loop": in_loop,
        "short_path_steps": [p for p in short_parts if p in steps_us],
        "steps_us": steps_us,
        "accounted_us": accounted,
        "whole_us": whole,
        "rest_us": whole - accounted,
        "skipped": skipped,
        "calls_per_call": calls,
    }
    if args.cprofile:
        import cProfile
        import pstats

        prof = cProfile.Profile()

        async def run() -> None:
            for _ in range(50_000):
                await t.invoke(ADD_ARGS)

        prof.enable()
        asyncio.run(run())
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(15)
        result["cprofile"] = buf.getvalue()
        print(buf.getvalue())
    print(f"wrote {write_json('profile_invoke.json', result)}")
    return 0


def _ratio(name: str, fig: dict[str, Any]) -> str:
    if name in (FLOOR, FLOOR_JSON):
        return "1.00x (floor)"
    r = fig["ratio"]
    return f"{r['median']:.2f}x [{r['q1']:.2f}-{r['q3']:.2f}]"


if __name__ == "__main__":
    raise SystemExit(main())
