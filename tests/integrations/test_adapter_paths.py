"""Where a call runs and what an adapter skips (issue 24): behaviour, never timing.

- ``Toolset.call_sync`` / ``Tool.invoke_sync`` (and llm's adapter, built on ``call_sync``) run
  a plain sync tool on the calling thread; a call with any async need (timeout, lock, hooks,
  ``authorize`` hooks, approval, a tracer) still runs in a worker thread through the loop.
- Ctrl-C still reaches a caller whose tool ran on its (main) thread; a ``KeyboardInterrupt``
  the tool raised itself is still its failure.
- pydantic-ai's adapter skips what would do nothing (no context for a tool that reads none, one
  parse of clean JSON text), and still asks hooks and tracers added at any time.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from typing import Any

import pytest

from toolpacks import ToolContext, Toolset, tool
from toolpacks.core._hooks import HookSet
from toolpacks.core.call import _run
from toolpacks.core.call._options import CallOptions


def _ident_tool(name: str = "ident", **options: Any) -> Any:
    def ident() -> dict[str, Any]:
        """Say which thread runs this."""
        return {"ident": threading.get_ident(), "name": threading.current_thread().name}

    return tool(ident, name=name, **options)


# -- the calling thread ---------------------------------------------------------------------


def test_call_sync_runs_a_plain_sync_tool_on_the_calling_thread() -> None:
    """From the main thread and from another thread, the tool runs on the caller's thread."""
    ident = _ident_tool()
    toolset = Toolset([ident])
    assert toolset.call_sync("ident").value["ident"] == threading.get_ident()
    assert ident.invoke_sync({}).value["ident"] == threading.get_ident()
    seen: list[tuple[int, int]] = []

    def worker() -> None:
        seen.append((toolset.call_sync("ident").value["ident"], threading.get_ident()))
        seen.append((ident.invoke_sync("{}").value["ident"], threading.get_ident()))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(30)
    assert len(seen) == 2
    assert all(ran == caller for ran, caller in seen)


def test_a_plain_sync_tool_runs_on_the_calling_thread_inside_a_running_loop() -> None:
    """Sync code inside a coroutine blocks its thread anyway: the tool runs right there."""
    toolset = Toolset([_ident_tool()])

    async def main() -> tuple[int, int]:
        return toolset.call_sync("ident").value["ident"], threading.get_ident()

    ran, caller = asyncio.run(main())
    assert ran == caller


def test_a_context_taking_tool_runs_here_with_the_toolset_context() -> None:
    """The general path runs here too; the tool gets the context ``Toolset.call`` makes."""

    @tool
    def who(ctx: ToolContext) -> list[Any]:
        """Name the agent, the call and the thread."""
        return [ctx.agent_id, ctx.call_id, threading.get_ident()]

    assert Toolset([who], agent="bot").call_sync("who", call_id="c1").value == [
        "bot",
        "c1",
        threading.get_ident(),
    ]


def _hooked() -> Any:
    t = _ident_tool("hooked")
    t.hooks.before.append(lambda **_: None)
    return t


NOT_HERE: dict[str, Any] = {
    "timeout": lambda: Toolset([_ident_tool("timed", timeout=30)]),
    "lock": lambda: Toolset([_ident_tool("locked", lock="one")]),
    "tool hook": lambda: Toolset([_hooked()]),
    "host hook": lambda: Toolset(
        [_ident_tool("globally")],
        options=CallOptions(hooks=HookSet(before=(lambda **_: None,))),
    ),
    "authorize hook": lambda: Toolset([_ident_tool("policed")], authorizers=[lambda **_: None]),
    "approval": lambda: Toolset(
        [_ident_tool("approved", require_approval=True)], approval=lambda _: True
    ),
}


@pytest.mark.parametrize("case", sorted(NOT_HERE))
def test_a_call_with_async_needs_runs_in_a_worker_thread(case: str) -> None:
    """Timeout, lock, hooks, authorize hooks and approval keep the loop and a worker thread."""
    toolset = NOT_HERE[case]()
    (name,) = toolset.names()
    result = toolset.call_sync(name)
    assert not result.is_error, result.content
    assert result.value["ident"] != threading.get_ident()
    assert result.value["name"].startswith("toolpacks:")  # a pack pool's, or a timed call's
    assert result.value["name"] != "toolpacks:sync-loop"


def test_a_traced_toolset_keeps_the_loop() -> None:
    """A tracer may await: a traced call runs through the loop, and is traced."""
    toolset = Toolset([_ident_tool()])
    traced: list[str] = []

    async def tracer(ts: Any, name: str, context: Any, run: Any) -> Any:
        traced.append(name)
        return await run()

    toolset.tracer = tracer
    assert toolset.call_sync("ident").value["ident"] != threading.get_ident()
    assert traced == ["ident"]


def test_the_calling_thread_runs_only_its_own_call() -> None:
    """A call the tool itself makes through a loop uses the pack pool as usual."""
    inner = _ident_tool("inner")

    @tool
    def outer() -> list[int]:
        """Call ``inner`` through a loop of its own."""
        nested = asyncio.run(inner.invoke({}))
        return [threading.get_ident(), nested.value["ident"]]

    ran, nested = outer.invoke_sync().value
    assert ran == threading.get_ident()
    assert nested != ran
    assert _run.here.active is False


