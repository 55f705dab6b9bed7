"""Generator tools: streaming items, the last item as the value, and their hooks."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from toolpacks import InvalidArgumentsError, Tool, WrongRunMethodError, tool


@pytest.fixture
def countdown() -> Tool:
    """An async generator tool yielding n, n-1, ..., 1."""

    @tool
    async def countdown(n: int) -> AsyncIterator[int]:
        """Count down from n."""
        for i in range(n, 0, -1):
            yield i

    return countdown


def _collect(t: Tool, arguments: Any) -> Any:
    async def go() -> list[Any]:
        return [item async for item in t.stream(arguments)]

    return go()


def test_stream_yields_every_item(run: Any, countdown: Tool) -> None:
    """``stream()`` yields each item of an async generator in order."""
    assert run(_collect(countdown, {"n": 3})) == [3, 2, 1]


def test_stream_of_a_sync_generator(run: Any) -> None:
    """A sync generator streams too."""

    @tool
    def letters(word: str) -> Iterator[str]:
        """Spell."""
        yield from word

    assert run(_collect(letters, {"word": "abc"})) == ["a", "b", "c"]


def test_items_arrive_as_they_are_produced(run: Any) -> None:
    """The consumer gets an item before the generator produces the next one."""
    log: list[str] = []

    @tool
    async def produce() -> AsyncIterator[int]:
        """Produce."""
        for i in range(3):
            log.append(f"produce {i}")
            yield i

    async def consume() -> None:
        async for item in produce.stream({}):
            log.append(f"consume {item}")

    run(consume())
    assert log == ["produce 0", "consume 0", "produce 1", "consume 1", "produce 2", "consume 2"]


def test_invoke_returns_the_last_item(run: Any, countdown: Tool) -> None:
    """``invoke`` runs the generator to the end; the value is the last item."""
    result = run(countdown.invoke({"n": 3}))
    assert (result.value, result.content, result.is_error) == (1, "1", False)


def test_invoke_of_an_empty_generator_gives_none(run: Any, countdown: Tool) -> None:
    """A generator that yields nothing gives a None value, not an output error."""
    result = run(countdown.invoke({"n": 0}))
    assert (result.value, result.is_error) == (None, False)


def test_wrong_item_type_is_an_output_error(run: Any) -> None:
    """An item breaking the declared item type gives ``output_invalid``."""

    @tool
    async def numbers() -> AsyncIterator[int]:
        """Numbers."""
        yield "one"  # type: ignore[misc]

    error = run(numbers.invoke({})).error
    assert error is not None
    assert error.kind == "output_invalid"


def test_after_invoke_gets_the_list_of_items(run: Any, countdown: Tool) -> None:
    """For a generator, after_invoke receives every item, from invoke and from stream."""
    seen: list[Any] = []
    countdown.after_invoke(seen.append)
    run(countdown.invoke({"n": 2}))
    run(_collect(countdown, {"n": 3}))
    assert seen == [[2, 1], [3, 2, 1]]


def test_after_invoke_gets_a_partial_list_when_the_consumer_stops(
    run: Any, countdown: Tool
) -> None:
    """Stopping early (closing the stream) fires after_invoke with the items so far."""
    seen: list[Any] = []
    countdown.after_invoke(seen.append)

    async def consume() -> None:
        async with contextlib.aclosing(countdown.stream({"n": 5})) as items:
            async for item in items:
                if item == 4:
                    break

    run(consume())
    assert seen == [[5, 4]]


def test_stopping_early_closes_the_generator(run: Any) -> None:
    """When the consumer stops, the tool's generator is closed (its finally runs)."""
    events: list[str] = []

    @tool
    async def produce() -> AsyncIterator[int]:
        """Produce."""
        try:
            for i in range(10):
                yield i
        finally:
            events.append("closed")

    async def consume() -> None:
        async with contextlib.aclosing(produce.stream({})) as items:
            async for _ in items:
                break
        events.append("after the stream")

    run(consume())
    assert events == ["closed", "after the stream"]


def test_on_yield_fires_per_item(run: Any, countdown: Tool) -> None:
    """``@t.on_yield`` is called once per item, with that item."""
    seen: list[int] = []
    countdown.on_yield(seen.append)
    run(countdown.invoke({"n": 3}))
    assert seen == [3, 2, 1]


