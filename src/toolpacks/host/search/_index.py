"""Tool search: a lexical index over what a toolset holds, ranked by BM25, or a pattern.

The index reads only what every tool has without importing its pack (a manifest's
placeholder included): names, pack, description, tags and the parameters of its input
schema, nested ones and their allowed values too. It is built once per toolset, on the
first search, in pure Python.

Ranking is BM25 over a weighted bag of terms: the words of the tool's name count four
times, pairs of adjacent name words three, tags three, description words twice, parameter
words once; the exact exposed and qualified names are terms of their own. Building the index
only tokenizes; a term's posting list and weights are made on the first query that uses it
and kept. A query adds up its terms' lists, rarest first, and stops reading long lists once
they can no longer change the top results (MaxScore), then only updates the candidates
still in reach.
"""

from __future__ import annotations

import gc
import heapq
import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import contains
from typing import TYPE_CHECKING, Any

from toolpacks.host.search._regex import MAX_PATTERN_LENGTH, compile_pattern
from toolpacks.host.search._text import split_name, terms, tokenize

if TYPE_CHECKING:
    from toolpacks.core._tool import Tool
    from toolpacks.hookspecs import Ranker

__all__ = [
    "MAX_PATTERN_LENGTH",
    "MODES",
    "SearchDocument",
    "SearchHit",
    "SearchIndex",
    "build_index",
    "query_terms",
    "run_search",
    "tokenize",
]

MODES = ("bm25", "regex")
"""The search modes every toolset has."""
_REGEX_FIELD_CHARS = 300
"""A description is matched by its first this many characters (see ``compile_pattern``)."""

# How many times each field's terms count (the name says most precisely what a tool does).
_W_NAME = 4
_W_NAME_PAIR = 3
_W_TAGS = 3
_W_DESCRIPTION = 2
# The pack's name and the parameters' names and descriptions count once.
_K1 = 0.9
_B = 0.5
_IDENT = re.compile(r"[A-Za-z0-9_.\-]+")
_PRUNE_AT = 128
"""Posting lists at least this long are where a query checks whether it may stop reading."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One tool a search found."""

    exposed: str
    """The name the model sees (call the tool by it)."""
    tool: Tool
    """The tool (a manifest's placeholder while its pack is not imported)."""
    score: float
    """How well it matched; higher is better, comparable only within one search."""


@dataclass(frozen=True, slots=True)
class SearchDocument:
    """What the index knows of one tool; the documents a ``Ranker`` ranks."""

    exposed: str
    """The exposed name."""
    qualified: str
    """The qualified name, ``<pack>.<tool>``."""
    pack: str
    """The pack's name."""
    description: str
    """The tool's description."""
    tags: tuple[str, ...]
    """Its tags, sorted."""
    parameters: tuple[tuple[str, str], ...]
    """Its top-level parameters: ``(name, description)`` pairs."""

    @property
    def text(self) -> str:
        """Everything above as one text (names split into words), for a ranker to embed."""
        parts = [" ".join(split_name(self.exposed)), self.description]
        parts += [f"{n}: {d}" if d else n for n, d in self.parameters]
        if self.tags:
            parts.append("tags: " + ", ".join(self.tags))
        return "\n".join(p for p in parts if p)


def _parameters(schema: Any, prefix: str = "", depth: int = 0) -> list[tuple[str, str]]:
    """``(name, description)`` of each property, nested ones as ``outer.inner`` (2 levels).

    A property's allowed values (``enum``) join its description: they are words a request
    uses ("fahrenheit", "large"). Schemas are JSON: plain dicts (``isinstance(x, dict)`` is
    much cheaper than a ``Mapping`` check, which counts at 10^4 tools).
    """
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return []
    found = []
    for name, sub in props.items():
        if not isinstance(sub, dict):
            found.append((f"{prefix}{name}", ""))
            continue
        desc = sub.get("description")
        text = desc if isinstance(desc, str) else ""
        enum = sub.get("enum")
        if enum and isinstance(enum, list):
            text = f"{text} ({', '.join(map(str, enum[:20]))})"
        found.append((f"{prefix}{name}", text))
        if depth < 1 and ("properties" in sub or "items" in sub):
            items = sub.get("items")
            found += _parameters(items if isinstance(items, dict) else sub, f"{prefix}{name}.", 1)
    return found


