"""The "Tool search" section of ``docs/benchmarks.md``, from ``results/search_bfcl.json`` and
``results/search_speed.json`` (``search_bfcl.py``, ``search_speed.py``).

Used by ``report.py``; either file may be missing (its part is then left out).
``python bench/_search_report.py`` prints the section alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
TITLE = "## Tool search"
DASH = "\u2013"  # an en dash, for ranges


def _load(name: str) -> Any:
    path = RESULTS / name
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    except json.JSONDecodeError:
        return None


def _table(headers: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out.extend("| " + " | ".join(r) + " |" for r in rows)
    return "\n".join(out)


def _recall_rows(figures: dict[str, float]) -> list[str]:
    return [f"{figures[f'recall@{k}']:.3f}" for k in (1, 5, 10)]


def _machine(machine: dict[str, Any]) -> str:
    load = machine.get("loadavg_at_start")
    shown = f", load average {load[0]:.1f} at the start" if load else ""
    return f"{machine.get('cpu', '?')}, {machine.get('cores', '?')} cores{shown}"


def bfcl_part(data: dict[str, Any]) -> str:
    recall = data["recall"]
    rows = [["`Toolset.search`", *_recall_rows(recall["toolpacks"])]]
    if "bm25s" in recall:
        rows.append(["plain BM25 (bm25s)", *_recall_rows(recall["bm25s"])])
    per = [
        [f"`{name}`", str(figs["questions"]), *_recall_rows(figs)]
        for name, figs in data.get("per_category", {}).items()
    ]
    versions = data.get("machine", {}).get("versions", {})
    return "\n\n".join(
        [
            "### Retrieval quality on BFCL",
            "`bench/search_bfcl.py`: every distinct function of the Berkeley Function Calling "
            "Leaderboard's `simple_python`, `multiple`, `live_simple` and `live_multiple` "
            f"categories (bfcl-eval {versions.get('bfcl-eval') or '?'}, first definition wins) "
            f"pooled into one toolset of {data['functions']:,} tools built from their JSON "
            f"Schemas; each of the {data['questions']:,} questions' user text is a query, a hit "
            "when a ground-truth function (`possible_answer/`) is among the first k. The floor "
            f"is bm25s {versions.get('bm25s') or '?'} (its default tokenizer) over each "
            "function's name, description and parameters, in the same run. Target: recall@5 "
            "≥ 0.85 (stretch 0.90). The weights were tuned on these four categories only.",
            _table(["ranker", "recall@1", "recall@5", "recall@10"], rows),
            _table(["category (toolpacks)", "questions", "recall@1", "recall@5", "recall@10"], per),
            "Most misses are requests several pooled tools answer alike (BFCL has a dozen "
            "weather tools, and the ground truth names one), requests in other languages, "
            "and tools whose names are abbreviations (`ChaFod`) described in other words than "
            "the request uses: a lexical ranker cannot bridge those, which is what the "
            "`toolpacks_ranker` hook is for.",
        ]
    )


def speed_part(data: dict[str, Any]) -> str:
    rows = []
    for row in data["sizes"]:
        index, query, first = row["index_s"], row["query_ms"], row["first_query_ms"]
        rows.append(
            [
                f"{row['tools']:,}",
                f"{index['median'] * 1e3:,.0f} ({index['min'] * 1e3:,.0f}{DASH}"
                f"{index['max'] * 1e3:,.0f}) ms",
                f"{query['median']:.2f} ({query['min']:.2f}{DASH}{query['max']:.2f}) ms",
                f"{first['median']:.1f} ms",
                f"{row['regex_ms']:.1f} ms",
                ", ".join(row["packs_imported"]) or "none",
            ]
        )
    return "\n\n".join(
        [
            "### Speed",
            "`bench/search_speed.py`: toolsets of placeholders listed from manifest records "
            "(no pack imported; their resolver fails the run if one is), with names, "
            "descriptions, tags and parameters drawn from a Zipf-distributed vocabulary, about "
            "60 words per tool as in BFCL. Index: the first search's build, median (min"
            f"{DASH}max) of {data['repeats']} builds. Query: the mean over {data['queries']} "
            "queries of 4-16 words, once the terms they use have been looked up; first query: "
            "on a new index, which makes the posting lists of its terms then. Targets: a "
            "query ≤ 1 ms at 2,000 tools and ≤ 5 ms at 10^4, the index of 10^4 tools ≤ 0.3 s. "
            f"Machine: {_machine(data.get('machine', {}))}.",
            _table(
                ["tools", "index", "query", "first query", "regex", "packs imported"],
                rows,
            ),
        ]
    )


def search_section() -> str | None:
    """The section, or None when neither benchmark has results."""
    bfcl, speed = _load("search_bfcl.json"), _load("search_speed.json")
    if not bfcl and not speed:
        return None
    parts = [TITLE, "`Toolset.search` (issue 22)."]
    if bfcl:
        parts.append(bfcl_part(bfcl))
    if speed:
        parts.append(speed_part(speed))
    return "\n\n".join(parts)


if __name__ == "__main__":
    print(search_section() or "no results")
