"""How long scope filtering takes for a toolset of 10^4 tools (issue 31: <= 5 ms).

``Toolset.for_principal`` filters the entries once per distinct scope set (cached in the
parent); this times the first view of a scope set (the filter), a later view of the same set
(the cache), and the audit cost of a call with no handler attached.

    .venv/bin/python bench/scope_filter.py
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time

from toolpacks import Principal, ToolContext, Toolset
from toolpacks.core._tool import Tool

N = 10_000


def _fn(x: int) -> int:
    """Return x."""
    return x


def build() -> Toolset:
    tools = [Tool(_fn, name=f"t{i}", scopes=[f"s{i % 10}"] if i % 2 else ()) for i in range(N)]
    return Toolset(tools, agent="bench")


def timed(fn: object, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    ts = build()
    t0 = time.perf_counter()
    ts.scope_table  # built once per toolset  # noqa: B018
    table_ms = (time.perf_counter() - t0) * 1000
    firsts = []
    for k in range(20):  # 20 distinct scope sets, each filtered once
        p = Principal(f"u{k}", scopes={f"s{k % 10}", f"x{k}"})
        t0 = time.perf_counter()
        ts.for_principal(p).names()
        firsts.append((time.perf_counter() - t0) * 1000)
    p = Principal("alice", scopes={"s1", "s3"})
    ts.for_principal(p)
    cached = timed(lambda: ts.for_principal(Principal("bob", scopes={"s1", "s3"})).names(), 200)
    small = Toolset([Tool(_fn, name="f")], agent="bench")
    ctx = ToolContext(principal=p)

    async def calls(n: int) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            await small.call("f", {"x": 1}, ctx)
        return (time.perf_counter() - t0) / n * 1e6

    per_call_us = asyncio.run(calls(20_000))
    from toolpacks.host.identity._audit import audit_call

    result = asyncio.run(small.call("f", {"x": 1}, ctx))
    t0 = time.perf_counter()
    for _ in range(100_000):
        audit_call("bench", "alice", "f", result, 0.001)
    audit_us = (time.perf_counter() - t0) / 100_000 * 1e6
    report = {
        "tools": N,
        "scope_table_build_ms": round(table_ms, 2),
        "first_view_of_a_scope_set_ms_median": round(statistics.median(firsts), 3),
        "first_view_of_a_scope_set_ms_max": round(max(firsts), 3),
        "cached_view_ms_median": round(statistics.median(cached), 4),
        "call_us": round(per_call_us, 2),
        "audit_us_per_call_no_handler": round(audit_us, 3),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
