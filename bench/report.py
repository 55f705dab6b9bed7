"""Turn ``bench/results/*.json`` into ``docs/benchmarks.md`` and the figures in ``bench/README.md``.

Reads ``core.json`` (bench_core.py), ``peers.json`` (bench_peers.py), ``install.json``
(run.sh), ``profile_invoke.json`` (profile_invoke.py), ``http.json`` (bench_http.py) and, when
present, the results of ``bench/bench_discovery.py`` (any ``discovery*.json``). Missing files
leave their section out.

Usage: ``python bench/report.py [--docs docs/benchmarks.md] [--readme bench/README.md]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results"
MODES = ("async_dict", "async_json", "sync_dict", "sync_json")
MODE_HEADERS = {
    "async_dict": "async, dict",
    "async_json": "async, JSON",
    "sync_dict": "sync, dict",
    "sync_json": "sync, JSON",
}
README_START = "<!-- figures:start (written by bench/report.py) -->"
README_END = "<!-- figures:end -->"
X = "\u00d7"  # the multiplication sign of the ratios
DASH = "\u2013"  # an en dash, for ranges


def _load(name: str) -> Any:
    path = RESULTS / name
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return None


def _num(value: float, digits: int | None = None) -> str:
    if digits is None:
        digits = 2 if abs(value) < 10 else (1 if abs(value) < 100 else 0)
    return f"{value:,.{digits}f}"


def cell(fig: dict[str, Any] | None, *, ratio: bool = True, unit: str = "") -> str:
    """``median (q1–q3)`` and, with a floor, ``· ratio×``."""  # noqa: RUF002
    if not fig or not fig.get("n"):
        return "n/a"
    text = f"{_num(fig['median'])}{unit} ({_num(fig['q1'])}{DASH}{_num(fig['q3'])})"
    r = fig.get("ratio")
    if ratio and r and r.get("n"):
        text += f" · **{r['median']:.2f}{X}**"
    return text


def ratio_cell(fig: dict[str, Any] | None) -> str:
    r = (fig or {}).get("ratio")
    if not r or not r.get("n"):
        return "n/a"
    return f"{r['median']:.2f}{X} ({r['q1']:.2f}{DASH}{r['q3']:.2f})"


def _last_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[-1] if lines else ""


def md_table(headers: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out.extend("| " + " | ".join(r) + " |" for r in rows)
    return "\n".join(out)


def machine_section(machine: dict[str, Any], extra_versions: dict[str, Any] | None = None) -> str:
    versions = dict(machine.get("versions", {}))
    versions.update(extra_versions or {})
    lines = [
        f"- CPU: {machine.get('cpu')} ({machine.get('cores')} cores visible)",
        f"- Python: {machine.get('python')} ({machine.get('implementation')}), {machine.get('os')}",
        f"- Load average when the run started: {machine.get('loadavg_at_start')}",
        f"- Run at: {machine.get('when')}",
        "- Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items() if v),
    ]
    return "\n".join(lines)


def targets_section(core: Any, peers: Any) -> str:
    rows = []
    if peers:
        for name, t in peers["targets"].items():
            value = "n/a" if t["value"] is None else f"{t['value']:.2f}{X}"
            rows.append([name, value, "met" if t["met"] else "**missed**"])
    elif core:
        for name, t in core["targets"].items():
            rows.append(
                [
                    name.replace("_", " "),
                    f"{t['ratio']:.2f}{X}",
                    "met" if t["met"] else "**missed**",
                ]
            )
    return md_table(["target", "measured (median ratio)", "status"], rows)


def core_section(core: dict[str, Any]) -> str:
    rows = []
    for pair in core["invoke"]["pairs"]:
        fig, floor = pair["figure"], pair["floor_figure"]
        rows.append(
            [
                pair["label"],
                cell(fig, ratio=False),
                cell(floor, ratio=False),
                _num(fig["overhead_us"]),
                ratio_cell(fig),
            ]
        )
    ref = core["invoke"]["reference"]
    figs = core["invoke"]["figures"]
    rows.append(
        [
            "async tool, JSON args, against `validate_json` + call",
            cell(ref["async_json_vs_validate_json"], ratio=False),
            cell(figs["floor_async_validate_json"], ratio=False),
            _num(ref["async_json_vs_validate_json"]["overhead_us"]),
            ratio_cell(ref["async_json_vs_validate_json"]),
        ]
    )
    text = md_table(["per call", "toolpacks µs", "floor µs", "overhead µs", "ratio to floor"], rows)
    hop = ref["sync_floor_thread_hop"]
    text += (
        f"\n\nThe thread hop alone (`to_thread` floor minus the no-thread floor) costs "
        f"{_num(hop['overhead_us'])} µs per call on this machine: sync figures are dominated by it "
        "and are far noisier than async ones."
    )
    rows = []
    for pair in core["define"]["pairs"]:
        rows.append(
            [
                pair["label"],
                cell(pair["figure"], ratio=False),
                cell(pair["floor_figure"], ratio=False),
                ratio_cell(pair["figure"]),
            ]
        )
    text += "\n\n" + md_table(["definition", "toolpacks µs", "floor µs", "ratio"], rows)
    return text


def peers_sections(peers: dict[str, Any]) -> list[str]:
    libs = peers["libraries"]
    parts = []
    # definition
    rows = [
        [
            "floor: `TypeAdapter(TypedDict).json_schema()`",
            cell(peers["define"]["rows"]["small"]["floor"]),
            cell(peers["define"]["rows"]["rich"]["floor"]),
        ]
    ]
    for lib in libs:
        rows.append(
            [
                lib,
                cell(peers["define"]["rows"]["small"].get(lib)),
                cell(peers["define"]["rows"]["rich"].get(lib)),
            ]
        )
    text = (
        "## 1. Defining a tool\n\nDecorate + JSON Schema, µs per definition, median (IQR)\n"
        "· ratio to "
        "the floor.\n"
        "Small: `add(a: int, b: int) -> int`. Rich: a nested model, `Optional`, `Literal`, `list`, "
        "`Annotated[T, Field(description=..., ge=...)]`, defaults.\n\n"
    )
    text += md_table(["library", "small", "rich"], rows)
    for lib, note in peers["define"].get("notes", {}).items():
        text += f"\n\n- {lib}: {note}"
    parts.append(text)
    # invocation
    rows = [["floor"] + [cell(peers["invoke"]["rows"][m]["floor"]) for m in MODES]]
    for lib in libs:
        rows.append([lib] + [cell(peers["invoke"]["rows"][m].get(lib)) for m in MODES])
    text = (
        "## 2. Invoking a tool\n\n`add(a, b)` from a model-style argument dict and from a JSON\n"
        "string, µs per call, median (IQR) · ratio to the floor of the same run. Floors:\n"
        "`validate_python(args)` + `await fn(**v)`; `json.loads` first for JSON text;\n"
        "`await asyncio.to_thread(fn, **v)` for sync functions.\n\n"
    )
    text += md_table(["library", *[MODE_HEADERS[m] for m in MODES]], rows)
    errors = peers["invoke"].get("errors") or {}
    for lib, err in errors.items():
        text += f"\n\n- {lib}: invocation failed: `{err}`"
    parts.append(text)
    # concurrency
    conc = peers["concurrency"]
    rows = [["bare `asyncio.gather` over validate + call", cell(conc["rows"]["floor"], unit="")]]
    rows.extend([lib, cell(conc["rows"].get(lib))] for lib in libs if lib in conc["rows"])
    parts.append(
        f"## 3. {conc['concurrency']:,} concurrent async invocations\n\n"
        f"One `asyncio.gather` of {conc['concurrency']:,} invocations of the async `add` tool\n"
        "(dict arguments), "
        "ms per gather, median (IQR) · ratio to bare `gather` over the same validated calls.\n\n"
        + md_table(["library", "ms per gather"], rows)
    )
    # imports
    imp = peers["imports"]
    rows = [
        [f"`{name}`", cell(fig, ratio=False), _num(fig["net_of_startup_ms"])]
        for name, fig in imp["rows"].items()
    ]
    text = (
        "## 5. Import and CLI wall time\n\nFresh subprocess each time, ms, median (IQR);\n"
        '"net" subtracts '
        "the median of `python -c pass`.\n\n" + md_table(["command", "wall ms", "net ms"], rows)
    )
    rows = [
        [label, f"{r['wall']['median']:.2f}{X}", f"{r['net_of_startup']['median']:.2f}{X}"]
        for label, r in imp["ratios"].items()
    ]
    text += "\n\n" + md_table(["ratio", "wall", "net of startup"], rows)
    for label, err in (imp.get("cli_errors") or {}).items():
        last = err.splitlines()[-1] if err else ""
        text += f"\n\n- `{label}` was not measured: it failed (`{last}`)."
    parts.append(text)
    return parts


def adapters_section(data: dict[str, Any]) -> str:
    """Each framework adapter against the framework's own function tool, per call."""
    labels = {
        "async_json": "async tool, JSON text",
        "sync_json": "sync tool, JSON text",
        "async_dict": "async tool, dict",
        "sync_dict": "sync tool, dict",
    }
    parts = [
        f"## Framework adapters (issue 16)\n\nFrom `bench/bench_adapters.py`: each adapter's "
        "per-call time against the framework's native function-tool path, and "
        f"`Toolset.call`, which every adapter goes through. Median (q1{DASH}q3) µs."
    ]
    for mode, rows in data.get("calls", {}).get("rows", {}).items():
        table = []
        for path, fig in rows.items():
            native = rows.get(path.replace(" adapter", " native")) if "adapter" in path else None
            shown = f"{fig['median'] / native['median']:.2f}{X}" if native else "-"
            table.append(
                [path, f"{fig['median']:.2f} ({fig['q1']:.2f}{DASH}{fig['q3']:.2f})", shown]
            )
        parts.append(
            f"### {labels.get(mode, mode)}\n\n"
            + md_table(["path", "µs", "adapter ÷ native (medians)"], table)
        )
    sync_rows = data.get("sync", {}).get("rows", {})
    if sync_rows:
        table = [
            [path, f"{fig['median']:.2f} ({fig['q1']:.2f}{DASH}{fig['q3']:.2f})"]
            for path, fig in sync_rows.items()
        ]
        parts.append("### synchronous calls (and llm)\n\n" + md_table(["path", "µs"], table))
    targets = [
        [name, f"{t['value']:.2f}{X}", "met" if t["met"] else "**missed**"]
        for name, t in data.get("targets", {}).items()
    ]
    if targets:
        parts.append(md_table(["target", "measured", "status"], targets))
    return "\n\n".join(parts)