def test_llm_adapter_runs_a_sync_tool_on_the_calling_thread() -> None:
    """The llm adapter (llm calls tools from sync code): no thread hop for a sync tool."""
    import json

    from toolpacks.integrations.llm import as_tools

    (made,) = as_tools(Toolset([_ident_tool()]))
    assert json.loads(made.implementation())["ident"] == threading.get_ident()


# -- Ctrl-C ----------------------------------------------------------------------------------


main_only = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(), reason="needs the main thread"
)


@main_only
def test_ctrl_c_inside_a_tool_run_on_the_main_thread_reaches_the_caller() -> None:
    """A real SIGINT while the tool runs here is raised to the caller, not made a result."""

    @tool
    def interrupted() -> str:
        """Receive Ctrl-C while working."""
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
        time.sleep(30)  # the handler raises here, at once
        return "never"

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            Toolset([interrupted]).call_sync("interrupted")
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


@main_only
def test_a_keyboard_interrupt_the_tool_raises_itself_is_its_failure() -> None:
    """No signal arrived: the tool's own KeyboardInterrupt is an error result, as on the loop."""

    @tool
    def quits() -> str:
        """Raise KeyboardInterrupt without a signal."""
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        result = Toolset([quits]).call_sync("quits")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert result.error is not None
    assert "KeyboardInterrupt" in result.content


# -- pydantic-ai ------------------------------------------------------------------------------


def _pydantic(toolset: Toolset) -> tuple[Any, Any]:
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    from toolpacks.integrations.pydantic_ai import as_toolset

    adapter = as_toolset(toolset)
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage(), tool_call_id="pc1")
    return adapter, ctx


async def _call(adapter: Any, ctx: Any, name: str, text: str) -> Any:
    listed = (await adapter.get_tools(ctx))[name]
    return await adapter.call_tool(name, listed.args_validator.validate_json(text), ctx, listed)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_pydantic_ai_plain_call_makes_no_context_and_parses_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A plain tool from clean JSON text: no ToolContext made, the text parsed once."""
    from toolpacks.integrations import pydantic_ai

    toolset = Toolset([add])
    adapter, ctx = _pydantic(toolset)
    made: list[Any] = []
    parsed: list[Any] = []
    real_context, real_parse = Toolset._context, pydantic_ai._parse
    monkeypatch.setattr(Toolset, "_context", lambda *a: made.append(a) or real_context(*a))
    monkeypatch.setattr(pydantic_ai, "_parse", lambda *a: parsed.append(a) or real_parse(*a))
    for _ in range(3):
        assert asyncio.run(_call(adapter, ctx, "add", '{"a": 1, "b": 2}')) == 3
    assert (made, parsed) == ([], [])


def test_pydantic_ai_plain_route_keeps_the_gate_and_the_context() -> None:
    """Duplicate keys are refused; a context-taking tool gets the agent and pydantic's id."""
    from pydantic_ai import ModelRetry

    @tool
    def who(ctx: ToolContext) -> list[Any]:
        """Name the agent and the call."""
        return [ctx.agent_id, ctx.call_id]

    adapter, ctx = _pydantic(Toolset([add, who], agent="bot"))
    with pytest.raises(ModelRetry, match=r"(?i)duplicate"):
        asyncio.run(_call(adapter, ctx, "add", '{"a": 1, "a": 2, "b": 3}'))
    assert asyncio.run(_call(adapter, ctx, "who", "{}")) == ["bot", "pc1"]


def test_pydantic_ai_asks_hooks_and_tracers_added_later() -> None:
    """The plain route is decided per call: a later authorize hook or tracer is not skipped."""
    from pydantic_ai.exceptions import ToolFailed

    toolset = Toolset([add])
    adapter, ctx = _pydantic(toolset)
    assert asyncio.run(_call(adapter, ctx, "add", '{"a": 1, "b": 2}')) == 3
    traced: list[str] = []

    async def tracer(ts: Any, name: str, context: Any, run: Any) -> Any:
        traced.append(context.call_id)
        return await run()

    toolset.tracer = tracer
    assert asyncio.run(_call(adapter, ctx, "add", '{"a": 1, "b": 2}')) == 3
    assert traced == ["pc1"]
    toolset.authorizers = (lambda **_: "deny",)
    with pytest.raises(ToolFailed, match="not permitted"):
        asyncio.run(_call(adapter, ctx, "add", '{"a": 1, "b": 2}'))


def test_pydantic_ai_plain_failure_names_the_exposed_tool() -> None:
    """An error on the plain route names the tool as the model called it, as Toolset.call."""
    from pydantic_ai.exceptions import ToolFailed

    from toolpacks.host._toolset import ToolEntry

    @tool
    def boom() -> str:
        """Fail."""
        raise ValueError("nope")

    entry = ToolEntry("pack_boom", "pack.boom", "pack", boom)
    adapter, ctx = _pydantic(Toolset([entry]))
    with pytest.raises(ToolFailed, match="'pack_boom'"):
        asyncio.run(_call(adapter, ctx, "pack_boom", "{}"))