def document(exposed: str, qualified: str, pack: str, tool: Tool) -> SearchDocument:
    """The search document of one toolset entry (reads nothing that imports a pack)."""
    return SearchDocument(
        exposed,
        qualified,
        pack,
        tool.description or "",
        tuple(sorted(tool.tags)),
        tuple(_parameters(tool.input_schema)),
    )


def _bag(doc: SearchDocument) -> list[str]:
    """The document's terms, each repeated as many times as its field counts."""
    name = terms(doc.exposed)
    bag = name * _W_NAME
    bag += [f"{a}_{b}" for a, b in itertools.pairwise(name)] * _W_NAME_PAIR
    bag += [f"={doc.exposed.lower()}", f"={doc.qualified.lower()}"] * _W_NAME
    tool_part = doc.qualified[len(doc.pack) + 1 :] if doc.pack else doc.qualified
    if tool_part != doc.exposed:  # renamed or made provider-safe: its own name counts too
        bag += terms(tool_part) * (_W_NAME // 2)
    if doc.tags:
        bag += terms(" ".join(doc.tags)) * _W_TAGS
    bag += terms(doc.description) * _W_DESCRIPTION
    # The pack and the parameters weigh the same (1): one pass over their text.
    bag += terms(" ".join([doc.pack, *(f"{n} {d}" for n, d in doc.parameters)]))
    return bag


def query_terms(query: str) -> list[str]:
    """The terms of a query: its words, adjacent pairs of them, and identifiers it names.

    Numbers are left out: in a request they are values ("443 * 349", "2023"), and matching
    them to the numbers in tools' descriptions is noise.
    """
    words = [w for w in terms(query) if not w.isdigit()]
    found = list(dict.fromkeys(words))
    found += dict.fromkeys(f"{a}_{b}" for a, b in itertools.pairwise(words))
    found += dict.fromkeys(f"={m.lower()}" for m in _IDENT.findall(query))
    return found


class SearchIndex:
    """The search index of one toolset's tools, built once and reused."""

    def __init__(self, documents: Sequence[SearchDocument]) -> None:
        self.documents = tuple(documents)
        """The documents, in the order rankers see them."""
        self._bags = [Counter(_bag(doc)) for doc in self.documents]
        lengths = [sum(bag.values()) for bag in self._bags]
        average = (sum(lengths) / len(lengths) if lengths else 0.0) or 1.0
        self._norms = [_K1 * (1 - _B + _B * n / average) for n in lengths]
        self._weights: dict[str, tuple[float, dict[int, float]] | None] = {}

    def _term(self, term: str) -> tuple[float, dict[int, float]] | None:
        """A term's highest weight and its BM25 weight per document, found on first use.

        Posting lists are made per term when a query first asks for it, by a scan of the
        tools' term counts that runs in C: building the index stays a pass of tokenizing.
        """
        if term in self._weights:
            return self._weights[term]
        bags = self._bags
        hits = list(compress(range(len(bags)), map(contains, bags, repeat(term))))
        found = None
        if hits:
            n, df = len(bags), len(hits)
            scale = math.log(1 + (n - df + 0.5) / (df + 0.5)) * (_K1 + 1)
            norms = self._norms
            weights = {i: scale * (tf := bags[i][term]) / (tf + norms[i]) for i in hits}
            found = (max(weights.values()), weights)
        self._weights[term] = found
        return found

    def bm25(self, query: str, limit: int) -> list[tuple[int, float]]:
        """``(document index, score)`` of the best ``limit`` matches, best first."""
        lists = [t for t in map(self._term, query_terms(query)) if t is not None]
        lists.sort(key=lambda t: -t[0])  # the rarest, strongest terms first
        bounds = list(itertools.accumulate((t[0] for t in reversed(lists)), initial=0.0))[::-1]
        scores: dict[int, float] = {}
        get = scores.get
        for position, (_, weights) in enumerate(lists):
            if len(weights) >= _PRUNE_AT and len(scores) >= limit:
                floor = heapq.nlargest(limit, scores.values())[-1]
                if bounds[position] < floor:  # no unseen tool can reach the top any more
                    return _top(_finish(scores, lists[position:], floor - bounds[position]), limit)
            for index, weight in weights.items():
                scores[index] = get(index, 0.0) + weight
        return _top(scores, limit)

    def regex(self, pattern: str, limit: int) -> list[tuple[int, float]]:
        """``(document index, score)`` of tools a field of which ``pattern`` matches.

        A match in a name scores 3, in the tags or a parameter name 2, in the description
        or a parameter description 1; ties keep the toolset's order.
        """
        search = compile_pattern(pattern).search
        hits: list[tuple[int, float]] = []
        for index, doc in enumerate(self.documents):
            score = _regex_score(search, doc)
            if score:
                hits.append((index, score))
        hits.sort(key=lambda item: (-item[1], item[0]))
        return hits[:limit]

    def ranked(self, ranker: Ranker, query: str, limit: int) -> list[tuple[int, float]] | None:
        """A pack's ranker's answer, checked; ``None`` when it declines (BM25 answers)."""
        answer = ranker.rank(query, self.documents, limit)
        if answer is None:
            return None
        seen: dict[int, float] = {}
        for index, score in answer:
            if isinstance(index, int) and 0 <= index < len(self.documents):
                seen.setdefault(index, float(score))
        return list(seen.items())[:limit]


def _finish(
    scores: dict[int, float], rest: list[tuple[float, dict[int, float]]], reach: float
) -> dict[int, float]:
    """Add the remaining terms to the tools that can still make the top (score ≥ ``reach``)."""
    final = {}
    for index, score in scores.items():
        if score >= reach:
            for _, weights in rest:
                score += weights.get(index, 0.0)
            final[index] = score
    return final


def _top(scores: Mapping[int, float], limit: int) -> list[tuple[int, float]]:
    best = heapq.nsmallest(limit, scores.items(), key=lambda item: (-item[1], item[0]))
    return [(i, round(s, 6)) for i, s in best]


def _regex_score(search: Any, doc: SearchDocument) -> float:
    if search(doc.exposed) or search(doc.qualified):
        return 3.0
    if any(search(t) for t in doc.tags) or any(search(n) for n, _ in doc.parameters):
        return 2.0
    cut = _REGEX_FIELD_CHARS
    if search(doc.pack) or search(doc.description[:cut]):
        return 1.0
    return 1.0 if any(search(d[:cut]) for _, d in doc.parameters) else 0.0


def build_index(entries: Iterable[Any]) -> SearchIndex:
    """The index of a toolset's entries (``ToolEntry``), in the toolset's order.

    The cyclic garbage collector is paused meanwhile (as ``Toolset.definitions`` does): the
    index makes tens of thousands of lasting objects, and at 10^4 tools collections that
    walk them again and again would cost more than building it.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        return SearchIndex([document(e.exposed, e.qualified, e.pack, e.tool) for e in entries])
    finally:
        if paused:
            gc.enable()


def run_search(
    index: SearchIndex,
    entries: Mapping[str, Any],
    query: str,
    limit: int,
    mode: str,
    ranker: Ranker | None = None,
) -> list[SearchHit]:
    """``Toolset.search``: the hits, each with the toolset's current tool for its name.

    Raises:
        ValueError: Unknown mode, a limit below 1, a bad pattern.
    """
    if mode not in MODES:
        raise ValueError(f"unknown search mode {mode!r}; expected one of {', '.join(MODES)}")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive integer, got {limit!r}")
    if not isinstance(query, str):
        raise ValueError(f"query must be a string, got {type(query).__name__}")
    if mode == "regex":
        ranked = index.regex(query, limit)
    else:
        found = index.ranked(ranker, query, limit) if ranker is not None else None
        ranked = index.bm25(query, limit) if found is None else found
    docs = index.documents
    return [SearchHit(docs[i].exposed, entries[docs[i].exposed].tool, s) for i, s in ranked]
