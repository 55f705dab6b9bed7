"""Tool search: a lexical index over what a toolset holds, ranked by BM25, or a pattern.

The index reads only what every tool has without importing its pack (a manifest's
placeholder included): names, pack, description, tags and the parameters of its input
schema. It is built once per toolset, on the first search, in pure Python.

Ranking is BM25F-like: each field contributes its term counts times a weight (the words of
the tool's name count most), and each term's BM25 weight per tool is computed at build time,
so a query only adds up a few precomputed lists.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolpacks.core._tool import Tool
    from toolpacks.hookspecs import Ranker
    from toolpacks.host._toolset import ToolEntry

__all__ = [
    "MAX_PATTERN_LENGTH",
    "MODES",
    "SearchDocument",
    "SearchHit",
    "SearchIndex",
    "build_index",
    "run_search",
    "tokenize",
]

MODES = ("bm25", "regex")
"""The search modes every toolset has."""
MAX_PATTERN_LENGTH = 200
"""The longest ``mode="regex"`` pattern accepted (the length the providers' regex tools take)."""
_REGEX_FIELD_CHARS = 300
"""A description is matched by its first this many characters (see ``compile_pattern``)."""

# Field weights of the BM25F score: the name says what a tool does most precisely.
_W_NAME = 2.0
_W_NAME_PAIR = 1.5
_W_PACK = 0.5
_W_TAGS = 1.5
_W_DESCRIPTION = 1.0
_W_PARAM_NAME = 0.6
_W_PARAM_DESCRIPTION = 0.6
_K1 = 0.9
_B_FIELDS = (0.1, 0.5, 0.5)  # length normalisation of names, description, parameters

_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_IDENT = re.compile(r"[A-Za-z0-9_.\-]+")
_STOP_WORDS = (
    "a an and are as at be been being but by can could do does for from had has have i if in "
    "into is it its me my of on or our please should so such than that the their them then "
    "there these they this those to us was we were what when where which while who whom why "
    "will with would you your"
    # words of a request, not of what a tool does (tuned on BFCL: recall@5 +0.007)
    " also help just know let like need tell want"
)
_STOP = frozenset(_STOP_WORDS.split())


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


def split_name(name: str) -> list[str]:
    """The lowercase words of an identifier: ``getUserID.v2-x`` → get, user, id, v, 2, x."""
    return [w.lower() for chunk in _WORD.findall(name) for w in _CAMEL.findall(chunk)]


_stems: dict[str, str] = {}


def stem(word: str) -> str:
    """A light English suffix stripper: inflections and common derivations share a stem.

    Not Porter: it only has to map the forms of one word together (create, creates,
    created, creating, creation, creator → creat), cheaply, for both tools and queries.
    """
    found = _stems.get(word)
    if found is None:
        found = _stems[word] = _stem(word) if len(_stems) < 200_000 else word
    return found


_DERIVED = (
    ("ication", "y"),
    ("ational", "ate"),
    ("ization", "ize"),
    ("ation", "ate"),
    ("ator", "ate"),
    ("ments", ""),
    ("ment", ""),
)


def _stem(w: str) -> str:
    if len(w) <= 3 or not w.isalpha():
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "xes", "ches", "shes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix, to in _DERIVED:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)] + to
            break
    else:
        for suffix in ("ing", "ed", "er"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                w = w[: -len(suffix)]
                if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
                    w = w[:-1]  # running → run, stopped → stop
                break
    if w.endswith("y") and len(w) > 3:
        w = w[:-1] + "i"  # query, queries, queried → queri
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


def tokenize(text: str) -> list[str]:
    """The search terms of a text: words split at camelCase, lowercased, stemmed, no stop words."""
    return [stem(w) for w in split_name(text) if w not in _STOP]


def _parameters(schema: Any, prefix: str = "", depth: int = 0) -> list[tuple[str, str]]:
    """``(name, description)`` of each property, nested ones as ``outer.inner`` (2 levels).

    A property's allowed values (``enum``) join its description: they are words a request
    uses ("fahrenheit", "large").
    """
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping):
        return []
    found = []
    for name, sub in props.items():
        if not isinstance(sub, Mapping):
            found.append((prefix + str(name), ""))
            continue
        desc = sub.get("description")
        text = desc if isinstance(desc, str) else ""
        enum = sub.get("enum")
        if isinstance(enum, list) and enum:
            text += " (" + ", ".join(str(v) for v in enum[:20]) + ")"
        found.append((prefix + str(name), text.strip()))
        if depth < 1:
            inner = sub.get("items") if isinstance(sub.get("items"), Mapping) else sub
            found += _parameters(inner, f"{prefix}{name}.", depth + 1)
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


def _field_terms(doc: SearchDocument) -> tuple[dict[str, float], ...]:
    """Term → weighted count in each field group: names, description, parameters."""
    label: dict[str, float] = {}
    text: dict[str, float] = {}
    params: dict[str, float] = {}

    def add(terms: dict[str, float], words: Iterable[str], weight: float) -> None:
        for w in words:
            terms[w] = terms.get(w, 0.0) + weight

    name_words = [w for w in split_name(doc.exposed) if w not in _STOP]
    stems = [stem(w) for w in name_words]
    add(label, stems, _W_NAME)
    add(label, (f"{a}_{b}" for a, b in itertools.pairwise(stems)), _W_NAME_PAIR)
    add(label, (f"={doc.exposed.lower()}", f"={doc.qualified.lower()}"), _W_NAME)
    tool_part = doc.qualified[len(doc.pack) + 1 :] if doc.pack else doc.qualified
    if split_name(tool_part) != name_words:  # renamed: the tool's own name counts too
        add(label, tokenize(tool_part), _W_NAME / 2)
    add(label, tokenize(doc.pack), _W_PACK)
    add(label, (t for tag in doc.tags for t in tokenize(tag)), _W_TAGS)
    add(text, tokenize(doc.description), _W_DESCRIPTION)
    for name, desc in doc.parameters:
        add(params, tokenize(name), _W_PARAM_NAME)
        add(params, tokenize(desc), _W_PARAM_DESCRIPTION)
    return label, text, params


def query_terms(query: str) -> list[str]:
    """The terms of a query: its words, adjacent pairs of them, and identifiers it names.

    Numbers are left out: in a request they are values ("443 * 349", "2023"), and matching
    them to the numbers in tools' descriptions is noise.
    """
    words = [w for w in tokenize(query) if not w.isdigit()]
    terms = list(dict.fromkeys(words))
    terms += dict.fromkeys(f"{a}_{b}" for a, b in itertools.pairwise(words))
    terms += dict.fromkeys(f"={m.lower()}" for m in _IDENT.findall(query))
    return terms


class SearchIndex:
    """The search index of one toolset's tools, built once and reused."""

    def __init__(self, documents: Sequence[SearchDocument]) -> None:
        self.documents = tuple(documents)
        """The documents, in the order rankers see them."""
        self._postings = _postings(self.documents)

    def bm25(self, query: str, limit: int) -> list[tuple[int, float]]:
        """``(document index, score)`` of the best ``limit`` matches, best first."""
        scores: dict[int, float] = {}
        get = scores.get
        for term in query_terms(query):
            for index, weight in self._postings.get(term, ()):
                scores[index] = get(index, 0.0) + weight
        best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]
        return [(i, round(s, 6)) for i, s in best]

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


