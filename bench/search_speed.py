"""Speed of ``Toolset.search``: building the index and answering a query, at 2,000 and 10^4 tools.

The tools are placeholders listed from manifest records (``ManifestTool``), as a toolset of
installed packs holds them before any pack is imported; their resolver fails loudly, so a
search that tried to import a pack would stop the run. Names, descriptions (about 25 words),
tags and three or four parameters with descriptions are drawn from a vocabulary of 3,000
words with a Zipf distribution (common words have long posting lists, as in real text);
queries are 4-16 words drawn the same way. Seeded: every run measures the same tools.

Targets (issue 22): a query ≤ 1 ms at 2,000 tools and ≤ 5 ms at 10^4; the index of 10^4
tools ≤ 0.3 s.

Usage: ``.venv/bin/python bench/search_speed.py [--quick]`` (about 30 s; writes
``bench/results/search_speed.json``).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

SIZES = (2_000, 10_000)
TARGETS = {2_000: {"query_ms": 1.0}, 10_000: {"query_ms": 5.0, "index_s": 0.3}}


def vocabulary(rng: random.Random, size: int = 3_000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 10))))
    return sorted(words)


class Words:
    """Words drawn with a Zipf-like law over a shuffled vocabulary."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.words = vocabulary(rng)
        rng.shuffle(self.words)
        self.weights = [1 / (rank + 1) for rank in range(len(self.words))]

    def take(self, n: int) -> list[str]:
        return self.rng.choices(self.words, self.weights, k=n)


def record(words: Words, index: int) -> dict[str, Any]:
    """A manifest record as ``tool_record`` writes it."""
    rng = words.rng
    name = "_".join(words.take(rng.randint(2, 3))) + f"_{index}"
    props = {
        "_".join(words.take(rng.randint(1, 2))) + f"_{p}": {
            "type": "string",
            "description": " ".join(words.take(rng.randint(5, 12))),
        }
        for p in range(rng.randint(3, 4))
    }
    return {
        "qualified": f"pack{index % 50}.{name}",
        "scoped_name": name,
        "name": name,
        "description": " ".join(words.take(rng.randint(15, 35))).capitalize() + ".",
        "title": None,
        "instructions": None,
        "tags": words.take(rng.randint(0, 2)),
        "hints": [None, None, None, None],
        "input_schema": {"type": "object", "properties": props, "required": list(props)[:1]},
        "output_schema": None,
        "kind": "function",
        "timeout": None,
        "lock": False,
        "require_approval": False,
        "allowed_agents": None,
        "extra_args": None,
    }


def never_import(placeholder: Any) -> Any:
    raise SystemExit(f"search imported the pack of {placeholder.name!r}")


def toolset_of(records: Sequence[dict[str, Any]]) -> Any:
    from toolpacks import Toolset
    from toolpacks.packs.entrypoints._manifest_tool import ManifestTool

    tools = [
        ManifestTool.from_record(r, r["qualified"].split(".")[0], never_import) for r in records
    ]
    return Toolset(tools)


def measure(size: int, repeats: int, queries: int) -> dict[str, Any]:
    from toolpacks.host.search._index import build_index

    words = Words(random.Random(size))
    toolset = toolset_of([record(words, i) for i in range(size)])
    entries = toolset.entries()
    modules = set(sys.modules)
    index_s = []
    for _ in range(repeats):
        started = time.perf_counter()
        build_index(entries)
        index_s.append(time.perf_counter() - started)
    texts = [" ".join(words.take(words.rng.randint(4, 16))) for _ in range(queries)]
    first_ms = []  # a query on a new index: its terms' posting lists are made then
    for text in texts[:repeats]:
        index = build_index(entries)
        started = time.perf_counter()
        index.bm25(text, 10)
        first_ms.append((time.perf_counter() - started) * 1e3)
    toolset.search("warm up")
    query_ms = []
    for _ in range(repeats):
        started = time.perf_counter()
        for text in texts:
            toolset.search(text, limit=10)
        query_ms.append((time.perf_counter() - started) / len(texts) * 1e3)
    started = time.perf_counter()
    for text in texts[:50]:
        toolset.search(text.split()[0][:4] + ".*", mode="regex", limit=10)
    regex_ms = (time.perf_counter() - started) / 50 * 1e3
    new = sorted(m for m in set(sys.modules) - modules if m.startswith("pack"))
    return {
        "tools": size,
        "index_s": summary(index_s),
        "query_ms": summary(query_ms),
        "first_query_ms": summary(first_ms),
        "regex_ms": regex_ms,
        "packs_imported": new,
    }


def summary(samples: list[float]) -> dict[str, float]:
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples)}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--no-write", action="store_true", help="print, write no JSON")
    args = parser.parse_args(argv)
    from _common import machine_info, write_json

    repeats, queries = (3, 100) if args.quick else (7, 300)
    rows = [measure(size, repeats, queries) for size in SIZES]
    for row in rows:
        target = TARGETS[row["tools"]]
        print(
            f"{row['tools']:>6} tools: index {row['index_s']['median'] * 1e3:6.1f} ms, "
            f"query {row['query_ms']['median']:.3f} ms (target {target['query_ms']} ms), "
            f"first query {row['first_query_ms']['median']:.1f} ms, "
            f"regex {row['regex_ms']:.2f} ms, packs imported: {row['packs_imported'] or 'none'}"
        )
    if not args.no_write:
        data = {"machine": machine_info(), "repeats": repeats, "queries": queries, "sizes": rows}
        print(f"wrote {write_json('search_speed.json', data)}")


if __name__ == "__main__":
    main()