def startup_section(data: dict[str, Any]) -> str:
    """Issue 17: import, serve cold start and listing without importing packs."""
    rows = [
        [
            name,
            f"{t['value']:.2f}" + ("" if "listed" in name and "<" in name else X),
            f"{t['limit']}",
            "met" if t["met"] else "**missed**",
        ]
        for name, t in data.get("targets", {}).items()
    ]
    text = (
        "## Startup and definitions (issue 17)\n\nFrom `bench/bench_startup.py`: fresh "
        "processes, interleaved, medians (seconds for the 10^4-tool listings, ratios "
        f"otherwise). Packs imported while listing: {data.get('packs_imported_while_listing')}."
    )
    return text + "\n\n" + md_table(["target", "measured", "limit", "status"], rows)


IMPORT_CASES = {
    "tool": "`from toolpacks import tool`",
    "Host": "`from toolpacks import Host`",
    "Toolset": "`from toolpacks import Toolset`",
    "Host built": "`from toolpacks import Host` + `Host({}, discover=False).toolset()`",
}


def import_ratio_section(data: dict[str, Any]) -> str:
    """Issue 35: the paired import ratios of ``bench/import_ratio.py``, this tree and before."""
    machine = data.get("machine", {})
    load = machine.get("loadavg_at_start") or []
    end = data.get("loadavg_at_end") or []
    rows = []
    for key, label in IMPORT_CASES.items():
        for name, tree in ((key, "this tree"), (key + " (before)", "before")):
            fig = data.get(name)
            if not fig:
                continue
            target, r = fig["target"], fig["ratio"]
            status = (
                "-"
                if target is None or tree == "before"
                else ("met" if r["median"] <= target else "**missed**")
            )
            rows.append(
                [
                    label,
                    tree,
                    cell(fig["ms"], ratio=False),
                    f"{r['median']:.2f}{X} ({r['q1']:.2f}{DASH}{r['q3']:.2f})",
                    f"{target}{X}" if target is not None else "-",
                    status,
                ]
            )
    before = data.get("before")
    text = (
        "## Import cost against pydantic (issue 35)\n\nFrom `bench/import_ratio.py`: "
        f"{data.get('repeats')} repeats, each timing every case in a fresh interpreter in a "
        "shuffled order (the import statement alone, start-up left out); a ratio is per repeat, "
        "against `from pydantic import BaseModel` of the same repeat "
        f"({cell(data.get('pydantic_ms'), ratio=False)} ms). Load average at the start "
        f"{', '.join(f'{v:.2f}' for v in load)}, at the end {', '.join(f'{v:.2f}' for v in end)}; "
        f"{machine.get('when', '')}."
    )
    if before:
        text += f' "before" is the tree given with `--before`: {before}.'
    headers = ["import", "tree", "ms", "ratio to pydantic", "target", "status"]
    return text + "\n\n" + md_table(headers, rows)


