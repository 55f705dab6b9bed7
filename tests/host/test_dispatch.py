"""Dispatch: call, call_many (concurrency, locks, order, isolation) and global hooks."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from toolpacks import Host, ToolContext, ToolError, Toolset, tagged, tool
from toolpacks.testing import call


def test_unknown_name_is_an_error_result_listing_names(toolset: Toolset) -> None:
    """Calling an unknown tool returns an error result that lists the available names."""
    result = call(toolset, "serch", {"query": "q"})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "not_found"
    assert "Available tools: delete, fetch, search" in result.content


def test_exposed_and_qualified_names_both_work(toolset: Toolset) -> None:
    """A tool can be called by its exposed or its qualified name."""
    assert call(toolset, "search", {"query": "a"}).value == "web:a"
    assert call(toolset, "web.search", {"query": "b"}).value == "web:b"


def test_result_carries_the_name_called(toolset: Toolset) -> None:
    """The result names the tool as the model called it."""
    assert call(toolset, "web.search", {"query": "a"}).tool_name == "web.search"


def test_bad_arguments_are_an_error_result(toolset: Toolset) -> None:
    """Invalid arguments give an error result, not an exception."""
    result = call(toolset, "search", {"q": 1})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"


def _concurrency_probe() -> tuple[Any, dict[str, int]]:
    state = {"running": 0, "peak": 0}

    @tool
    async def slow(n: int) -> int:
        """Sleep a little and return n."""
        state["running"] += 1
        state["peak"] = max(state["peak"], state["running"])
        await asyncio.sleep(0.02)
        state["running"] -= 1
        return n

    return slow, state


def test_call_many_respects_max_concurrency(pack_of: Callable[..., Any]) -> None:
    """No more than max_concurrency bodies run at once; results keep the input order."""
    slow, state = _concurrency_probe()
    host = Host({}, discover=False)
    host.add_pack(pack_of(slow), "p")
    ts = host.toolset()
    calls = [("slow", {"n": i}) for i in range(10)]
    results = asyncio.run(ts.call_many(calls, max_concurrency=3))
    assert [r.value for r in results] == list(range(10))
    assert state["peak"] == 3


def test_call_many_default_cap_comes_from_settings(pack_of: Callable[..., Any]) -> None:
    """The default cap is settings.max_concurrency."""
    slow, state = _concurrency_probe()
    host = Host({"settings": {"max_concurrency": 2}}, discover=False)
    host.add_pack(pack_of(slow), "p")
    asyncio.run(host.toolset().call_many([("slow", {"n": i}) for i in range(6)]))
    assert state["peak"] == 2


def test_call_many_rejects_a_cap_below_one(toolset: Toolset) -> None:
    """max_concurrency=0 is a mistake, not "unlimited" or "default"."""
    with pytest.raises(ValueError, match="at least 1"):
        asyncio.run(toolset.call_many([], max_concurrency=0))


def test_call_many_respects_a_locked_tool(pack_of: Callable[..., Any]) -> None:
    """A lock=True tool never runs twice at once, even in a wide batch."""
    state = {"running": 0, "peak": 0}
    guard = threading.Lock()

    @tool(lock=True)
    def exclusive(n: int) -> int:
        """Run alone."""
        with guard:
            state["running"] += 1
            state["peak"] = max(state["peak"], state["running"])
        threading.Event().wait(0.01)
        with guard:
            state["running"] -= 1
        return n

    host = Host({}, discover=False)
    host.add_pack(pack_of(exclusive), "p")
    results = asyncio.run(
        host.toolset().call_many([("exclusive", {"n": i}) for i in range(5)], max_concurrency=5)
    )
    assert [r.value for r in results] == [0, 1, 2, 3, 4]
    assert state["peak"] == 1


def test_call_many_one_failure_does_not_cancel_others(pack_of: Callable[..., Any]) -> None:
    """A failing tool and a raising hook give error results; the other calls complete."""

    @tool
    async def ok(n: int) -> int:
        """Return n after a pause."""
        await asyncio.sleep(0.01)
        return n

    @tool
    def boom() -> int:
        """Always fail."""
        raise RuntimeError("boom")

    @tool(tags=["hooked"])
    def guarded() -> int:
        """A tool whose global hook raises."""
        return 1

    host = Host({}, discover=False)
    host.add_pack(pack_of(ok, boom, guarded), "p")

    def explode(tool: Any, arguments: Any, context: Any) -> None:
        raise RuntimeError("hook failure")

    host.hook("before_invoke", tags=["hooked"])(explode)
    calls: list[Any] = [
        ("ok", {"n": 1}),
        ("boom", {}),
        {"name": "guarded", "arguments": {}, "id": "call_g"},
        ("nope", {}),
        ("ok", {"n": 2}),
    ]
    results = asyncio.run(host.toolset().call_many(calls))
    assert [r.value for r in results] == [1, None, None, None, 2]
    assert [r.is_error for r in results] == [False, True, True, True, False]
    kinds = [r.error.kind if r.error is not None else None for r in results]
    assert kinds == [None, "tool_error", "tool_error", "not_found", None]
    assert results[2].call_id == "call_g"
    assert "failed in a hook" in results[2].content


def test_call_many_gives_each_call_its_own_id(toolset: Toolset) -> None:
    """With one context for a batch, every call still gets a distinct call id."""
    ctx = ToolContext(call_id="batch", agent_id="x")
    results = asyncio.run(
        toolset.call_many([("search", {"query": "a"}), ("search", {"query": "b"})], ctx)
    )
    assert [r.call_id for r in results] == ["batch.0", "batch.1"]


# -- global hooks -------------------------------------------------------------------------------


def test_pack_hooks_fire_with_agent_id_in_context(pack_of: Callable[..., Any]) -> None:
    """A pack's before/after hooks fire around every call, with the agent id in the context."""
    events: list[tuple[str, str, str | None]] = []

    @tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    def before_invoke(tool: Any, arguments: Any, context: ToolContext) -> None:
        events.append(("before", tool.name, context.agent_id))

    def after_invoke(tool: Any, result: Any, context: ToolContext) -> None:
        events.append(("after", result.value, context.agent_id))

    host = Host({"agents": {"alice": {}}}, discover=False)
    host.add_pack(pack_of(echo, before_invoke=before_invoke, after_invoke=after_invoke), "p")
    assert call(host.toolset("alice"), "echo", {"text": "hi"}).value == "hi"
    assert events == [("before", "echo", "alice"), ("after", "hi", "alice")]


