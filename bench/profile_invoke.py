"""Where the time of ``await t.invoke(args)`` goes, step by step (async ``add`` tool).

A profiler's own cost distorts calls that take a microsecond, so this script measures each step
of ``toolpacks.core._invoke.invoke`` *in isolation* (``timeit``-style, median over repeats, gc
paused) and compares the sum with the measured whole. It also measures a *lean reference*: the
same contract reduced to what a call needs (validate, call, a ``ToolResult`` whose text is
rendered lazily), to show what the floor allows.

It reads toolpacks internals (``_invoke``, ``_result``), so it may need updating when they
change; nothing here is part of the benchmarks' pass/fail. Usage:
``python bench/profile_invoke.py [--cprofile]``; writes ``bench/results/profile_invoke.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import io
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_info, table, write_json
from _defs import ADD_ADAPTER, ADD_ARGS, add_async

from toolpacks import ToolResult, tool
from toolpacks import _invoke as inv
from toolpacks import _result as res


def _per_call(fn: Any, number: int, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        out.append((time.perf_counter() - t0) / number)
        gc.enable()
    return out


async def _aper_call(fn: Any, number: int, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        t0 = time.perf_counter()
        for _ in range(number):
            await fn()
        out.append((time.perf_counter() - t0) / number)
        gc.enable()
    return out


def _no_op(*args: Any) -> None:
    return None


def _constant_id() -> str:
    return "call_1"


def _drive(coro: Any) -> Any:
    """Run a coroutine that never suspends, without an event loop (as ``await`` would)."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    raise RuntimeError("coroutine suspended")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=25)
    parser.add_argument("--cprofile", action="store_true", help="also print a cProfile")
    args = parser.parse_args(argv)
    number, repeats = args.number, args.repeats

    t = tool(add_async)
    opts = inv.DEFAULT_OPTIONS
    validate = ADD_ADAPTER.validate_python
    core_validate = ADD_ADAPTER.validator.validate_python
    asyncio.run(t.invoke(ADD_ARGS))  # builds the tool's call plan
    plan = getattr(t, "_plan", None)  # internal: the per-tool call plan, when there is one

    fresh = ToolResult(3, tool_name="add_async", call_id="call_1")

    def new_result() -> ToolResult:
        return ToolResult(3, tool_name="add_async", call_id="call_1", started_at=1.0, duration=1.0)

    def truncate_fresh() -> None:
        inv._truncate(new_result(), opts.max_content_chars)

    async def lean_invoke(arguments: Any) -> ToolResult:
        # The reference: validate, call, wrap; text rendered on first access of .content.
        kwargs = validate(arguments)
        value = await t.fn(**kwargs)
        return ToolResult(value, tool_name=t.name, call_id="", started_at=0.0, duration=0.0)

    # Each step alone. A step whose internal no longer exists (toolpacks changed) is left out.
    candidates: dict[str, Any] = {
        # the floor, for scale
        "floor: validate_python + await fn (no loop)": lambda: _drive(
            add_async(**validate(ADD_ARGS))
        ),
        "  TypeAdapter.validate_python(args)": lambda: validate(ADD_ARGS),
        "  SchemaValidator.validate_python(args) (adapter.validator)": lambda: core_validate(
            ADD_ARGS
        ),
        # the steps of toolpacks' invoke
        "_prepare(...) (parse, checks, validate, context)": lambda: inv._prepare(
            t, ADD_ARGS, None, opts, "call_1", 0.0
        ),
        "_next_call_id() (f-string per call)": lambda: inv._next_call_id(),
        "time.time() x2 + perf_counter() x2": lambda: (
            time.time(),
            time.perf_counter(),
            time.time(),
            time.perf_counter(),
        ),
        "bool(tool.hooks) + bool(options.hooks) (dataclass __bool__)": lambda: (
            bool(t.hooks) or bool(opts.hooks)
        ),
        "_check_output(tool, 3) (validate_output)": lambda: inv._check_output(t, 3),
        "ToolResult(...) construction": new_result,
        "_truncate(fresh result) (renders .content eagerly)": truncate_fresh,
        "  render_value(3) (pydantic_core.to_json + decode)": lambda: res.render_value(3),
        "tool.metadata start/end writes": lambda: (
            setattr(t.metadata, "start", 1.0),
            setattr(t.metadata, "end", 2.0),
        ),
        "_invoke.invoke(t, args) driven without a loop": lambda: _drive(
            inv.invoke(t, ADD_ARGS, None, None)
        ),
        "Tool.invoke(args) driven without a loop": lambda: _drive(t.invoke(ADD_ARGS)),
        "lean reference invoke driven without a loop": lambda: _drive(lean_invoke(ADD_ARGS)),
    }
    assert fresh.content == "3"
    steps: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    for name, fn in candidates.items():
        try:
            for _ in range(1000):  # warm up
                fn()
        except Exception as exc:
            skipped[name] = f"{type(exc).__name__}: {exc}"
            continue
        steps[name] = fn
    # interleave: one batch of every step per round
    samples: dict[str, list[float]] = {k: [] for k in steps}
    for _ in range(repeats):
        for name, fn in steps.items():
            samples[name].extend(_per_call(fn, number, 1))
    medians = {k: statistics.median(v) * 1e6 for k, v in samples.items()}

    # In a running event loop: an ablation waterfall. Each variant switches off one more piece
    # of toolpacks' invoke (by patching it in this process only), so the difference between
    # consecutive variants is what that piece costs in place. Variants are interleaved. A piece
    # whose patch no longer applies (toolpacks changed) or breaks the call is left out.
    def set_attr(obj: Any, name: str, value: Any) -> Any:
        if not hasattr(obj, name):
            raise AttributeError(f"{obj!r} has no {name!r}")
        old = getattr(obj, name)
        setattr(obj, name, value)
        return lambda: setattr(obj, name, old)

    def lean_prepare(
        tool_: Any, arguments: Any, context: Any, options: Any, call_id: str, started: float
    ) -> Any:
        return tool_._plan.validate(arguments), None

    pieces: list[tuple[str, Any]] = [
        ("- eager content rendering in _truncate", lambda: set_attr(inv, "_truncate", _no_op)),
        (
            "- output type check (validate_output=False)",
            lambda: set_attr(t, "validate_output", False),
        ),
        ("- call id f-string (constant id)", lambda: set_attr(inv, "_next_call_id", _constant_id)),
        ("- hook emptiness checks (dataclass __bool__)", lambda: set_attr(t, "hooks", ())),
        ("- _prepare's checks (validate only)", lambda: set_attr(inv, "_prepare", lean_prepare)),
        (
            "- TypeAdapter wrapper (SchemaValidator directly)",
            lambda: set_attr(plan, "validate", core_validate),
        ),
    ]
    no_hooks_opts = inv.CallOptions(hooks=())  # type: ignore[arg-type]
    applied: list[tuple[str, Any]] = []  # the pieces that apply, cumulatively

    async def works(patches: list[Any], opts_: Any) -> bool:
        undo = []
        try:
            for apply in patches:
                undo.append(apply())
            result = await inv.invoke(t, ADD_ARGS, None, opts_)
            return not result.is_error and result.value == 3
        except Exception:
            return False
        finally:
            for u in reversed(undo):
                u()

    def floor_call() -> Any:
        return add_async(**validate(ADD_ARGS))

    def direct_call(opts_: Any) -> Any:
        return lambda: inv.invoke(t, ADD_ARGS, None, opts_)

    async def loop_side() -> dict[str, list[float]]:
        variants: dict[str, tuple[list[Any], Any]] = {
            "await t.invoke(args)  [as shipped]": ([], None),
            "- Tool.invoke wrapper (call _invoke.invoke directly)": ([], None),
        }
        hooks_off = False
        for label, apply in pieces:
            is_hooks = "hook" in label
            opts_ = no_hooks_opts if hooks_off or is_hooks else None
            candidate = [p for _, p in applied] + [apply]
            if await works(candidate, opts_):
                applied.append((label, apply))
                variants[label] = (candidate, opts_)
                hooks_off = hooks_off or is_hooks
            else:
                skipped[label] = "patch no longer applies to this toolpacks"
        out: dict[str, list[float]] = {k: [] for k in variants}
        out["floor: validate_python + await fn"] = []
        out["lean reference (validate, call, ToolResult)"] = []
        for _ in range(repeats):
            for name in out:
                if name.startswith("floor"):
                    fn, patches = floor_call, []
                elif name.startswith("lean"):
                    fn, patches = (lambda: lean_invoke(ADD_ARGS)), []
                elif name.startswith("await t.invoke"):
                    fn, patches = (lambda: t.invoke(ADD_ARGS)), []
                else:
                    patches, opts_ = variants[name]
                    fn = direct_call(opts_)
                undo = [apply() for apply in patches]
                try:
                    out[name].extend(await _aper_call(fn, number, 1))
                finally:
                    for u in reversed(undo):
                        u()
        return out

    in_loop = asyncio.run(loop_side())
    loop_medians = {k: statistics.median(v) * 1e6 for k, v in in_loop.items()}

    rows = [[name, f"{us:.3f}"] for name, us in medians.items()]
    print("Each step alone (us per call, median of", repeats, "batches of", number, ")")
    print(table(["step", "us"], rows))
    parts = [
        "_prepare(...) (parse, checks, validate, context)",
        "_next_call_id() (f-string per call)",
        "time.time() x2 + perf_counter() x2",
        "bool(tool.hooks) + bool(options.hooks) (dataclass __bool__)",
        "_check_output(tool, 3) (validate_output)",
        "_truncate(fresh result) (renders .content eagerly)",
        "tool.metadata start/end writes",
    ]
    accounted = sum(medians.get(p, 0.0) for p in parts)
    whole = medians.get("Tool.invoke(args) driven without a loop", float("nan"))
    print(f"\nsum of the steps above (ToolResult counted inside _truncate): {accounted:.2f} us")
    print(
        f"Tool.invoke as a whole, no loop: {whole:.2f} us; the rest (coroutine frames, attribute"
        f" reads, branches, the import in Tool.invoke): {whole - accounted:.2f} us"
    )
    print(
        "\nIn a running event loop: ablation waterfall (us per call, median; each row removes"
        " one more piece; step = what that piece costs in place)"
    )
    floor = loop_medians["floor: validate_python + await fn"]
    rows = []
    prev = None
    for name, us in loop_medians.items():
        step = "" if prev is None or name.startswith(("floor", "lean")) else f"{prev - us:+.2f}"
        rows.append([name, f"{us:.2f}", step, f"{us / floor:.2f}x"])
        if not name.startswith(("floor", "lean")):
            prev = us
    print(table(["variant", "us", "step", "ratio to floor"], rows))
    for name, why in skipped.items():
        print(f"left out: {name}: {why}")
    result = {
        "benchmark": "profile_invoke",
        "machine": machine_info(),
        "steps_us": medians,
        "in_loop_us": loop_medians,
        "accounted_us": accounted,
        "skipped": skipped,
        "whole_us": whole,
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


if __name__ == "__main__":
    raise SystemExit(main())
