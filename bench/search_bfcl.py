"""Retrieval quality of ``Toolset.search`` on the Berkeley Function Calling Leaderboard's data.

Every distinct function name (first definition wins; names of letters, digits, ``_ . -``) of
the ``simple_python``, ``multiple``, ``live_simple`` and ``live_multiple`` categories goes into
one toolset, built as tools from their JSON Schemas (BFCL's ``dict``/``float``/``tuple``/``any``
types mapped to JSON Schema). Each question's user text is a query; a question is a hit at k
when one of its ground-truth functions (``possible_answer/``) is among the first k results.
A plain BM25 (bm25s, its default tokenizer, no stemming) over each function's name,
description and parameters runs on the same toolset in the same run, as the floor.

Setup (a venv of its own; the data ships inside the ``bfcl-eval`` package, installed without
its dependencies)::

    uv venv bench/.venv/search && export VIRTUAL_ENV=bench/.venv/search
    uv pip install -e . bm25s && uv pip install --no-deps bfcl-eval==2026.3.23
    bench/.venv/search/bin/python bench/search_bfcl.py      # about 10 s

Writes ``bench/results/search_bfcl.json``. ``--data DIR`` reads another copy of
``bfcl_eval/data``. Tuned on these four categories only.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

CATEGORIES = ("simple_python", "multiple", "live_simple", "live_multiple")
KS = (1, 5, 10)
VALID_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")
TYPES = {"dict": "object", "float": "number", "tuple": "array"}


@dataclass(frozen=True)
class Question:
    """One BFCL question: its id, its user text and the functions that answer it."""

    id: str
    text: str
    gold: frozenset[str]


def default_data_dir() -> Path:
    """``bfcl_eval/data`` of the installed package, found without importing it."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(
            "bfcl-eval is not installed: uv pip install --no-deps bfcl-eval==2026.3.23 "
            "(or pass --data DIR)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def _rows(path: Path) -> Iterable[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _file(data: Path, category: str, answers: bool = False) -> Path:
    folder = data / "possible_answer" if answers else data
    exact = re.compile(rf"BFCL_v\d+_{re.escape(category)}\.json")
    found = sorted(p for p in folder.glob("BFCL_*.json") if exact.fullmatch(p.name))
    if not found:
        raise SystemExit(f"no BFCL file for category {category!r} in {folder}")
    return found[-1]


def user_text(question: Any) -> str:
    """The user messages of a question's first turn, joined."""
    turns = question if isinstance(question, list) else [question]
    first = turns[0] if turns else []
    messages = first if isinstance(first, list) else [first]
    return "\n".join(
        str(m.get("content", ""))
        for m in messages
        if isinstance(m, dict) and m.get("role") == "user"
    )


def load(
    data: Path, categories: Sequence[str] = CATEGORIES
) -> tuple[dict[str, dict[str, Any]], list[Question]]:
    """The pooled functions (name → BFCL definition) and the questions of ``categories``."""
    functions: dict[str, dict[str, Any]] = {}
    questions: list[Question] = []
    for category in categories:
        gold: dict[str, frozenset[str]] = {}
        for row in _rows(_file(data, category, answers=True)):
            gold[row["id"]] = frozenset(name for call in row["ground_truth"] for name in call)
        for row in _rows(_file(data, category)):
            for fn in row.get("function", []):
                name = fn.get("name", "")
                if VALID_NAME.match(name) and name not in functions:
                    functions[name] = fn
            answer = gold.get(row["id"], frozenset())
            if answer:
                questions.append(Question(row["id"], user_text(row["question"]), answer))
    return functions, questions


def json_schema(node: Any) -> Any:
    """A BFCL parameter schema as JSON Schema (``dict`` → object, ``float`` → number...)."""
    if isinstance(node, list):
        return [json_schema(n) for n in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str):
            if value == "any":
                continue
            out[key] = TYPES.get(value, value)
        elif key in ("properties", "items", "additionalProperties", "anyOf", "oneOf"):
            if key == "properties" and isinstance(value, Mapping):
                out[key] = {k: json_schema(v) for k, v in value.items()}
            else:
                out[key] = json_schema(value)
        else:
            out[key] = value
    out.setdefault("type", "object") if "properties" in out else None
    return out


