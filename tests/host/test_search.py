"""``Toolset.search``: ranking, filtering, patterns, manifest-only toolsets and pack rankers."""

from __future__ import annotations

import base64
import hashlib
import sys
import textwrap
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Host, SearchHit, Tool, Toolset, tool
from toolpacks.host.search._index import SearchDocument
from toolpacks.host.search._text import stem, tokenize


@tool
def get_weather(city: str, units: str = "metric") -> str:
    """Return the current weather for a city.

    Args:
        city: The city's name.
        units: metric or imperial.
    """
    return city


@tool
def sendSlackMessage(channel: str, text: str) -> str:
    """Post a message to a chat room."""
    return text


@tool(tags=["filesystem"])
def read_file(path: str) -> str:
    """Read a text file."""
    return path


@tool
def convert_currency(amount: float, source_iso_code: str, target_iso_code: str) -> float:
    """Change money from one denomination to another.

    Args:
        amount: How much.
        source_iso_code: Three-letter code of the money held, such as EUR.
        target_iso_code: Three-letter code of the money wanted.
    """
    return amount


@tool(tags=["billing"])
def list_invoices(customer: str) -> list[str]:
    """Show what a customer was charged."""
    return []


@pytest.fixture
def toolset() -> Toolset:
    return Toolset([get_weather, sendSlackMessage, read_file, convert_currency, list_invoices])


def names(hits: Sequence[SearchHit]) -> list[str]:
    return [h.exposed for h in hits]


# -- ranking and filtering ----------------------------------------------------------------------


def test_hits_carry_the_exposed_name_the_tool_and_a_score_best_first(toolset: Toolset) -> None:
    """A hit is frozen and names the tool as the model calls it; scores only go down."""
    hits = toolset.search("weather in Paris")
    assert names(hits) == ["get_weather"]
    assert hits[0].tool is toolset.get("get_weather")
    assert hits[0].score > 0
    with pytest.raises(AttributeError):
        hits[0].score = 0.0  # type: ignore[misc]
    broad = toolset.search("file message weather", limit=5)
    assert [h.score for h in broad] == sorted((h.score for h in broad), reverse=True)


def test_name_words_are_split_at_underscores_and_camel_case(toolset: Toolset) -> None:
    """``sendSlackMessage`` is found by "slack" though no description says so."""
    assert names(toolset.search("slack")) == ["sendSlackMessage"]
    assert names(toolset.search("send a message"))[0] == "sendSlackMessage"


def test_parameter_names_and_descriptions_are_searched(toolset: Toolset) -> None:
    """Words only in a parameter's name or description still find the tool."""
    assert names(toolset.search("iso code")) == ["convert_currency"]
    assert names(toolset.search("imperial"))[0] == "get_weather"


def test_tags_are_searched(toolset: Toolset) -> None:
    assert names(toolset.search("billing")) == ["list_invoices"]
    assert names(toolset.search("filesystem")) == ["read_file"]


def test_inflections_share_a_stem(toolset: Toolset) -> None:
    """Converting currencies finds ``convert_currency``; invoice finds ``list_invoices``."""
    assert names(toolset.search("converting currencies"))[0] == "convert_currency"
    assert names(toolset.search("invoice"))[0] == "list_invoices"
    assert stem("creates") == stem("created") == stem("creation") == stem("creating")


def test_the_name_outranks_the_description() -> None:
    """A tool named for the words ranks above one whose description merely mentions them."""

    @tool
    def delete_file(path: str) -> str:
        """Remove a path."""
        return path

    @tool
    def archive(path: str) -> str:
        """Pack a folder; never deletes a file."""
        return path

    assert names(Toolset([archive, delete_file]).search("delete file")) == [
        "delete_file",
        "archive",
    ]


def test_qualified_names_and_packs_are_searched(
    pack_of: Callable[..., types.ModuleType],
) -> None:
    """The pack's name finds its tools; a qualified name finds its tool first."""
    host = Host({}, discover=False)
    host.add_pack(pack_of(get_weather), "meteo")
    host.add_pack(pack_of(read_file, list_invoices), "disk")
    toolset = host.toolset()
    assert names(toolset.search("meteo")) == ["get_weather"]
    assert names(toolset.search("disk.list_invoices"))[0] == "list_invoices"