def discovery_section() -> str:
    files = sorted(RESULTS.glob("discovery*.json"))
    console = RESULTS / "discovery.txt"
    if not files and console.exists() and console.read_text(encoding="utf-8").strip():
        return (
            "## 4. Discovery (toolpacks only)\n\nFrom `bench/bench_discovery.py` (its console "
            "output):\n\n```text\n" + console.read_text(encoding="utf-8").strip()[-6000:] + "\n```"
        )
    if not files:
        return (
            "## 4. Discovery\n\nNo results: `bench/bench_discovery.py` (N = 10, 100, 1000\n"
            "installed "
            "packs, listing and building a toolset, peak memory) had not produced\n"
            "`bench/results/discovery*.json` "
            "in this run."
        )
    parts = ["## 4. Discovery (toolpacks only)\n\nFrom `bench/bench_discovery.py`."]
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            continue
        rendered = _discovery_tables(data)
        parts.append(f"### `{path.name}`\n\n" + (rendered or _generic(data)))
    return "\n\n".join(parts)


def _discovery_tables(data: Any) -> str | None:
    """The discovery benchmark's own shape: ``results: [{n, check, figures}]``; else None."""
    try:
        results = data["results"]
        rows = []
        checks = []
        for result in results:
            n, figures = result["n"], result["figures"]
            start = figures.get("start_ms")
            if start:
                rows.append([str(n), "`python -c pass` (start)", "", cell(start, ratio=False)])
            for case, fig in figures.items():
                if case == "start_ms" or not isinstance(fig, dict) or "beyond_start_ms" not in fig:
                    continue
                rows.append(
                    [
                        str(n),
                        case,
                        cell(fig["beyond_start_ms"], ratio=False),
                        cell(fig.get("total_ms"), ratio=False),
                    ]
                )
            numbers = {
                k: v
                for k, v in (result.get("check") or {}).items()
                if isinstance(v, int | float) and not isinstance(v, bool)
            }
            checks.append((n, numbers))
    except (KeyError, TypeError):
        return None
    text = md_table(["N packs", "case", "beyond start, ms", "total, ms"], rows)
    keys = list(dict.fromkeys(k for _, numbers in checks for k in numbers))
    if keys:
        table_rows = [[str(n)] + [_fmt_any(numbers.get(k)) for k in keys] for n, numbers in checks]
        text += "\n\nIn-process check run:\n\n" + md_table(["N packs", *keys], table_rows)
    for key in ("method", "target"):
        if isinstance(data.get(key), str):
            text += f"\n\n{key.capitalize()}: {data[key]}"
    return text