def test_pack_hooks_may_take_fewer_arguments(pack_of: Callable[..., Any]) -> None:
    """A pack hook declaring only some of the spec's arguments is called with just those."""
    names: list[str] = []

    @tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    def before_invoke(tool: Any) -> None:
        names.append(tool.name)

    host = Host({}, discover=False)
    host.add_pack(pack_of(echo, before_invoke=before_invoke), "p")
    assert not call(host.toolset(), "echo", {"text": "x"}).is_error
    assert names == ["echo"]


def test_on_error_and_on_yield_hooks(pack_of: Callable[..., Any]) -> None:
    """on_error sees the exception; on_yield sees each item of a generator tool."""
    seen: list[Any] = []

    @tool
    def fail() -> str:
        """Always fail."""
        raise ValueError("nope")

    @tool
    def counter(n: int) -> Iterator[int]:
        """Yield 0..n-1."""
        yield from range(n)

    host = Host({}, discover=False)
    host.add_pack(
        pack_of(
            fail,
            counter,
            on_error=lambda tool, exc, context: seen.append(("error", type(exc).__name__)),
            on_yield=lambda tool, item, context: seen.append(("item", item)),
        ),
        "p",
    )
    ts = host.toolset()
    failed = call(ts, "fail")
    assert failed.error is not None
    assert failed.error.kind == "tool_error"
    assert call(ts, "counter", {"n": 2}).value == 1
    assert seen == [("error", "ValueError"), ("item", 0), ("item", 1)]


def test_tagged_pack_hook_fires_only_for_overlapping_tags(pack_of: Callable[..., Any]) -> None:
    """A hook marked @tagged("io") fires for tools with the io tag and no others."""
    fired: list[str] = []

    @tagged("io", "net")
    def before_invoke(tool: Any, arguments: Any, context: Any) -> None:
        fired.append(tool.name)

    @tool(tags=["io", "disk"])
    def read_file() -> str:
        """Read."""
        return ""

    @tool(tags=["math"])
    def add() -> int:
        """Add."""
        return 0

    host = Host({}, discover=False)
    host.add_pack(pack_of(read_file, add, before_invoke=before_invoke), "p")
    ts = host.toolset()
    call(ts, "read_file")
    call(ts, "add")
    assert fired == ["read_file"]


def test_host_hook_with_tags(host: Host) -> None:
    """host.hook(..., tags=[...]) fires only for tools sharing a tag; without tags, for all."""
    tagged_calls: list[str] = []
    all_calls: list[str] = []
    host.hook("before_invoke", tags=["io"])(lambda tool: tagged_calls.append(tool.name))
    host.hook("after_invoke")(lambda tool, result: all_calls.append(tool.name))
    ts = host.toolset()
    call(ts, "search", {"query": "q"})
    call(ts, "fetch", {"url": "u"})
    assert tagged_calls == ["fetch"]
    assert all_calls == ["search", "fetch"]


def test_async_host_hook(host: Host) -> None:
    """Host hooks may be coroutines."""
    seen: list[str] = []

    async def record(tool: Any, arguments: Any, context: Any) -> None:
        await asyncio.sleep(0)
        seen.append(tool.name)

    host.hook("before_invoke")(record)
    call(host.toolset(), "search", {"query": "q"})
    assert seen == ["search"]


