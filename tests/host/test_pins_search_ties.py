"""MaxScore's stopping rule keeps ties exact (issue 36).

A query stops reading long posting lists when no unseen tool can reach the current top
(MaxScore). "Cannot reach" must mean *strictly below* the floor: a tool that can only tie the
floor may still win its place, since ties go to the toolset's order. Two terms with the same
weights over disjoint halves of 300 identical-length tools make every score tie exactly; the
search must then answer what a full sum answers, whichever term it reads first.
"""

from __future__ import annotations

import pytest

from toolpacks.host.search._index import SearchDocument, SearchIndex, query_terms


def _index() -> SearchIndex:
    docs = [
        SearchDocument(
            f"t{i}", f"p.t{i}", "p", "zebra common" if i < 150 else "yak common", (), ()
        )
        for i in range(300)
    ]
    return SearchIndex(docs)


def _full(index: SearchIndex, query: str, limit: int) -> list[int]:
    scores: dict[int, float] = {}
    for term in query_terms(query):
        found = index._term(term)
        for i, w in (found[1] if found else {}).items():
            scores[i] = scores.get(i, 0.0) + w
    return [i for i, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


@pytest.mark.parametrize("query", ["zebra yak", "yak zebra"])
@pytest.mark.parametrize("limit", [1, 5, 20])
def test_exact_ties_at_the_floor_rank_as_a_full_sum(query: str, limit: int) -> None:
    index = _index()
    zebra, yak = index._term("zebra"), index._term("yak")
    assert zebra is not None
    assert yak is not None
    assert zebra[0] == yak[0], "the two terms must weigh the same for the ties to be exact"
    got = [i for i, _ in index.bm25(query, limit)]
    assert got == _full(index, query, limit) == list(range(limit))
