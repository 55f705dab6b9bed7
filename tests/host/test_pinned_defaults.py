"""Pinned host behaviours: defaults of an empty config, toolset order, env references, redaction.

Each of these could change today without any other test failing; the values are asserted
exactly so that a change to a default is a deliberate, visible decision.
"""

from __future__ import annotations

import asyncio
import json
import types
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import pytest

from toolpacks import Host, Tool, Toolbox, Toolset, hookimpl, tool
from toolpacks.host._toolset import ToolEntry
from toolpacks.host.config._load import SettingsConfig

MIB = 1024 * 1024
Run = Callable[[Coroutine[Any, Any, Any]], Any]
PackOf = Callable[..., types.ModuleType]


@tool
def measure(text: str) -> int:
    """Return the length of ``text``."""
    return len(text)


@tool
def nesting(data: list[Any]) -> int:
    """Count how deeply the first elements of ``data`` nest."""
    depth = 0
    item: Any = data
    while isinstance(item, list):
        depth += 1
        item = item[0] if item else None
    return depth


@tool
def explode(reason: str) -> str:
    """Fail with ``reason`` as the exception message."""
    raise RuntimeError(reason)


@tool
def repeat(count: int) -> str:
    """Return ``count`` times the letter x."""
    return "x" * count


@pytest.fixture
def probe_host(pack_of: PackOf) -> Iterator[Host]:
    """A host with an empty config and one in-process pack ``probe``."""
    h = Host({}, discover=False)
    h.add_pack(pack_of(measure, nesting, explode, repeat), "probe")
    yield h
    h.close()


@pytest.fixture
def probe(probe_host: Host) -> Toolset:
    """The default toolset of ``probe_host``."""
    return probe_host.toolset()