def test_per_tool_hooks_fire_before_global_ones(pack_of: Callable[..., Any]) -> None:
    """A tool's own hooks run before the host's and the packs' global hooks."""
    order: list[str] = []

    @tool
    def work() -> str:
        """Work."""
        return "done"

    @work.before_invoke
    def own_before(**kwargs: Any) -> None:
        order.append("tool-before")

    @work.after_invoke
    def own_after(value: Any) -> None:
        order.append("tool-after")

    host = Host({}, discover=False)
    host.add_pack(
        pack_of(
            work,
            before_invoke=lambda tool: order.append("pack-before"),
            after_invoke=lambda tool: order.append("pack-after"),
        ),
        "p",
    )
    host.hook("before_invoke")(lambda tool: order.append("host-before"))
    call(host.toolset(), "work")
    assert order == [
        "tool-before",
        "host-before",
        "pack-before",
        "tool-after",
        "pack-after",
    ]


def test_alias_hooks_fire_once(pack_of: Callable[..., Any]) -> None:
    """A pack and its alias share code: their global hook fires once per call, not twice."""
    fired: list[str] = []

    @tool
    def work() -> str:
        """Work."""
        return "done"

    host = Host({"packs": {"copy": {"pack": "p"}}}, discover=False)
    host.add_pack(pack_of(work, before_invoke=lambda tool: fired.append(tool.name)), "p")
    ts = host.toolset(on_conflict="prefix")
    assert ts.names() == ["copy_work", "p_work"]
    call(ts, "p_work")
    assert fired == ["work"]


def test_pack_hooks_only_from_packs_in_the_toolset(pack_of: Callable[..., Any]) -> None:
    """A pack's global hooks apply to toolsets that include the pack."""
    fired: list[str] = []

    @tool
    def work() -> str:
        """Work."""
        return "done"

    host = Host({}, discover=False)
    host.add_pack(pack_of(work), "worker")
    host.add_pack(pack_of(before_invoke=lambda tool: fired.append(tool.name)), "audit")
    call(host.toolset(packs=["worker"]), "work")
    assert fired == []
    call(host.toolset(packs=["worker", "audit"]), "work")
    assert fired == ["work"]


def test_error_messages_name_the_tool_as_the_model_called_it(
    pack_of: Callable[..., Any],
) -> None:
    """A renamed tool's error result names the exposed name, not the tool's own."""

    @tool
    def query(sql: str) -> str:
        """Run SQL."""
        raise ToolError("read-only")

    host = Host({}, discover=False)
    host.add_pack(pack_of(query), "db")
    toolset = host.toolset(rename={"db.query": "sql"})
    failed = call(toolset, "sql", {"sql": "DELETE"})
    assert failed.content == "Tool 'sql' failed: read-only"
    assert failed.error is not None
    assert failed.error.kind == "tool_error"
    invalid = call(toolset, "sql", {})
    assert invalid.error is not None
    assert invalid.error.kind == "invalid_arguments"
    assert [d.argument for d in invalid.error.details] == ["sql"]
    assert invalid.content.startswith("Invalid arguments for tool 'sql':")
    assert invalid.tool_name == "sql"


class _Odd(BaseException):
    """A BaseException subclass a hook may raise."""


@pytest.mark.parametrize(
    "kind",
    [SystemExit, GeneratorExit, KeyboardInterrupt, StopIteration, _Odd],
    ids=lambda k: k.__name__,
)
def test_a_hook_raising_any_kind_fails_only_its_call_in_call_many_and_execute(
    pack_of: Callable[..., Any], kind: type[BaseException]
) -> None:
    """Whatever a host hook raises, call_many and execute give that call an error result."""

    @tool
    def ok(n: int) -> int:
        """Echo n."""
        return n

    @tool(tags=["hooked"])
    def guarded() -> int:
        """A tool whose global hook raises."""
        return 1

    host = Host({}, discover=False)
    host.add_pack(pack_of(ok, guarded), "p")

    def explode(tool: Any, arguments: Any, context: Any) -> None:
        raise kind()

    host.hook("before_invoke", tags=["hooked"])(explode)
    toolset = host.toolset()
    results = asyncio.run(toolset.call_many([("guarded", {}), ("ok", {"n": 2})]))
    assert [r.is_error for r in results] == [True, False]
    # Python turns a StopIteration leaving a coroutine into RuntimeError (PEP 479).
    shown = "RuntimeError" if kind is StopIteration else kind.__qualname__
    assert f"failed in a hook: {shown}" in results[0].content
    payload = {
        "role": "assistant",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "guarded", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "ok", "arguments": '{"n": 3}'}},
        ],
    }
    rendered = asyncio.run(toolset.execute(payload, "openai"))
    assert len(rendered) == 2
    assert "failed in a hook" in str(rendered[0])
    assert "3" in str(rendered[1])
