"""Tools that misbehave, in-process: every exception is a result, and no pack starves another.

Every exception kind ends as an error result on every road (``Tool.invoke``, ``Toolset.call``,
``Toolset.execute``, ``Tool.stream``), and a pack whose sync calls block cannot take the
threads another pack needs.

Each call is bounded by ``CALL_CEILING`` so that a call that never answers fails the test
instead of hanging it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from toolpacks import CallOptions, Host, Tool, ToolError, Toolset, tool

CALL_CEILING = 10.0
"""Seconds a single call may take before the test fails (a ceiling, never a measure)."""


class OwnBase(BaseException):
    """A ``BaseException`` subclass of a tool's own."""


class UnprintableError(Exception):
    """An exception whose text cannot be made."""

    def __str__(self) -> str:
        raise RuntimeError("no text for you")


class UnprintableToolError(ToolError):
    """A ``ToolError`` (whose message is normally sent) whose text cannot be made."""

    def __str__(self) -> str:
        raise RuntimeError("no text for you")


KINDS: list[type[BaseException]] = [
    StopIteration,
    StopAsyncIteration,
    GeneratorExit,
    KeyboardInterrupt,
    SystemExit,
    OwnBase,
    UnprintableError,
    UnprintableToolError,
    ValueError,
]
SHAPES = ["sync", "sync_timeout", "async", "generator", "async_generator"]


def raising_tool(shape: str, kind: type[BaseException], name: str = "bad") -> Tool:
    """A tool of ``shape`` that raises ``kind`` when called (generators after one item)."""
    if shape == "sync":

        def bad() -> int:
            """Raise."""
            raise kind()

        return tool(name=name)(bad)
    if shape == "sync_timeout":

        def bad_timed() -> int:
            """Raise (a sync tool with a timeout runs in its own thread)."""
            raise kind()

        return tool(name=name, timeout=30)(bad_timed)
    if shape == "async":

        async def bad_async() -> int:
            """Raise."""
            raise kind()

        return tool(name=name)(bad_async)
    if shape == "generator":

        def bad_gen() -> Iterator[int]:
            """Yield once, then raise."""
            yield 1
            raise kind()

        return tool(name=name)(bad_gen)

    async def bad_agen() -> Any:
        """Yield once, then raise."""
        yield 1
        raise kind()

    return tool(name=name)(bad_agen)


@tool
def fine() -> str:
    """Answer."""
    return "fine"


def bounded(coro: Any) -> Any:
    """Run ``coro`` in a fresh loop; the test fails when it takes over ``CALL_CEILING``."""

    async def main() -> Any:
        return await asyncio.wait_for(coro, CALL_CEILING)

    return asyncio.run(main())


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
@pytest.mark.parametrize("exposed", [False, True], ids=["masked", "exposed"])
def test_every_exception_kind_is_an_error_result_on_every_road(
    kind: type[BaseException], shape: str, exposed: bool
) -> None:
    bad = raising_tool(shape, kind)
    options = CallOptions(expose_errors=exposed)

    async def main() -> None:
        result = await asyncio.wait_for(bad.invoke({}, options=options), CALL_CEILING)
        assert result.is_error
        assert result.error is not None
        assert result.error.kind == "tool_error"
        assert "Tool 'bad' failed" in result.content

        toolset = Toolset([bad, fine])
        result = await asyncio.wait_for(toolset.call("bad", "{}"), CALL_CEILING)
        assert result.is_error
        assert "Tool 'bad' failed" in result.content

        message = {
            "role": "assistant",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "bad", "arguments": "{}"}},
                {"id": "c2", "type": "function", "function": {"name": "fine", "arguments": "{}"}},
            ],
        }
        replies = await asyncio.wait_for(toolset.execute(message, "openai"), CALL_CEILING)
        assert [r["tool_call_id"] for r in replies] == ["c1", "c2"]
        assert "Tool 'bad' failed" in replies[0]["content"]
        assert replies[1]["content"] == "fine"

        # The same toolset, in the same loop, still answers.
        after = await asyncio.wait_for(toolset.call("fine", {}), CALL_CEILING)
        assert not after.is_error
        assert after.value == "fine"

    bounded(main())


@pytest.mark.parametrize("shape", ["generator", "async_generator"])
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_a_stream_that_raises_ends_with_an_ordinary_exception(
    kind: type[BaseException], shape: str
) -> None:
    """A stream ends with an ``Exception``, never a bare ``BaseException`` nor a hang.

    The consumer (an agent loop) must be able to catch it with ``except Exception``.
    """
    bad = raising_tool(shape, kind)

    async def consume() -> list[Any]:
        items = []
        async for item in bad.stream({}):
            items.append(item)
        return items

    async def main() -> BaseException | None:
        try:
            await asyncio.wait_for(consume(), CALL_CEILING)
        except Exception as exc:
            return exc
        return None

    assert isinstance(bounded(main()), Exception)