def _text_of_bytes(size: int, filler: str = "a") -> str:
    """A ``{"text": ...}`` JSON object whose UTF-8 encoding is exactly ``size`` bytes."""
    overhead = len(b'{"text": ""}')
    text = '{"text": "' + filler * ((size - overhead) // len(filler.encode())) + '"}'
    text = text[:-2] + "a" * (size - len(text.encode())) + '"}'
    assert len(text.encode("utf-8")) == size
    return text


def _nested(depth: int) -> str:
    """Arguments for ``nesting`` whose JSON nesting (the outer object included) is ``depth``."""
    lists = depth - 1
    return '{"data": ' + "[" * lists + "]" * lists + "}"


# -- 1. defaults of a host with an empty configuration ----------------------------------------


def test_settings_config_defaults() -> None:
    """[settings] defaults: errors masked, 1 MiB and depth 64 caps, 100_000 chars, 8 at once."""
    settings = SettingsConfig()
    assert settings.expose_errors is False
    assert settings.extra_args is None
    assert settings.max_argument_bytes == 1024 * 1024
    assert settings.max_argument_depth == 64
    assert settings.max_content_chars == 100_000
    assert settings.max_concurrency == 8


def test_empty_config_gives_every_entry_the_default_call_options(probe: Toolset) -> None:
    """Every entry of an empty-config toolset runs with the pinned default call options."""
    entries = probe.entries()
    assert [e.exposed for e in entries] == ["explode", "measure", "nesting", "repeat"]
    for entry in entries:
        assert entry.options.expose_errors is False
        assert entry.options.limits.max_bytes == 1024 * 1024
        assert entry.options.limits.max_depth == 64
        assert entry.options.max_content_chars == 100_000
        assert entry.options.extra_args is None
    assert probe.max_concurrency == 8


def test_directly_built_toolset_caps_concurrency_at_8() -> None:
    """``Toolset(...)`` without ``max_concurrency`` caps ``call_many`` at 8, like the host."""
    assert Toolset([measure]).max_concurrency == 8


def test_arguments_text_of_exactly_one_mib_is_accepted(probe: Toolset, run: Run) -> None:
    """JSON arguments text of exactly 1 MiB passes the size cap and reaches the tool."""
    text = _text_of_bytes(MIB)
    result = run(probe.call("measure", text))
    assert result.is_error is False
    assert result.value == MIB - len(b'{"text": ""}')


@pytest.mark.parametrize("as_bytes", [False, True], ids=["str", "bytes"])
def test_arguments_text_one_byte_over_one_mib_is_refused(
    probe: Toolset, run: Run, as_bytes: bool
) -> None:
    """JSON arguments text of 1 MiB + 1 byte is an invalid_arguments result naming the cap."""
    text = _text_of_bytes(MIB + 1)
    result = run(probe.call("measure", text.encode() if as_bytes else text))
    assert result.is_error is True
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert str(MIB) in result.error.message
    assert result.value is None


def test_size_cap_counts_utf8_bytes_not_characters(probe: Toolset, run: Run) -> None:
    """Text under 1 MiB characters but over 1 MiB of UTF-8 bytes is refused."""
    text = _text_of_bytes(MIB + 1, filler="é")
    assert len(text) < MIB // 2 + 100
    result = run(probe.call("measure", text))
    assert result.is_error is True
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"


def test_arguments_nested_64_deep_are_accepted(probe: Toolset, run: Run) -> None:
    """JSON arguments nested exactly 64 levels deep (the outer object included) pass."""
    result = run(probe.call("nesting", _nested(64)))
    assert result.is_error is False
    assert result.value == 63


def test_arguments_nested_65_deep_are_refused(probe: Toolset, run: Run) -> None:
    """JSON arguments nested 65 levels deep are an invalid_arguments result naming 64."""
    result = run(probe.call("nesting", _nested(65)))
    assert result.is_error is True
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "64" in result.error.message


def test_depth_cap_ignores_brackets_inside_strings(probe: Toolset, run: Run) -> None:
    """Brackets inside a JSON string do not count towards the depth cap."""
    result = run(probe.call("measure", json.dumps({"text": "[" * 200})))
    assert result.is_error is False
    assert result.value == 200


def test_exception_message_is_masked_by_default(probe: Toolset, run: Run) -> None:
    """By default the model sees the exception type, never the exception's message."""
    secret = "db-password-is-hunter2-at-10.0.0.7"
    result = run(probe.call("explode", {"reason": secret}))
    assert result.is_error is True
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert secret not in result.content
    assert secret not in result.error.message
    assert "RuntimeError" in result.content
    assert result.error.exception_type == "RuntimeError"


def test_expose_errors_setting_shows_the_message(pack_of: PackOf, run: Run) -> None:
    """With ``[settings] expose_errors = true`` the message does reach the model (the contrast)."""
    secret = "db-password-is-hunter2-at-10.0.0.7"
    h = Host({"settings": {"expose_errors": True}}, discover=False)
    h.add_pack(pack_of(explode), "probe")
    entry = h.toolset().entries()[0]
    assert entry.options.expose_errors is True
    result = run(h.toolset().call("explode", {"reason": secret}))
    assert result.is_error is True
    assert secret in result.content


def test_content_of_100_000_chars_is_kept_whole(probe: Toolset, run: Run) -> None:
    """A result text of exactly 100_000 characters reaches the model unchanged."""
    result = run(probe.call("repeat", {"count": 100_000}))
    assert result.is_error is False
    assert result.content == "x" * 100_000


def test_content_over_100_000_chars_is_truncated(probe: Toolset, run: Run) -> None:
    """A result text of 100_001 characters is cut to 100_000 and marked as truncated."""
    result = run(probe.call("repeat", {"count": 100_001}))
    assert result.value == "x" * 100_001
    assert result.content.startswith("x" * 100_000)
    assert not result.content.startswith("x" * 100_001)
    assert "truncated" in result.content


def test_call_many_runs_at_most_8_calls_at_once(pack_of: PackOf, run: Run) -> None:
    """With the default cap, a batch of 20 slow calls never has more than 8 running."""
    state = {"now": 0, "peak": 0}

    @tool
    async def slow(i: int) -> int:
        """Hold a slot for a moment and return ``i``."""
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        await asyncio.sleep(0.05)
        state["now"] -= 1
        return i

    h = Host({}, discover=False)
    h.add_pack(pack_of(slow), "probe")
    results = run(h.toolset().call_many([("slow", {"i": i}) for i in range(20)]))
    assert [r.value for r in results] == list(range(20))
    assert state["peak"] == 8


# -- 3. toolset order and what a toolset accepts --------------------------------------------


@tool
def zulu() -> str:
    """Answer z."""
    return "z"


@tool
def alpha() -> str:
    """Answer a."""
    return "a"


@tool(name="Mike")
def mike() -> str:
    """Answer m."""
    return "m"


@pytest.mark.parametrize(
    "order",
    [["p_zulu", "p_alpha", "p_mike"], ["p_mike", "p_alpha", "p_zulu"]],
    ids=["z-a-m", "m-a-z"],
)
def test_host_toolset_names_are_sorted_whatever_the_pack_order(
    pack_of: PackOf, order: list[str]
) -> None:
    """names(), entries(), iteration and definitions follow code-point order of exposed names."""
    tools = {"p_zulu": zulu, "p_alpha": alpha, "p_mike": mike}
    h = Host({}, discover=False)
    for pack in order:
        h.add_pack(pack_of(tools[pack]), pack)
    ts = h.toolset()
    expected = ["Mike", "alpha", "zulu"]  # code-point order: upper case first
    assert ts.names() == expected
    assert [e.exposed for e in ts.entries()] == expected
    assert [t.name for t in ts] == expected
    assert [d["function"]["name"] for d in ts.definitions("openai")] == expected
    assert [e.qualified for e in ts.entries()] == ["p_mike.Mike", "p_alpha.alpha", "p_zulu.zulu"]


def test_directly_built_toolset_is_sorted_by_exposed_name() -> None:
    """``Toolset([...])`` sorts its tools by name, not by the order they were given."""
    assert Toolset([zulu, alpha, mike]).names() == ["Mike", "alpha", "zulu"]
    assert Toolset([mike, zulu, alpha]).names() == ["Mike", "alpha", "zulu"]


class _Box(Toolbox):
    """A toolbox, which is not a Tool."""

    def hello(self) -> str:
        """Answer hello."""
        return "hello"


def _plain(x: int) -> int:
    """A typed function that was never made a tool."""
    return x


@pytest.mark.parametrize(
    ("item", "type_name"),
    [(_plain, "function"), ("alpha", "str"), (None, "NoneType"), (_Box(), "_Box")],
    ids=["function", "str", "None", "toolbox"],
)
def test_toolset_refuses_what_is_not_a_tool(item: Any, type_name: str) -> None:
    """``Toolset`` raises TypeError naming the type of anything but a Tool or ToolEntry."""
    with pytest.raises(TypeError, match=f"^Expected Tool object, got {type_name}: "):
        Toolset([alpha, item])


def test_toolset_accepts_tool_entries_under_their_exposed_name() -> None:
    """A ``ToolEntry`` is taken as given: its exposed name and qualified name are kept."""
    ts = Toolset([ToolEntry("a_one", "pk.alpha", "pk", alpha), zulu])
    assert ts.names() == ["a_one", "zulu"]
    assert ts.qualified_name("a_one") == "pk.alpha"
    assert isinstance(ts.get("pk.alpha"), Tool)
    assert ts.get("pk.alpha") is alpha


# -- 5. environment references inside lists ---------------------------------------------------


def _config_pack(seen: list[dict[str, Any]]) -> types.ModuleType:
    """A pack that records the settings it receives through ``register.config``."""
    module = types.ModuleType("pinned_config_pack")

    def register_tools(register: Any) -> None:
        seen.append(dict(register.config))
        register(alpha)

    module.register_tools = hookimpl(register_tools)  # type: ignore[attr-defined]
    return module


def test_env_references_inside_lists_are_resolved(monkeypatch: pytest.MonkeyPatch) -> None:
    """``{ env = ... }`` in lists, nested lists and tables in lists reach the pack resolved."""
    monkeypatch.setenv("TP_PIN_HOST_A", "a.example")
    monkeypatch.setenv("TP_PIN_HOST_B", "b.example")
    monkeypatch.delenv("TP_PIN_UNSET", raising=False)
    config = {
        "packs": {
            "svc": {
                "hosts": [{"env": "TP_PIN_HOST_A"}, "static.example", {"env": "TP_PIN_HOST_B"}],
                "fallbacks": [{"env": "TP_PIN_UNSET", "default": "fallback.example"}],
                "matrix": [[{"env": "TP_PIN_HOST_A"}], [1, {"env": "TP_PIN_HOST_B"}]],
                "mirrors": [{"url": {"env": "TP_PIN_HOST_B"}, "weight": 2}],
            }
        }
    }
    seen: list[dict[str, Any]] = []
    h = Host(config, discover=False)
    h.add_pack(_config_pack(seen), "svc")
    assert h.toolset().names() == ["alpha"]
    assert seen == [
        {
            "hosts": ["a.example", "static.example", "b.example"],
            "fallbacks": ["fallback.example"],
            "matrix": [["a.example"], [1, "b.example"]],
            "mirrors": [{"url": "b.example", "weight": 2}],
        }
    ]


def test_unset_env_reference_inside_a_list_fails_the_pack_naming_the_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An unset variable without default in a list fails the pack; the error names key[index]."""
    monkeypatch.setenv("TP_PIN_HOST_A", "a.example")
    monkeypatch.delenv("TP_PIN_MISSING", raising=False)
    config = {"packs": {"svc": {"hosts": [{"env": "TP_PIN_HOST_A"}, {"env": "TP_PIN_MISSING"}]}}}
    seen: list[dict[str, Any]] = []
    h = Host(config, discover=False)
    h.add_pack(_config_pack(seen), "svc")
    loaded = h.load("svc")
    assert loaded.info.status == "failed"
    assert loaded.info.error is not None
    assert "packs.svc.hosts[1]" in loaded.info.error
    assert "'TP_PIN_MISSING'" in loaded.info.error
    assert seen == []


# -- 6. redaction in the shown configuration ------------------------------------------------


def test_shown_config_redacts_authorization_and_secret_env_defaults() -> None:
    """``shown_config()`` hides authorization values and defaults of secret env references."""
    raw = {
        "packs": {
            "svc": {
                "Authorization": "Basic dXNlcjpwYXNz",
                "headers": {"AUTHORIZATION": "opaque-value", "accept": "text/plain"},
                "api_key": {"env": "SVC_API_KEY", "default": "dev-key-123"},
                "region": {"env": "SVC_REGION", "default": "eu-west-1"},
            }
        }
    }
    h = Host(raw, discover=False)
    assert h.shown_config() == {
        "packs": {
            "svc": {
                "Authorization": "****",
                "headers": {"AUTHORIZATION": "****", "accept": "text/plain"},
                "api_key": {"env": "SVC_API_KEY", "default": "****"},
                "region": {"env": "SVC_REGION", "default": "eu-west-1"},
            }
        }
    }
    assert h.config.raw["packs"]["svc"]["api_key"]["default"] == "dev-key-123"
    assert h.config.raw["packs"]["svc"]["Authorization"] == "Basic dXNlcjpwYXNz"