def test_limit_caps_hits_and_nothing_matching_gives_nothing(toolset: Toolset) -> None:
    assert len(toolset.search("a the file message weather money", limit=2)) == 2
    assert toolset.search("zebra") == []
    assert toolset.search("the of and") == []  # stop words only


@pytest.mark.parametrize("limit", [0, -1])
def test_limit_below_one_is_refused(toolset: Toolset, limit: int) -> None:
    with pytest.raises(ValueError, match="limit"):
        toolset.search("weather", limit=limit)


def test_unknown_mode_is_refused(toolset: Toolset) -> None:
    with pytest.raises(ValueError, match="unknown search mode 'semantic'"):
        toolset.search("weather", mode="semantic")


def test_tokenizer_splits_identifiers_and_drops_stop_words() -> None:
    assert tokenize("getHTTPResponse of the user_id.v2-beta") == [
        "get",
        "http",
        "respons",
        "user",
        "id",
        "v",
        "2",
        "beta",
    ]


# -- regex ---------------------------------------------------------------------------------------


def test_regex_matches_names_tags_parameters_and_descriptions(toolset: Toolset) -> None:
    """A name match ranks above a tag or parameter match, above a description match."""
    assert names(toolset.search("^get_", mode="regex")) == ["get_weather"]
    assert names(toolset.search("slack", mode="regex")) == ["sendSlackMessage"]  # any case
    assert names(toolset.search("bill", mode="regex")) == ["list_invoices"]
    assert names(toolset.search("iso_code$", mode="regex")) == ["convert_currency"]
    assert names(toolset.search("chat room|file", mode="regex")) == [
        "read_file",
        "sendSlackMessage",
    ]


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("(", "refused: invalid pattern"),
        ("x" * 201, "at most 200"),
        (r"(a)\1", "backreferences are not supported"),
        ("(?=weather)", "lookaheads are not supported"),
        ("(?<!x)file", "lookbehinds are not supported"),
        ("(?>a+)b", "atomic groups are not supported"),
        ("a++b", "possessive repeats are not supported"),
    ],
)
def test_bad_or_unsupported_patterns_are_refused_with_a_reason(
    toolset: Toolset, pattern: str, why: str
) -> None:
    """Patterns run on RE2 (linear time); what it cannot express is refused, named."""
    with pytest.raises(ValueError, match=why.replace("(", r"\(").replace(".", r"\.")):
        toolset.search(pattern, mode="regex")


def test_one_wide_repeat_is_accepted(toolset: Toolset) -> None:
    assert names(toolset.search("read.*file", mode="regex")) == ["read_file"]


# -- the index ----------------------------------------------------------------------------------