def _generic(data: Any) -> str:
    """Render an unknown results document: a table for a list of flat records, else JSON."""
    rows_key = next(
        (
            k
            for k in ("rows", "results", "figures")
            if isinstance(data, dict) and isinstance(data.get(k), list)
        ),
        None,
    )
    records = data if isinstance(data, list) else (data.get(rows_key) if rows_key else None)
    if records and all(isinstance(r, dict) for r in records):
        headers = list(dict.fromkeys(k for r in records for k in r))
        flat = [[_fmt_any(r.get(h)) for h in headers] for r in records]
        return md_table(headers, flat)
    return "```json\n" + json.dumps(data, indent=2)[:6000] + "\n```"


def _fmt_any(value: Any) -> str:
    if isinstance(value, float):
        return _num(value)
    if isinstance(value, dict) and "median" in value:
        return cell(value)
    if isinstance(value, dict | list):
        return "`" + json.dumps(value)[:80] + "`"
    return "" if value is None else str(value)


def profile_section(profile: dict[str, Any]) -> str:
    """The figures of ``profile_invoke.py``: whole calls against the floor, then the steps."""
    figures = profile.get("in_loop") or {}
    rows = []
    for name, us in profile.get("in_loop_us", {}).items():
        fig = figures.get(name)
        rows.append([name, cell(fig, ratio=False) if fig else f"{us:.2f}", ratio_cell(fig)])
    text = (
        "## Where toolpacks' per-call time goes\n\n`bench/profile_invoke.py`, for the async `add`\n"
        "tool, in a running event loop: `await tool.invoke(dict)` (the short path `Tool.invoke`\n"
        "takes for a plain tool), `await tool.invoke(json_text)` (the general path: the gate\n"
        "parses, checks and validates), the general path with a dict, and the floors: the tool's\n"
        "own validator + `await fn(**kwargs)` + `ToolResult(...)` (`validate_json` for JSON\n"
        "text). µs per call, median (IQR) · ratio to the floor of the same repeat (JSON text:\n"
        "the JSON floor).\n\n"
    )
    text += md_table(["case", "µs", "ratio to its floor"], rows)
    steps = profile.get("steps_us") or {}
    parts = [p for p in profile.get("short_path_steps", []) if p in steps]
    if parts:
        rows = [[name, f"{steps[name]:.3f}"] for name in parts]
        rows.append(["sum of the steps", f"{profile['accounted_us']:.3f}"])
        rows.append(["the short path driven whole", f"{profile['whole_us']:.3f}"])
        rows.append(
            [
                "rest (inline code: bool/number scan, slot writes, frames)",
                f"{profile['rest_us']:.3f}",
            ]
        )
        text += (
            "\n\nThe short path's steps, each timed alone without an event loop (µs per call, "
            "median):\n\n" + md_table(["step", "µs"], rows)
        )
    calls = profile.get("calls_per_call") or {}
    if calls:
        text += (
            "\n\nPython-level function calls per call, counted by cProfile (the same on any "
            "machine; a change that only moves code must leave them the same or lower):\n\n"
            + md_table(["case", "calls"], [[name, f"{n:.0f}"] for name, n in calls.items()])
        )
    return text


