"""Fuzzing a real ``toolpacks serve`` subprocess with raw JSON-RPC lines.

One server serves the whole module. Hypothesis writes batches of lines to its stdin:
``tools/call`` requests whose arguments text may hold duplicate keys, ``NaN``/``Infinity``,
huge integers and lone surrogate escapes; envelopes with wrong types; notifications; and
garbage (random bytes, truncated JSON, JSON that is not a message). The properties: every
line with a request id gets exactly one response with that id, every other line that is not
a notification or blank gets one error response with a null id, every response is strict
JSON (valid UTF-8, no ``NaN`` token, no lone surrogate), and the process stays alive.

Runs are derandomized, so CI sees the same examples every time.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import queue
import subprocess
import sys
import textwrap
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import RawServer

FUZZ_PACK = '''
"""Echoing tools for the served fuzz tests."""

from typing import Any

from pydantic import BaseModel

from toolpacks import Tool, hookimpl, tool


class Inner(BaseModel):
    """A nested model."""

    x: float
    visible: bool = True


@tool
def echo(text: str) -> str:
    """Echo a text."""
    return text


@tool
def echo_any(data: Any = None) -> Any:
    """Echo any value."""
    return data


@tool
def number(x: float) -> float:
    """Echo a number."""
    return x


@tool
def typed(
    n: int = 0,
    x: float = 0.0,
    flag: bool = False,
    ints: list[int] | None = None,
    point: Inner | None = None,
    table: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Echo arguments of every kind."""
    return {
        "n": n, "x": x, "flag": flag, "ints": ints, "table": table,
        "point": point.model_dump() if point is not None else None,
    }


def _echo(**kwargs: Any) -> dict[str, Any]:
    return kwargs


schema_only = Tool(
    _echo,
    name="schema_only",
    description="Echo schema-checked arguments.",
    parameters={
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "x": {"type": "number"},
            "on": {"type": "boolean"},
            "rows": {"type": "array", "items": {"type": "object"}},
            "data": {},
        },
    },
)


@hookimpl
def register_tools(register):
    for t in (echo, echo_any, number, typed, schema_only):
        register(t)