def test_the_index_is_built_once_and_reused(
    toolset: Toolset, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolpacks.host.search import _index as _search

    built: list[int] = []
    original = _search.build_index

    def counting(entries: Any) -> Any:
        built.append(1)
        return original(entries)

    monkeypatch.setattr(_search, "build_index", counting)
    toolset.search("weather")
    toolset.search("slack")
    toolset.search("x", mode="regex")
    assert built == [1]


def _install(root: Path, module: str, source: str) -> None:
    """Install the distribution ``tpm-<module>`` (pack ``hello``) as an installer leaves it."""
    files = {f"{module}/__init__.py": textwrap.dedent(source)}
    info = f"tpm_{module}-1.0.dist-info"
    files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: tpm-{module}\n"
    files[f"{info}/entry_points.txt"] = f"[toolpacks]\nhello = {module}\n"
    record = []
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{rel},sha256={digest.decode()},{len(text.encode())}")
    (root / info / "RECORD").write_text("\n".join([*record, f"{info}/RECORD,,"]) + "\n")


def _forget(module: str) -> None:
    for name in [n for n in sys.modules if n == module or n.startswith(module + ".")]:
        del sys.modules[name]


MANIFEST_PACK = """
    from toolpacks import hookimpl, tool

    @tool(tags=["greeting"])
    def greet(name: str, shout: bool = False) -> str:
        '''Say hello to someone.

        Args:
            name: Who to greet.
            shout: Whether to use capital letters.
        '''
        return f"Hello, {name}!"

    @tool
    def count_words(words: list[str]) -> int:
        '''How many words there are.'''
        return len(words)

    @hookimpl
    def register_tools(register):
        register(greet)
        register(count_words)
"""


def test_searching_a_manifest_only_toolset_imports_no_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Names, descriptions, tags and parameters come from the manifest: the pack stays out."""
    site = tmp_path / "site"
    _install(site, "tps_lazy", MANIFEST_PACK)
    monkeypatch.syspath_prepend(str(site))
    try:
        Host({}, path=[str(site)]).toolset()  # imports the pack once: writes its manifest
        _forget("tps_lazy")
        toolset = Host({}, path=[str(site)]).toolset()
        assert toolset.get("greet").deferred
        assert names(toolset.search("capital letters")) == ["greet"]
        assert names(toolset.search("greeting")) == ["greet"]
        assert names(toolset.search("hello.count_words"))[0] == "count_words"
        assert names(toolset.search("^count", mode="regex")) == ["count_words"]
        assert "tps_lazy" not in sys.modules
    finally:
        _forget("tps_lazy")


# -- rankers --------------------------------------------------------------------------------------


class Reverse:
    """A ranker that puts the last document first, and remembers what it saw."""

    def __init__(self) -> None:
        self.seen: list[Sequence[SearchDocument]] = []

    def rank(
        self, query: str, documents: Sequence[SearchDocument], limit: int
    ) -> list[tuple[int, float]] | None:
        self.seen.append(documents)
        if query == "decline":
            return None
        order = list(range(len(documents)))[::-1]
        return [(i, float(len(documents) - n)) for n, i in enumerate(order)][:limit]


def test_a_ranker_given_to_the_toolset_ranks_the_default_search(toolset: Toolset) -> None:
    """It sees one document per tool, the same object each time; None falls back to BM25."""
    ranker = Reverse()
    toolset.ranker = ranker
    hits = toolset.search("weather", limit=2)
    assert names(hits) == toolset.names()[::-1][:2]
    assert [h.score for h in hits] == [5.0, 4.0]
    assert names(toolset.search("decline weather")) != []
    assert names(toolset.search("decline")) == []  # BM25: no tool matches "decline"
    assert ranker.seen[0] is ranker.seen[1]
    assert [d.exposed for d in ranker.seen[0]] == toolset.names()
    assert "city" in ranker.seen[0][toolset.names().index("get_weather")].text
    assert names(toolset.search("^get", mode="regex")) == ["get_weather"]  # not the ranker's


def test_a_pack_supplies_a_ranker_through_the_hook(
    pack_of: Callable[..., types.ModuleType],
) -> None:
    """``toolpacks_ranker`` in a pack of a toolset ranks its searches; other toolsets: BM25."""
    ranker = Reverse()
    host = Host({}, discover=False)
    host.add_pack(pack_of(get_weather, read_file, toolpacks_ranker=lambda: ranker), "ranked")
    host.add_pack(pack_of(list_invoices), "plain")
    assert names(host.toolset(packs=["ranked"]).search("weather")) == ["read_file", "get_weather"]
    assert names(host.toolset(packs=["plain"]).search("weather")) == []
    assert len(ranker.seen) == 1


def test_a_pack_with_a_ranker_is_imported_though_it_has_a_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its ranker only exists once it is imported: its manifest must not stand in for it."""
    source = textwrap.dedent(MANIFEST_PACK) + textwrap.dedent(
        """
        class Last:
            def rank(self, query, documents, limit):
                return [(len(documents) - 1, 1.0)]

        @hookimpl
        def toolpacks_ranker():
            return Last()
        """
    )
    site = tmp_path / "site"
    _install(site, "tps_ranked", source)
    monkeypatch.syspath_prepend(str(site))
    try:
        Host({}, path=[str(site)]).toolset()
        _forget("tps_ranked")
        toolset = Host({}, path=[str(site)]).toolset()
        assert "tps_ranked" in sys.modules
        assert names(toolset.search("words")) == ["greet"]
    finally:
        _forget("tps_ranked")


def test_nested_parameters_and_allowed_values_are_searched() -> None:
    """A word only in a nested property or an ``enum`` value (a unit, a size) finds the tool."""

    def order(**_: Any) -> str:
        return ""

    schema = {
        "type": "object",
        "properties": {
            "drink": {
                "type": "object",
                "properties": {"milk_type": {"type": "string", "enum": ["soy", "oat"]}},
            },
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
    }
    nested = Tool(order, name="order", description="Place an order.", input_schema=schema)
    toolset = Toolset([nested, read_file])
    assert names(toolset.search("milk")) == ["order"]
    assert names(toolset.search("fahrenheit")) == ["order"]


def test_numbers_in_a_request_do_not_pick_a_tool() -> None:
    """The numbers of a request are values: a tool whose text has 349 is no match for them."""

    @tool
    def legacy(code: str) -> str:
        """Decode status 349 of the old API."""
        return code

    assert Toolset([legacy, read_file]).search("compute 443 * 349") == []


# -- the BFCL benchmark's loader (bench/search_bfcl.py; the benchmark itself is not a test) ----


def test_bfcl_loader_pools_first_definitions_and_maps_types(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Names pooled across questions (first wins, odd names skipped), BFCL types → JSON Schema."""
    import importlib.util
    import json

    path = Path(__file__).resolve().parents[2] / "bench" / "search_bfcl.py"
    spec = importlib.util.spec_from_file_location("search_bfcl_under_test", path)
    assert spec is not None
    assert spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, bench)  # dataclasses look their module up
    monkeypatch.setattr(sys, "path", list(sys.path))  # the script puts bench/ on it
    spec.loader.exec_module(bench)

    def fn(name: str, description: str, **props: Any) -> dict[str, Any]:
        return {
            "name": name,
            "description": description,
            "parameters": {"type": "dict", "properties": props},
        }

    area = fn("geometry.area", "Area of a circle.", radius={"type": "float"})
    rows = [
        {
            "id": "simple_python_0",
            "question": [[{"role": "user", "content": "circle area r=2"}]],
            "function": [area, fn("bad name!", "Skipped.")],
        },
        {
            "id": "simple_python_1",
            "question": [
                [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "convert 5 USD"},
                ]
            ],
            "function": [
                fn("geometry.area", "A second definition."),
                fn(
                    "fx-convert",
                    "Convert money.",
                    opts={
                        "type": "dict",
                        "properties": {"pair": {"type": "tuple", "items": {"type": "any"}}},
                    },
                ),
            ],
        },
    ]
    answers = [
        {"id": "simple_python_0", "ground_truth": [{"geometry.area": {"radius": [2.0]}}]},
        {"id": "simple_python_1", "ground_truth": [{"fx-convert": {}}]},
    ]
    (tmp_path / "possible_answer").mkdir()
    (tmp_path / "BFCL_v4_simple_python.json").write_text("\n".join(map(json.dumps, rows)))
    (tmp_path / "BFCL_v4_parallel_simple_python.json").write_text("not read")
    (tmp_path / "possible_answer" / "BFCL_v4_simple_python.json").write_text(
        "\n".join(map(json.dumps, answers))
    )
    functions, questions = bench.load(tmp_path, ("simple_python",))
    assert list(functions) == ["geometry.area", "fx-convert"]
    assert functions["geometry.area"]["description"] == "Area of a circle."
    assert [(q.text, set(q.gold)) for q in questions] == [
        ("circle area r=2", {"geometry.area"}),
        ("convert 5 USD", {"fx-convert"}),
    ]
    schema = bench.json_schema(functions["fx-convert"]["parameters"])
    assert schema["type"] == "object"
    assert schema["properties"]["opts"]["properties"]["pair"] == {"type": "array", "items": {}}
    toolset = bench.build_toolset(functions)
    assert bench.recall(bench.toolpacks_search(toolset), questions)["recall@1"] == 1.0


def test_pruned_queries_rank_exactly_as_a_full_sum() -> None:
    """Stopping early on long posting lists (MaxScore) never changes the top results."""
    import random

    from toolpacks.host.search._index import SearchIndex, query_terms

    rng = random.Random(7)
    vocab = [f"w{i}x" for i in range(60)]
    weights = [1 / (i + 1) for i in range(len(vocab))]
    docs = [
        SearchDocument(
            f"t{i}_" + "_".join(rng.choices(vocab, weights, k=2)),
            f"p.t{i}",
            "p",
            " ".join(rng.choices(vocab, weights, k=20)),
            (),
            (),
        )
        for i in range(600)
    ]
    index = SearchIndex(docs)
    for _ in range(40):
        query = " ".join(rng.choices(vocab, weights, k=rng.randint(2, 12)))
        full: dict[int, float] = {}
        for term in query_terms(query):
            found = index._term(term)
            for i, w in (found[1] if found else {}).items():
                full[i] = full.get(i, 0.0) + w
        expected = sorted(full.items(), key=lambda item: (-item[1], item[0]))[:5]
        got = index.bm25(query, 5)
        assert [i for i, _ in got] == [i for i, _ in expected], query
        assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-6)
