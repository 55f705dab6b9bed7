"""The "MCP over HTTP under load" section of ``docs/benchmarks.md``, from ``results/http.json``.

Used by ``report.py``; the figures come from ``bench_http.py``.
"""

from __future__ import annotations

from typing import Any

X = "\u00d7"  # the multiplication sign of the ratios
DASH = "\u2013"  # an en dash, for ranges
TOOLS = ("add", "add_sync")
REVISIONS = ("2025-11-25", "2026-07-28")
TOOL_LABELS = {"add": "async `add`", "add_sync": "sync `add_sync`"}


def _table(headers: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out.extend("| " + " | ".join(r) + " |" for r in rows)
    return "\n".join(out)


def _spread(fig: dict[str, Any], digits: int = 0) -> str:
    """``median (min–max)`` of a summary."""  # noqa: RUF002
    if not fig or not fig.get("n"):
        return "n/a"
    low, mid, high = (f"{fig[k]:,.{digits}f}" for k in ("min", "median", "max"))
    return f"{mid} ({low}{DASH}{high})"


def _ratio(fig: dict[str, Any] | None) -> str:
    if not fig or not fig.get("n"):
        return "n/a"
    return f"{fig['median']:.2f}{X} ({fig['min']:.2f}{DASH}{fig['max']:.2f})"


def _case_rows(data: dict[str, Any], placement: str, servers: tuple[str, ...]) -> list[list[str]]:
    rows = []
    for server in servers:
        for tool in TOOLS:
            for rev in REVISIONS:
                f = data["figures"].get(f"{placement}/{server}/{tool}/{rev}")
                if not f:
                    continue
                per_s = f["per_second"]
                rows.append(
                    [
                        server,
                        TOOL_LABELS[tool],
                        rev,
                        _spread(f["calls_per_s"]),
                        f"{per_s.get('q1', 0):,.0f}{DASH}{per_s.get('q3', 0):,.0f}",
                        _spread(f["calls_per_cpu_s"]),
                        f"{f['p50_ms']['median']:.1f}",
                        f"{f['p99_ms']['median']:.1f}",
                        str(f["errors"]),
                        f"{f['server_cpu']['median']:.2f} / {f['loadgen_cpu']['median']:.2f}",
                    ]
                )
    return rows


CASE_HEADERS = [
    "server",
    "tool",
    "revision",
    "calls/s: median (min–max of rounds)",  # noqa: RUF001
    "calls/s per second: IQR",
    "calls per server CPU-second",
    "p50 ms",
    "p99 ms",
    "errors",
    "CPU used: server / locust",
]


def _targets(data: dict[str, Any]) -> str:
    rows = []
    for name, t in data["targets"].items():
        value = t["value"]
        if value is None:
            shown = "n/a"
        elif t["unit"] == "x":
            shown = f"{value:.2f}{X}"
        else:
            shown = f"{value:,} {t['unit']}"
        rows.append([name, shown, "met" if t["met"] else "**missed**"])
    return _table(["target", "measured (median over rounds)", "status"], rows)


def _ratios(data: dict[str, Any]) -> str:
    rat = data["ratios"]
    rows = []
    for tool in TOOLS:
        for rev in REVISIONS:
            rows.append(
                [
                    TOOL_LABELS[tool],
                    rev,
                    _ratio(rat.get(f"w1_vs_fastmcp/{tool}/{rev}")),
                    _ratio(rat.get(f"w1_vs_fastmcp_per_cpu/{tool}/{rev}")),
                    _ratio(rat.get(f"w2_vs_w1_measured/{tool}/{rev}")),
                    _ratio(rat.get(f"w2_vs_w1_cpu_normalised/{tool}/{rev}")),
                    _ratio(rat.get(f"w4_vs_w1_measured/{tool}/{rev}")),
                ]
            )
    headers = [
        "tool",
        "revision",
        "w1 / FastMCP, calls/s",
        "w1 / FastMCP, per CPU-second",
        "w2 / w1, measured",
        "w2 / w1, CPU-normalised",
        "w4 / w1, measured",
    ]
    return _table(headers, rows)


def _connections(data: dict[str, Any]) -> str:
    rows = []
    for workers in (2, 4):
        for tool in TOOLS:
            for rev in REVISIONS:
                f = data["figures"].get(f"shared/toolpacks-w{workers}/{tool}/{rev}")
                if not f:
                    continue
                spreads = "; ".join(
                    "/".join(str(n) for n in split) for split in f["connections_per_worker"]
                )
                cpus = "; ".join(
                    "/".join(f"{c:.2f}" for c in r if c >= 0.01) for r in f["cpu_per_process"]
                )
                rows.append([f"w{workers}", TOOL_LABELS[tool], rev, spreads, cpus])
    headers = ["server", "tool", "revision", "connections per worker", "CPU per process"]
    return _table(headers, rows)


def _fault(fault: dict[str, Any]) -> str:
    errors = ", ".join(f"{k}: {n}" for k, n in fault["client_errors"].items()) or "none"
    replaced = fault["replacement_started_after_s"]
    rows = [
        ["calls sent", f"{fault['sent']:,}"],
        ["answered with the right result", f"{fault['answered_ok']:,}"],
        ["no answer (connection closed by the kill)", f"{fault['no_answer']:,}"],
        ["… of which the tool had run (its reply was lost)", f"{fault['no_answer_but_ran']:,}"],
        ["… of which the tool had not run", f"{fault['no_answer_never_ran']:,}"],
        ["refused or wrong answers", f"{fault['refused']:,}"],
        [
            "answered but not in the ledger (acknowledged, lost)",
            str(fault["acknowledged_not_in_ledger"]),
        ],
        ["run twice (in the ledger more than once)", str(fault["run_twice"])],
        ["answers to an id not pending (twice, or never sent)", str(fault["unexpected_ids"])],
        ["still unanswered when the run ended", str(fault["unanswered_at_end"])],
        ["errors seen by clients", errors],
        ["connections per worker at the kill", "/".join(map(str, fault["connections_per_worker"]))],
        ["connections of the killed worker", str(fault["victim_connections"])],
        [
            "replacement worker started after",
            "not seen" if replaced is None else f"{replaced:.2f} s",
        ],
        ["supervisor still serving afterwards", "yes" if fault["supervisor_alive_after"] else "no"],
        ["calls/s, each second of the window", ", ".join(map(str, fault["per_second"]))],
    ]
    intro = (
        f"`--workers 2`, {fault['users']} users calling `record` ({fault['revision']}) for "
        f"{fault['duration_s']:g} s; the worker holding the most connections was SIGKILLed "
        f"{fault['killed_at_s']:g} s into the window. Every call id is unique; the tool appends "
        "its id to a ledger file, so a call that ran shows there, once per run."
    )
    return intro + "\n\n" + _table(["", ""], rows)


def http_section(data: dict[str, Any]) -> str:
    """The section, in Markdown."""
    s = data["settings"]
    m = data["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in m.get("versions", {}).items() if v)
    load = ", ".join(f"{x:.2f}" for x in m.get("loadavg_at_start") or []) or "unknown"
    parts = [
        "## MCP over streamable HTTP under load (locust)",
        (
            f"`bench/bench_http.py` (issue 15), run at {m.get('when')} on {m.get('cpu')} "
            f"({m.get('cores')} cores; load average {load} at the start; {versions}). "
            f"{s['users']} locust users "
            f"(`FastHttpUser`, one keep-alive connection each, connecting over {s['ramp_s']:g} s) "
            "send `tools/call` POSTs back to back, speaking MCP's JSON-RPC directly; every reply "
            "is checked (status, id, value); *errors* count every reply that was not the "
            "right answer, warm-ups included, and every call left unanswered. Each case: a "
            "warm-up, then "
            f"{s['duration_s']:g} s measured; {s['rounds']} rounds, each running every case "
            "once in a shuffled order. Servers, all stateless with JSON replies: `toolpacks "
            'serve --http --workers N` and FastMCP\'s `run_http_async(transport="http", '
            "stateless_http=True, json_response=True)`, the same tools (`add` async, "
            "`add_sync` a plain function)."
        ),
        (
            "**Placement.** *pinned*: the server on CPU 1, locust on CPU 0 (every thread's "
            "affinity set): one core each, for toolpacks `--workers 1` against FastMCP. "
            "*shared*: all processes on both CPUs, for `--workers 1, 2, 4`. Two workers cannot "
            "have two cores while the load generator needs one, so the scaling ratio is shown "
            "twice: as measured, and CPU-normalised (calls per CPU-second the two-worker server "
            "used, times 2 cores, against the pinned one worker's calls per CPU-second): what "
            "two dedicated cores would give if the work per call stays the same and both "
            "workers get connections."
        ),
        "### Targets",
        _targets(data),
        "### Ratios (per round, then median and min–max)",  # noqa: RUF001
        _ratios(data),
        "### One core each: toolpacks `--workers 1` and FastMCP (pinned)",
        _table(CASE_HEADERS, _case_rows(data, "pinned", ("toolpacks-w1", "fastmcp"))),
        "### Workers (shared cores)",
        _table(
            CASE_HEADERS,
            _case_rows(data, "shared", ("toolpacks-w1", "toolpacks-w2", "toolpacks-w4")),
        ),
        (
            "How the connections (locust's, counted when the window opened) and the CPU were "
            "spread over the workers in each round, busiest first (processes that used under "
            "1% of a core, the supervisor among them, are left out):"
        ),
        _connections(data),
    ]
    if data.get("fault"):
        parts += ["### A worker killed under load", _fault(data["fault"])]
    return "\n\n".join(parts)
