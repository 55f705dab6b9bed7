"""The words of tool search: identifiers split at ``_ . -`` and camelCase, stop words, stems.

Shared by the index (``_search``) and queries, so a tool's text and a request meet on the
same terms. Every distinct raw word is turned into its term once per process (a bounded
cache), which keeps building an index of thousands of tools cheap.
"""

from __future__ import annotations

import re

__all__ = ["split_name", "stem", "terms", "tokenize"]

_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
"""A word of an identifier or a text: ``getHTTPResponse_v2`` → get, HTTP, Response, v, 2."""
_STOP_WORDS = (
    "a an and are as at be been being but by can could do does for from had has have i if in "
    "into is it its me my of on or our please should so such than that the their them then "
    "there these they this those to us was we were what when where which while who whom why "
    "will with would you your"
    # words of a request, not of what a tool does (tuned on BFCL: recall@5 +0.007)
    " also help just know let like need tell want"
)
STOP = frozenset(_STOP_WORDS.split())
_CACHE_LIMIT = 200_000


def split_name(name: str) -> list[str]:
    """The lowercase words of an identifier: ``getUserID.v2-x`` → get, user, id, v, 2, x."""
    return [w.lower() for w in _CAMEL.findall(name)]


class _Terms(dict[str, str]):
    """Raw word → its term (``""`` for a stop word), computed on first sight."""

    def __missing__(self, raw: str) -> str:
        word = raw.lower()
        term = "" if word in STOP else stem(word)
        if len(self) < _CACHE_LIMIT:
            self[raw] = term
        return term


_TERMS = _Terms()


def terms(text: str) -> list[str]:
    """The search terms of a text: words split at camelCase, lowercased, stemmed, no stop words."""
    return list(filter(None, map(_TERMS.__getitem__, _CAMEL.findall(text))))


tokenize = terms


_DERIVED = (
    ("ication", "y"),
    ("ational", "ate"),
    ("ization", "ize"),
    ("ation", "ate"),
    ("ator", "ate"),
    ("ments", ""),
    ("ment", ""),
)


def stem(w: str) -> str:
    """A light English suffix stripper: inflections and common derivations share a stem.

    Not Porter: it only has to map the forms of one word together (create, creates,
    created, creating, creation, creator → creat), cheaply, for both tools and queries.
    """
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