def build_toolset(functions: Mapping[str, Mapping[str, Any]]) -> Any:
    """A toolset of schema tools, exposed under their BFCL names (made provider-safe)."""
    from toolpacks import Tool, Toolset
    from toolpacks.core.define._names import safe_name
    from toolpacks.host._toolset import ToolEntry

    def unused(**_: Any) -> None:
        return None

    entries = []
    for index, (name, fn) in enumerate(functions.items()):
        schema = json_schema(fn.get("parameters") or {"type": "object", "properties": {}})
        schema["type"] = "object"
        tool = Tool(
            unused,
            name=f"f{index}",
            description=fn.get("description") or name,
            input_schema=schema,
        )
        entries.append(ToolEntry(f"{safe_name(name)}__{index}", name, "", tool))
    return Toolset(entries)


def recall(
    search: Callable[[str, int], list[str]], questions: Sequence[Question]
) -> dict[str, float]:
    """recall@k: the share of questions with a ground-truth function among the first k."""
    hits = dict.fromkeys(KS, 0)
    top = max(KS)
    for q in questions:
        found = search(q.text, top)
        for k in KS:
            if q.gold & set(found[:k]):
                hits[k] += 1
    return {f"recall@{k}": hits[k] / len(questions) for k in KS}


def toolpacks_search(toolset: Any) -> Callable[[str, int], list[str]]:
    def search(query: str, limit: int) -> list[str]:
        return [toolset.entry(h.exposed).qualified for h in toolset.search(query, limit=limit)]

    return search


def plain_bm25(functions: Mapping[str, Mapping[str, Any]]) -> Callable[[str, int], list[str]]:
    """bm25s over ``name description param: description ...``, its default tokenizer."""
    import bm25s

    names = list(functions)
    corpus = []
    for name, fn in functions.items():
        props = (fn.get("parameters") or {}).get("properties") or {}
        params = " ".join(
            f"{p} {d.get('description', '') if isinstance(d, Mapping) else ''}"
            for p, d in props.items()
        )
        corpus.append(f"{name} {fn.get('description', '')} {params}")
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(corpus, show_progress=False), show_progress=False)

    def search(query: str, limit: int) -> list[str]:
        tokens = bm25s.tokenize([query], show_progress=False)
        if not tokens.vocab:
            return []
        docs, _ = retriever.retrieve(tokens, k=min(limit, len(names)), show_progress=False)
        return [names[i] for i in docs[0]]

    return search


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="a copy of bfcl_eval/data")
    parser.add_argument("--no-write", action="store_true", help="print, write no JSON")
    args = parser.parse_args(argv)
    from _common import machine_info, write_json

    data = args.data or default_data_dir()
    functions, questions = load(data)
    print(f"{len(functions)} functions, {len(questions)} questions from {data}")
    toolset = build_toolset(functions)
    started = time.perf_counter()
    toolset.search("warm up: builds the index")
    index_s = time.perf_counter() - started
    results: dict[str, Any] = {}
    started = time.perf_counter()
    results["toolpacks"] = recall(toolpacks_search(toolset), questions)
    query_ms = (time.perf_counter() - started) / len(questions) * 1e3
    try:
        results["bm25s"] = recall(plain_bm25(functions), questions)
    except ImportError:
        print("bm25s is not installed: the plain BM25 floor is left out")
    per_category = {}
    for category in CATEGORIES:
        subset = [q for q in questions if q.id.startswith(category + "_")]
        per_category[category] = {"questions": len(subset)}
        per_category[category].update(recall(toolpacks_search(toolset), subset))
    for name, figures in results.items():
        print(f"{name:10s}", "  ".join(f"{k} {v:.3f}" for k, v in figures.items()))
    for category, figures in per_category.items():
        shown = "  ".join(f"{k} {v:.3f}" for k, v in figures.items() if k != "questions")
        print(f"  {category:14s} {figures['questions']:5d} questions  {shown}")
    print(f"index {index_s * 1e3:.0f} ms, {query_ms:.3f} ms per query")
    if not args.no_write:
        path = write_json(
            "search_bfcl.json",
            {
                "machine": machine_info(("toolpacks", "bfcl-eval", "bm25s")),
                "functions": len(functions),
                "questions": len(questions),
                "categories": list(CATEGORIES),
                "recall": results,
                "per_category": per_category,
                "index_ms": index_s * 1e3,
                "query_ms": query_ms,
            },
        )
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