def paths_section(peers: dict[str, Any]) -> str:
    rows = [
        [lib, p.get("define", ""), p.get("invoke", ""), p.get("sync", "")]
        for lib, p in peers["paths"].items()
    ]
    return "## What each library was asked to do\n\n" + md_table(
        ["library", "define", "invoke", "sync functions"], rows
    )


def install_section(install: Any, peers: Any) -> str:
    if not install and not (peers and peers.get("skipped")):
        return ""
    lines = ["## Installation of the peers"]
    if install:
        lines.append("")
        lines.append(f"Into `bench/.venv` with uv, unpinned ({install.get('python', '')}).")
        lines.append("")
        for dist, entry in install.get("packages", {}).items():
            if entry.get("ok"):
                lines.append(f"- {dist}: installed {entry.get('version') or ''}".rstrip())
            else:
                lines.append(f"- {dist}: **failed to install**: `{_last_line(entry.get('error'))}`")
    for lib, why in (peers or {}).get("skipped", {}).items():
        lines.append(f"- {lib}: not measured (`{why}`)")
    return "\n".join(lines)


INTRO = """How toolpacks compares with the floor (what any tool layer must do: pydantic validation
and a direct call) and with the libraries people already use, measured side by side in one run
on one machine. Reproduce with `bench/run.sh` (it builds its own virtual environment, installs
the peers, runs everything and rewrites this page); `bench/README.md` explains each benchmark."""

METHOD = """**Method.** The things compared are measured interleaved: each repeat times one batch of
every case, in a shuffled order. Figures are medians over repeats with the interquartile range
in parentheses; ratios are computed per repeat against the floor of the same repeat, then
summarised. The garbage collector is paused during a batch. The machine is small and shared:
compare ratios rather than absolute times, and treat sync (thread-hop) figures as noisy."""