def _regex_score(search: Any, doc: SearchDocument) -> float:
    if search(doc.exposed) or search(doc.qualified):
        return 3.0
    if any(search(t) for t in doc.tags) or any(search(n) for n, _ in doc.parameters):
        return 2.0
    cut = _REGEX_FIELD_CHARS
    if search(doc.pack) or search(doc.description[:cut]):
        return 1.0
    return 1.0 if any(search(d[:cut]) for _, d in doc.parameters) else 0.0


def _postings(documents: Sequence[SearchDocument]) -> dict[str, list[tuple[int, float]]]:
    """Term → ``(document index, BM25F weight)`` for every document that has the term.

    BM25F: each field group's counts are normalised by that group's length (a long
    description does not dilute a match in the name), summed, then saturated once.
    """
    fielded = [_field_terms(d) for d in documents]
    n = len(documents) or 1
    averages = [sum(sum(f[g].values()) for f in fielded) / n or 1.0 for g in range(3)]
    frequency: dict[str, int] = {}
    combined: list[dict[str, float]] = []
    for fields in fielded:
        terms: dict[str, float] = {}
        for group, counts in enumerate(fields):
            if not counts:
                continue
            b = _B_FIELDS[group]
            norm = 1 - b + b * sum(counts.values()) / averages[group]
            for term, tf in counts.items():
                terms[term] = terms.get(term, 0.0) + tf / norm
        for term in terms:
            frequency[term] = frequency.get(term, 0) + 1
        combined.append(terms)
    idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in frequency.items()}
    postings: dict[str, list[tuple[int, float]]] = {}
    for index, terms in enumerate(combined):
        for term, tf in terms.items():
            postings.setdefault(term, []).append((index, idf[term] * tf * (_K1 + 1) / (tf + _K1)))
    return postings