def test_a_sync_stopiteration_is_reported_not_lost() -> None:
    """A sync tool whose ``next()`` finds no match gets an error result, not silence."""

    @tool
    def first_match(word: str) -> str:
        """The first word starting with ``word``."""
        return next(w for w in ["apple", "pear"] if w.startswith(word))

    result = bounded(first_match.invoke({"word": "z"}))
    assert result.is_error
    assert "Tool 'first_match' failed" in result.content
    assert bounded(first_match.invoke({"word": "p"})).value == "pear"


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_a_generator_closed_after_it_raised_leaves_no_stray_task(
    kind: type[BaseException], caplog: pytest.LogCaptureFixture
) -> None:
    """A sync generator that raises is finished cleanly: asyncio logs no stray task."""
    bad = raising_tool("generator", kind)

    async def main() -> None:
        result = await asyncio.wait_for(bad.invoke({}), CALL_CEILING)
        assert result.is_error
        for _ in range(3):  # let any stray task finish and report itself
            await asyncio.sleep(0)

    with caplog.at_level("ERROR", logger="asyncio"):
        bounded(main())
    assert not [r for r in caplog.records if r.name == "asyncio"]


# -- a blocked pack does not starve the others -----------------------------------------------


class Gate:
    """Sync tools of pack ``a`` block on one event until the test releases them."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Semaphore(0)


@pytest.fixture
def gate() -> Iterator[Gate]:
    g = Gate()
    yield g
    g.release.set()  # whatever happened, nothing stays blocked


async def started(gate: Gate) -> None:
    """Wait (on the loop, taking no thread) until one blocked call has started."""
    deadline = asyncio.get_running_loop().time() + CALL_CEILING
    while not gate.entered.acquire(blocking=False):
        assert asyncio.get_running_loop().time() < deadline, "no blocked call started"
        await asyncio.sleep(0.01)


BLOCKED = 40
"""Blocked calls of pack ``a``: more than any default thread pool holds (32 at most)."""


def blocking_host(gate: Gate, pack_of: Callable[..., Any]) -> Host:
    @tool
    def wait() -> str:
        """Block until released."""
        gate.entered.release()
        gate.release.wait(60)
        return "released"

    @tool
    def answer() -> str:
        """Answer at once."""
        return "answer"

    host = Host({}, discover=False)
    host.add_pack(pack_of(wait), name="a")
    host.add_pack(pack_of(answer), name="b")
    return host


def test_a_pack_whose_sync_calls_block_does_not_starve_another_pack(
    gate: Gate, pack_of: Callable[..., Any]
) -> None:
    host = blocking_host(gate, pack_of)
    toolset = host.toolset()

    async def main() -> None:
        blocked = [asyncio.ensure_future(toolset.call("wait", {})) for _ in range(BLOCKED)]
        try:
            # Pack a holds every thread its share allows (at least one call has started).
            await started(gate)
            result = await asyncio.wait_for(toolset.call("answer", {}), CALL_CEILING)
            assert result.value == "answer"
            # Tools with no pack share their own group, also free.
            plain = await asyncio.wait_for(fine.invoke({}), CALL_CEILING)
            assert plain.value == "fine"
        finally:
            gate.release.set()
        done = await asyncio.wait_for(asyncio.gather(*blocked), 60)
        assert all(r.value == "released" for r in done)

    asyncio.run(main())


def test_a_blocked_sync_generator_pack_does_not_starve_another_pack(
    gate: Gate, pack_of: Callable[..., Any]
) -> None:
    @tool
    def drip() -> Iterator[str]:
        """Block before the first item."""
        gate.entered.release()
        gate.release.wait(60)
        yield "released"

    @tool
    def answer() -> str:
        """Answer at once."""
        return "answer"

    host = Host({}, discover=False)
    host.add_pack(pack_of(drip), name="a")
    host.add_pack(pack_of(answer), name="b")
    toolset = host.toolset()

    async def main() -> None:
        blocked = [asyncio.ensure_future(toolset.call("drip", {})) for _ in range(BLOCKED)]
        try:
            await started(gate)
            result = await asyncio.wait_for(toolset.call("answer", {}), CALL_CEILING)
            assert result.value == "answer"
        finally:
            gate.release.set()
        done = await asyncio.wait_for(asyncio.gather(*blocked), 60)
        assert all(r.value == "released" for r in done)

    asyncio.run(main())


def test_a_blocked_sync_generator_pack_does_not_starve_another_packs_generators(
    gate: Gate, pack_of: Callable[..., Any]
) -> None:
    """Generators run on their pack's own threads too: pack b's generator still streams."""

    @tool
    def drip() -> Iterator[str]:
        """Block before the first item."""
        gate.entered.release()
        gate.release.wait(60)
        yield "released"

    @tool
    def count() -> Iterator[int]:
        """Yield at once."""
        yield from range(3)

    host = Host({}, discover=False)
    host.add_pack(pack_of(drip), name="a")
    host.add_pack(pack_of(count), name="b")
    toolset = host.toolset()

    async def main() -> None:
        blocked = [asyncio.ensure_future(toolset.call("drip", {})) for _ in range(BLOCKED)]
        try:
            await started(gate)
            result = await asyncio.wait_for(toolset.call("count", {}), CALL_CEILING)
            assert not result.is_error, result.content
            assert result.value == 2  # a generator call answers with its last item
        finally:
            gate.release.set()
        done = await asyncio.wait_for(asyncio.gather(*blocked), 60)
        assert all(r.value == "released" for r in done)

    asyncio.run(main())