def build_docs() -> str:
    core, peers = _load("core.json"), _load("peers.json")
    install, profile = _load("install.json"), _load("profile_invoke.json")
    machine = (peers or core or {}).get("machine", {})
    parts = [
        "# Benchmarks",
        INTRO,
        METHOD,
        "## Machine",
        machine_section(machine),
    ]
    if core or peers:
        parts += ["## Targets", targets_section(core, peers)]
        notes = Path(__file__).with_name("notes.md")
        if notes.is_file():  # hand-written: where targets are missed, and why
            parts.append(notes.read_text(encoding="utf-8").strip())
    if core:
        parts += ["## toolpacks against the floor", core_section(core)]
    if peers:
        define, invoke, concurrency, imports = peers_sections(peers)
        parts += [define, invoke, concurrency, discovery_section(), imports]
    else:
        parts.append(discovery_section())
    startup = _load("startup.json")
    if startup:
        parts.append(startup_section(startup))
    imports = _load("import_ratio.json")
    if imports:
        parts.append(import_ratio_section(imports))
    adapters = _load("adapters.json")
    if adapters:
        parts.append(adapters_section(adapters))
    if profile:
        parts.append(profile_section(profile))
    if peers:
        parts.append(paths_section(peers))
    http = _load("http.json")
    if http:  # bench_http.py (issue 15): MCP over HTTP under load
        from _http_report import http_section

        parts.append(http_section(http))
    from _search_report import search_section  # search_bfcl.py, search_speed.py (issue 22)

    parts.append(search_section() or "")
    section = install_section(install, peers)
    if section:
        parts.append(section)
    return "\n\n".join(p for p in parts if p) + "\n"


def readme_figures() -> str:
    core, peers = _load("core.json"), _load("peers.json")
    lines = []
    if core:
        m = core["machine"]
        lines.append(
            f"`bench_core.py` on {m['cpu']} ({m['cores']} cores), Python {m['python']},"
            f" {m['when']}:"
        )
        lines.append("")
        rows = [
            [
                p["label"],
                cell(p["figure"], ratio=False),
                cell(p["floor_figure"], ratio=False),
                ratio_cell(p["figure"]),
            ]
            for p in core["invoke"]["pairs"] + core["define"]["pairs"]
        ]
        lines.append(md_table(["case", "toolpacks µs", "floor µs", "ratio"], rows))
    if peers:
        lines.append("")
        lines.append("`bench_peers.py`, ratio to the floor (median):")
        lines.append("")
        rows = []
        for lib in peers["libraries"]:
            r = [lib]
            r += [ratio_cell(peers["invoke"]["rows"][m].get(lib)).split(" ")[0] for m in MODES]
            r.append(ratio_cell(peers["concurrency"]["rows"].get(lib)).split(" ")[0])
            r.append(ratio_cell(peers["define"]["rows"]["small"].get(lib)).split(" ")[0])
            r.append(ratio_cell(peers["define"]["rows"]["rich"].get(lib)).split(" ")[0])
            rows.append(r)
        lines.append(
            md_table(
                [
                    "library",
                    "async dict",
                    "async JSON",
                    "sync dict",
                    "sync JSON",
                    "1,000 gather",
                    "define small",
                    "define rich",
                ],
                rows,
            )
        )
        lines.append("")
        lines.append(targets_section(core, peers))
    if not lines:
        lines.append("No results yet: run `bench/run.sh`.")
    lines.append("")
    lines.append("Full tables, machine and versions: `docs/benchmarks.md`.")
    return "\n".join(lines)


def update_readme(path: Path) -> None:
    if not path.exists():
        return
    text = path.read_text(encoding="utf-8")
    if README_START not in text or README_END not in text:
        return
    head, rest = text.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    path.write_text(
        f"{head}{README_START}\n{readme_figures()}\n{README_END}{tail}", encoding="utf-8"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", default=str(ROOT / "docs" / "benchmarks.md"))
    parser.add_argument("--readme", default=str(BENCH / "README.md"))
    args = parser.parse_args(argv)
    docs = Path(args.docs)
    docs.write_text(build_docs(), encoding="utf-8")
    update_readme(Path(args.readme))
    print(
        f"wrote {docs}"
        + (f" and the figures in {args.readme}" if Path(args.readme).exists() else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