def build_index(entries: Iterable[ToolEntry]) -> SearchIndex:
    """The index of a toolset's entries, in the toolset's order."""
    return SearchIndex([document(e.exposed, e.qualified, e.pack, e.tool) for e in entries])


def run_search(
    index: SearchIndex,
    entries: Mapping[str, ToolEntry],
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


# -- patterns ---------------------------------------------------------------------------------


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Compile a model's search pattern, refusing what could take long to match.

    Python's ``re`` has no timeout, so a pattern that backtracks badly could hang a search.
    Patterns are capped at ``MAX_PATTERN_LENGTH`` characters; backreferences, repeats nested
    in repeats (``(a+)+``) and more than two unbounded repeats are refused; fields are
    matched one by one, descriptions by their first 300 characters. Case is ignored.

    Raises:
        ValueError: The pattern is too long, does not compile, or is refused (the message
            says why, for the model to send a simpler one).
    """
    if not isinstance(pattern, str):
        raise ValueError(f"a search pattern must be a string, got {type(pattern).__name__}")
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise ValueError(
            f"search pattern is {len(pattern)} characters long; at most "
            f"{MAX_PATTERN_LENGTH} are accepted"
        )
    try:
        compiled = re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"invalid search pattern {pattern!r}: {exc}") from None
    reason = _refusal(pattern)
    if reason:
        raise ValueError(f"search pattern {pattern!r} refused: {reason}; use a simpler one")
    return compiled


_WIDE = {"ANY", "NOT_LITERAL"}
_WIDE_CATEGORIES = {"CATEGORY_NOT_SPACE", "CATEGORY_NOT_WORD", "CATEGORY_NOT_DIGIT"}


def _refusal(pattern: str) -> str:
    r"""Why ``pattern`` could backtrack badly, or ``""``: it is a plain parse-tree check.

    Refused: backreferences; a repeat inside a repeat; more than one unbounded repeat of
    something that matches spaces too (``.*``, ``[^x]+``, ``\S*``: two of them make a
    search cubic in a field's length); more than four repeats in all.
    """
    from re import _parser  # type: ignore[attr-defined]  # the parser re.compile uses

    counts = {"wide": 0, "all": 0}
    try:
        _walk(_parser.parse(pattern, re.IGNORECASE), counts, nested=False)
    except _Refused as refused:
        return str(refused)
    if counts["wide"] > 1:
        return "more than one repeat of '.' or a negated class (such as '.*' twice)"
    if counts["all"] > 4:
        return "more than four repeats"
    return ""


class _Refused(Exception):
    pass


def _walk(items: Any, counts: dict[str, int], *, nested: bool) -> None:
    for op, av in items:
        name = str(op)
        if name in ("GROUPREF", "GROUPREF_EXISTS"):
            raise _Refused("backreferences are not accepted")
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, body = av
            if high != low and high > 1:
                if nested:
                    raise _Refused("a repeat inside a repeat (such as '(a+)+')")
                counts["all"] += 1
                counts["wide"] += _is_wide(body)
                _walk(body, counts, nested=True)
            else:
                _walk(body, counts, nested=nested)
        elif name == "SUBPATTERN":
            _walk(av[-1], counts, nested=nested)
        elif name == "ATOMIC_GROUP":
            _walk(av, counts, nested=nested)
        elif name == "BRANCH":
            for branch in av[1]:
                _walk(branch, counts, nested=nested)
        elif name in ("ASSERT", "ASSERT_NOT"):
            _walk(av[1], counts, nested=nested)


def _is_wide(body: Any) -> bool:
    """Whether a repeated item can match spaces, and so run over a whole description."""
    for op, av in body:
        name = str(op)
        if name in _WIDE:
            return True
        if name == "IN" and any(_wide_member(str(o), a) for o, a in av):
            return True
        if name == "SUBPATTERN" and _is_wide(av[-1]):
            return True
        if name == "BRANCH" and any(_is_wide(b) for b in av[1]):
            return True
    return False


def _wide_member(op: str, arg: Any) -> bool:
    r"""A class member that makes the class span words: a negation, ``\S``, a space."""
    if op == "NEGATE" or (op == "LITERAL" and arg == 32):
        return True
    return op == "CATEGORY" and str(arg) in (*_WIDE_CATEGORIES, "CATEGORY_SPACE")