def test_before_invoke_gets_the_kwargs_of_a_stream(run: Any, countdown: Tool) -> None:
    """before_invoke fires once per stream with its kwargs."""
    seen: list[dict[str, Any]] = []
    countdown.before_invoke(lambda **kw: seen.append(kw))
    run(_collect(countdown, {"n": "2"}))
    assert seen == [{"n": 2}]


def test_stream_of_a_non_generator_raises_wrong_run_method(run: Any, add: Tool) -> None:
    """``stream()`` of an ordinary tool raises WrongRunMethodError (a TypeError) at once."""
    with pytest.raises(WrongRunMethodError, match=r"not a generator; use `await tool.invoke"):
        add.stream({"a": 1})
    assert issubclass(WrongRunMethodError, TypeError)


def test_stream_with_invalid_arguments_raises(run: Any, countdown: Tool) -> None:
    """Invalid arguments make ``stream()`` raise InvalidArgumentsError carrying the result."""
    with pytest.raises(InvalidArgumentsError) as caught:
        run(_collect(countdown, {"n": "many"}))
    result = caught.value.result
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert str(caught.value) == result.content


def test_failing_generator_gives_an_error_result_and_fires_on_error(run: Any) -> None:
    """A generator that raises: invoke returns an error; on_error fires, after does not."""
    errors: list[BaseException] = []
    afters: list[Any] = []

    @tool
    async def breaks() -> AsyncIterator[int]:
        """Breaks."""
        yield 1
        raise ValueError("broken")

    breaks.on_error(lambda exc: errors.append(exc))
    breaks.after_invoke(afters.append)
    result = run(breaks.invoke({}))
    assert result.error is not None
    assert (result.error.kind, result.error.exception_type) == ("tool_error", "ValueError")
    assert [type(e) for e in errors] == [ValueError]
    assert afters == []


def test_failing_generator_raises_from_the_stream(run: Any) -> None:
    """When streaming, the generator's exception reaches the consumer after on_error."""
    errors: list[BaseException] = []

    @tool
    def breaks() -> Iterator[int]:
        """Breaks."""
        yield 1
        raise ValueError("broken")

    breaks.on_error(lambda exc: errors.append(exc))
    with pytest.raises(ValueError, match="broken"):
        run(_collect(breaks, {}))
    assert [str(e) for e in errors] == ["broken"]


def test_exception_in_on_yield_propagates_from_invoke(run: Any, countdown: Tool) -> None:
    """An on_yield hook that raises is not turned into an error result."""
    errors: list[BaseException] = []

    @countdown.on_yield
    def bad(item: int) -> None:
        raise LookupError("hook failed")

    countdown.on_error(lambda exc: errors.append(exc))
    with pytest.raises(LookupError, match="hook failed"):
        run(countdown.invoke({"n": 2}))
    assert errors == []


def test_exception_in_on_yield_propagates_from_stream(run: Any, countdown: Tool) -> None:
    """From a stream too, an on_yield hook exception reaches the consumer unchanged."""

    @countdown.on_yield
    def bad(item: int) -> None:
        raise LookupError("hook failed")

    with pytest.raises(LookupError, match="hook failed"):
        run(_collect(countdown, {"n": 2}))


def test_stream_records_metadata_times(run: Any, countdown: Tool) -> None:
    """Streaming counts as a run for the metadata times."""
    run(_collect(countdown, {"n": 1}))
    assert countdown.metadata.start_time is not None
    assert countdown.metadata.end_time is not None


def test_sync_generator_invoke_returns_its_last_item(run: Any) -> None:
    """``invoke`` of a sync generator gives its last item."""

    @tool
    def squares(n: int) -> Iterator[int]:
        """Squares."""
        for i in range(n):
            yield i * i

    assert run(squares.invoke({"n": 4})).value == 9


def test_consumer_can_await_between_items(run: Any, countdown: Tool) -> None:
    """Awaiting other work between items does not disturb the stream."""

    async def consume() -> list[int]:
        got = []
        async for item in countdown.stream({"n": 3}):
            await asyncio.sleep(0)
            got.append(item)
        return got

    assert run(consume()) == [3, 2, 1]