'''

TOOL_NAMES = ["echo", "echo_any", "number", "typed", "schema_only"]
FUZZ = settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


class FuzzServer(RawServer):
    """``toolpacks serve --agent fuzz`` serving the echoing pack, spoken to with raw lines."""

    def __init__(self, directory: Path) -> None:  # RawServer's start, with this pack
        (directory / "fuzz_pack.py").write_text(textwrap.dedent(FUZZ_PACK))
        dist = directory / "toolpacks_fuzz-0.1.dist-info"
        dist.mkdir(exist_ok=True)
        metadata = "Metadata-Version: 2.1\nName: toolpacks-fuzz\nVersion: 0.1\n"
        (dist / "METADATA").write_text(metadata)
        (dist / "entry_points.txt").write_text("[toolpacks]\nfuzz = fuzz_pack\n")
        config = directory / "toolpacks.toml"
        config.write_text('[agents.fuzz]\npacks = ["fuzz"]\n')
        self.directory = directory
        self.errlog = directory / "stderr.log"
        environ = {**os.environ, "PYTHONPATH": str(directory)}
        args = ["-m", "toolpacks", "serve", "--agent", "fuzz", "--config", str(config)]
        with self.errlog.open("wb") as errlog:
            self.proc = subprocess.Popen(
                [sys.executable, *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errlog,
                env=environ,
                cwd=directory,
            )
        self._lines = queue.Queue()
        self._next_id = 0
        threading.Thread(target=self._pump, daemon=True).start()


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FuzzServer]:
    """One initialized fuzz server for the module."""
    server = FuzzServer(tmp_path_factory.mktemp("fuzz"))
    try:
        server.initialize()
        yield server
    finally:
        server.kill()


# -- lines ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pairs:
    """A JSON object as written: its keys in order, repeats allowed."""

    items: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Token:
    """A JSON token written as is (``NaN``, ``1e999``, a 150-digit integer)."""

    text: str


def dump(value: Any) -> str:
    """JSON text for ``value``; strings are ASCII, so a lone surrogate is sent as an escape."""
    if isinstance(value, Pairs):
        return "{" + ",".join(f"{json.dumps(k)}: {dump(v)}" for k, v in value.items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dump(v) for v in value) + "]"
    if isinstance(value, Token):
        return value.text
    return json.dumps(value)  # float("nan") -> NaN, float("inf") -> Infinity


ANY_CHAR = st.characters(exclude_categories=())  # surrogates included
SPECIAL_CHARS = st.sampled_from(["\ud800", "\udfff", '"', "\\", ":"])
texts = st.text(alphabet=ANY_CHAR | SPECIAL_CHARS, max_size=8)
TOKENS = [
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    "-1E400",
    "9" * 150,
    "1" + "0" * 4000,
    '"nan"',
    '"Infinity"',
    '"1e999"',
    '"\\ud800"',
    '"a\\udc00b"',
    "true",
    "1.5",
    "-0",
]
keys = st.sampled_from(["text", "data", "x", "n", "flag", "ints", "point", "table", "on", "rows"])
leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**120), max_value=10**120)
    | st.floats(allow_nan=True, allow_infinity=True)
    | texts
    | st.sampled_from(TOKENS).map(Token)
)
values = st.recursive(
    leaves,
    lambda children: (
        st.lists(children, max_size=4)
        | st.lists(st.tuples(keys | texts, children), max_size=4).map(
            lambda items: Pairs(tuple(items))
        )
    ),
    max_leaves=12,
)
# Arguments objects: parameter names (repeated sometimes, so duplicate keys), any values.
arguments_objects = st.lists(st.tuples(keys, values), max_size=5).map(
    lambda items: Pairs(tuple(items))
)
# Per tool, values its parameters accept (and, one time in three, any value instead).
clean_floats = st.floats(allow_nan=False, allow_infinity=False)
clean_ints = st.integers(min_value=-(10**99), max_value=10**99)
PARAMETERS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "echo": {"text": texts},
    "echo_any": {"data": values},
    "number": {"x": clean_floats},
    "typed": {
        "n": clean_ints,
        "x": clean_floats,
        "flag": st.booleans(),
        "ints": st.lists(clean_ints, max_size=3),
        "point": st.builds(lambda x: Pairs((("x", x),)), clean_floats),
        "table": st.lists(st.tuples(st.text(max_size=3), clean_ints), max_size=2).map(
            lambda items: Pairs(tuple(items))
        ),
    },
    "schema_only": {
        "n": clean_ints,
        "x": clean_floats,
        "on": st.booleans(),
        "rows": st.lists(st.just(Pairs((("w", 1),))), max_size=2),
        "data": values,
    },
}

REQUIRED = {"echo": ("text",), "number": ("x",)}


def arguments_for(name: str) -> st.SearchStrategy[Pairs]:
    """Arguments object for the tool ``name``: its parameters, some values hostile."""
    parameters = PARAMETERS.get(name)
    if parameters is None:
        return arguments_objects
    mixed = {key: strategy | strategy | leaves for key, strategy in parameters.items()}
    required = {key: mixed[key] for key in REQUIRED.get(name, ())}
    optional = {key: value for key, value in mixed.items() if key not in required}
    return st.fixed_dictionaries(required, optional=optional).map(
        lambda args: Pairs(tuple(args.items()))
    )


ids = itertools.count(1)


@dataclass
class Line:
    """One line to send, and what it should get back."""

    data: bytes
    request_id: str | int | None = None
    """The id of the one response it must get (None: no response with an id)."""
    null_answer: bool | None = None
    """Whether it must get an error with a null id (None: not sure, not checked)."""


def _new_id(kind: str) -> str | int:
    n = next(ids)
    return {
        "int": n,
        "negative": -n,
        "big": 2**70 + n,
        "str": f"r{n}",
        "unicode": f"\u00e9\u4e2d{n}",
        "surrogate": f"\ud800{n}",  # no response could carry it as sent: refused, id null
    }[kind]


ID_KINDS = ["int", "negative", "big", "str", "unicode", "surrogate"]


@st.composite
def requests(draw: st.DrawFn) -> Line:
    """A ``tools/call`` request with a fresh id; its arguments or envelope may be hostile."""
    request_id = _new_id(draw(st.sampled_from(ID_KINDS)))
    name: Any = draw(st.sampled_from([*TOOL_NAMES, *TOOL_NAMES, "nope"]))
    arguments: Any = draw(st.one_of([arguments_for(name)] * 3 + [arguments_objects]))
    method: Any = "tools/call"
    params: Any = None
    envelope_extra: list[tuple[str, Any]] = []
    # Two requests in three have a well-formed envelope; the third has one or two changes.
    some_changes = st.lists(st.sampled_from(CHANGES), min_size=1, max_size=2, unique=True)
    for change in draw(st.just(()) | st.just(()) | some_changes):
        if change == "arguments":
            arguments = draw(values)
        elif change == "name":
            name = draw(leaves)
        elif change == "method":
            method = draw(st.sampled_from(["ping", "tools/list", "nope/x", 5, None, ""]))
        elif change == "params":
            params = draw(values)
        elif change == "jsonrpc":
            envelope_extra.append(("jsonrpc", draw(st.sampled_from(["2.0", "1.0", 2]))))
        elif change == "extra":
            envelope_extra.append(("extra", draw(values)))
    if params is None:
        params = Pairs((("name", name), ("arguments", arguments)))
    envelope = Pairs(
        (
            ("jsonrpc", "2.0"),
            ("id", request_id),
            ("method", method),
            ("params", params),
            *envelope_extra,
        )
    )
    if isinstance(request_id, str) and "\ud800" in request_id:
        return Line(dump(envelope).encode(), null_answer=True)
    return Line(dump(envelope).encode(), request_id=request_id, null_answer=False)


CHANGES = ["arguments", "name", "method", "params", "jsonrpc", "extra"]


def _classify(data: bytes) -> bool | None:
    """Whether a garbage line must get a null-id error (None: it may be a message)."""
    if not data.strip():
        return False
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return True
    return None if isinstance(value, dict) else True


@st.composite
def garbage(draw: st.DrawFn) -> Line:
    """A line that is not a JSON-RPC message: bytes, truncated JSON, JSON of another shape."""
    kind = draw(st.sampled_from(["bytes", "truncated", "json", "fixed"]))
    if kind == "bytes":
        data = draw(st.binary(max_size=40))
    elif kind == "truncated":
        full = draw(requests()).data
        data = full[: draw(st.integers(min_value=1, max_value=len(full) - 1))]
    elif kind == "json":
        data = dump(draw(values)).encode()
    else:
        data = draw(st.sampled_from(FIXED_GARBAGE))
    data = data.replace(b"\n", b" ")
    return Line(data, null_answer=_classify(data))


FIXED_GARBAGE = [
    b"{",
    b"[]",
    b"[{}]",
    b"null",
    b'"\\ud800"',
    b"\xff\xfe\x00",
    b"\xed\xa0\x80",  # a surrogate encoded as UTF-8 (invalid UTF-8)
    b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}',
    b'{"jsonrpc": "2.0", "id": null, "method": "ping"}',
    b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}',
    b'{"jsonrpc": "2.0", "id": true, "method": "ping"}',
    b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}',
    b'{"jsonrpc": "2.0"}',
    b'{"jsonrpc": "2.0", "method": 5}',
    b"[" * 5000,
    b"\x00",
]
notifications = st.sampled_from(
    [
        b'{"jsonrpc": "2.0", "method": "notifications/fuzz"}',
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        b'{"jsonrpc": "2.0", "method": "notifications/fuzz", "params": {"x": NaN}}',
        b"",
        b"   \t",
    ]
).map(lambda data: Line(data, null_answer=False))
batches = st.lists(requests() | requests() | garbage() | notifications, min_size=1, max_size=6)


# -- checking responses -----------------------------------------------------------------------

RESPONSE_TIMEOUT = 10.0


def _strict_constant(name: str) -> Any:
    raise AssertionError(f"a response holds the JSON token {name}")


def _problem(value: Any) -> str | None:
    """A lone surrogate or a non-finite number anywhere in ``value``, or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return f"non-finite number {item!r}"
        if isinstance(item, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in item):
            return f"lone surrogate in {item!r}"
        if isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _next_message(server: FuzzServer) -> dict[str, Any]:
    try:
        line = server._lines.get(timeout=RESPONSE_TIMEOUT)
    except queue.Empty:
        raise AssertionError(f"no response within {RESPONSE_TIMEOUT} s") from None
    assert line, f"the server closed its output; stderr: {server.stderr()[-2000:]}"
    text = line.decode("utf-8")  # strict: a response is valid UTF-8
    message = json.loads(text, parse_constant=_strict_constant)
    assert isinstance(message, dict), message
    assert message.get("jsonrpc") == "2.0", message
    assert ("result" in message) != ("error" in message), message
    assert "id" in message, message
    assert (problem := _problem(message)) is None, (problem, message)
    return message


answered: Counter[str | int] = Counter()
"""How many responses each id got, over the whole module."""


@FUZZ
@given(batch=batches)
def test_every_request_gets_one_response_and_the_server_lives(
    fuzz_server: FuzzServer, batch: list[Line]
) -> None:
    """Each id is answered once; other lines get a null-id error or nothing; no crash."""
    for line in batch:
        fuzz_server.send(line.data)
    sentinel = f"sentinel-{next(ids)}"
    fuzz_server.send({"jsonrpc": "2.0", "id": sentinel, "method": "ping"})
    expected = {line.request_id for line in batch if line.request_id is not None}
    nulls = 0
    seen: set[str | int] = set()
    while not (expected <= seen and sentinel in seen):
        message = _next_message(fuzz_server)
        request_id = message["id"]
        if request_id is None:
            nulls += 1
            assert "error" in message, message
            continue
        answered[request_id] += 1
        assert answered[request_id] == 1, f"a second response for id {request_id!r}: {message}"
        assert request_id in expected or request_id == sentinel, f"unexpected: {message}"
        seen.add(request_id)
    if all(line.null_answer is not None for line in batch):
        assert nulls == sum(bool(line.null_answer) for line in batch), (nulls, batch)
    assert fuzz_server.proc.poll() is None, fuzz_server.stderr()[-2000:]


def test_no_stray_responses_after_the_fuzz(fuzz_server: FuzzServer) -> None:
    """Once the fuzz is over, a ping's response is the only line to come."""
    fuzz_server.send({"jsonrpc": "2.0", "id": "last", "method": "ping"})
    message = _next_message(fuzz_server)
    assert message["id"] == "last", message
    assert fuzz_server.proc.poll() is None


# -- what the fuzzer found --------------------------------------------------------------------


@pytest.mark.parametrize("escaped_id", ['"\\ud800"', '"a\\udc00b"'])
def test_an_id_with_a_lone_surrogate_is_refused_with_a_null_id(
    fuzz_server: FuzzServer, escaped_id: str
) -> None:
    """No response could carry such an id as sent: -32600 with a null id, tool not run.

    Found by the fuzzer: the call once ran and its response carried the id with ``?`` in
    place of the surrogate, which no client could match.
    """
    fuzz_server.send(
        f'{{"jsonrpc": "2.0", "id": {escaped_id}, "method": "tools/call", '
        '"params": {"name": "echo", "arguments": {"text": "ran"}}}'
    )
    message = _next_message(fuzz_server)
    assert message["id"] is None
    assert message["error"]["code"] == -32600
    assert "lone surrogate" in message["error"]["message"]
    fuzz_server.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
    assert _next_message(fuzz_server)["id"] == "after"  # nothing else came in between
