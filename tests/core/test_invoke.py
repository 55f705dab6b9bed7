"""``Tool.invoke``: running tools safely, context injection, fixed kwargs, errors, metadata."""

from __future__ import annotations

import asyncio
import logging
import threading
from datetime import datetime
from typing import Any

import pytest

from toolpacks import CallOptions, Tool, ToolContext, ToolError, ToolResult, tool


def test_invoke_with_a_dict_returns_a_result(run: Any, add: Tool) -> None:
    """A dict of arguments validates, runs the tool and gives its value and text."""
    result = run(add.invoke({"a": 1, "b": 5}))
    assert isinstance(result, ToolResult)
    assert (result.value, result.content, result.is_error, result.error) == (6, "6", False, None)
    assert result.tool_name == "add"


def test_invoke_with_json_text_or_bytes(run: Any, add: Tool) -> None:
    """Arguments may be a JSON object text, as str or bytes; defaults fill the rest."""
    assert run(add.invoke('{"a": 40}')).value == 42
    assert run(add.invoke(b'{"a": 1, "b": 1}')).value == 2


def test_invoke_without_arguments(run: Any) -> None:
    """``invoke()`` with no arguments calls a tool that takes none."""

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    assert run(ping.invoke()).value == "pong"
    assert run(ping.invoke({})).value == "pong"


def test_invoke_accepts_any_mapping(run: Any, add: Tool) -> None:
    """A read-only mapping works like a dict."""
    from types import MappingProxyType

    assert run(add.invoke(MappingProxyType({"a": 2}))).value == 4


def test_sync_tool_runs_in_a_worker_thread(run: Any) -> None:
    """A sync tool never runs on the event loop's thread."""

    @tool
    def where() -> str:
        """Which thread runs me."""
        return threading.current_thread().name

    main = threading.current_thread().name
    assert run(where.invoke({})).value != main


def test_async_tool_is_awaited_on_the_loop(run: Any) -> None:
    """A coroutine tool is awaited in the caller's event loop (no thread hop)."""

    @tool
    async def where() -> str:
        """Which thread runs me."""
        await asyncio.sleep(0)
        return threading.current_thread().name

    assert run(where.invoke({})).value == threading.current_thread().name


def test_failing_tool_gives_an_error_result_with_the_type_only(
    run: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """By default a failure shows the exception type, not its message (which is logged)."""

    @tool
    def fail(x: int) -> int:
        """Fail."""
        raise RuntimeError("database password is hunter2")

    with caplog.at_level(logging.ERROR, logger="toolpacks"):
        result = run(fail.invoke({"x": 1}))
    assert result.is_error
    assert result.value is None
    assert result.content == "Tool 'fail' failed with RuntimeError."
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert result.error.exception_type == "RuntimeError"
    assert "hunter2" not in result.content
    assert "raised RuntimeError" in caplog.text


def test_expose_errors_shows_the_message(run: Any, options: CallOptions) -> None:
    """``CallOptions(expose_errors=True)`` puts type and message in the result."""

    @tool
    def fail(x: int) -> int:
        """Fail."""
        raise ValueError("x must be even")

    result = run(fail.invoke({"x": 1}, options=options))
    assert result.content == "Tool 'fail' failed: ValueError: x must be even"


def test_tool_error_message_always_reaches_the_model(run: Any) -> None:
    """A ``ToolError`` raised on purpose passes its message even when details are masked."""

    @tool
    def fail(x: int) -> int:
        """Fail."""
        raise ToolError("no such customer; list customers first")

    result = run(fail.invoke({"x": 1}))
    assert result.content == "Tool 'fail' failed: no such customer; list customers first"
    assert result.error is not None
    assert result.error.exception_type == "ToolError"


def test_redact_scrubs_secrets_from_error_messages(run: Any) -> None:
    """Secret values listed in ``CallOptions.redact`` never appear in an error message."""

    @tool
    def fail() -> int:
        """Fail."""
        raise ValueError("token sk-123 rejected")

    result = run(fail.invoke({}, options=CallOptions(expose_errors=True, redact=("sk-123",))))
    assert result.content == "Tool 'fail' failed: ValueError: token ********** rejected"


def test_failing_async_tool_gives_an_error_result(run: Any) -> None:
    """A coroutine that raises gives an error result too."""

    @tool
    async def fail() -> int:
        """Fail."""
        raise KeyError("k")

    result = run(fail.invoke({}))
    assert result.error is not None
    assert (result.error.kind, result.error.exception_type) == ("tool_error", "KeyError")


def test_output_type_violation_is_an_error_result(run: Any) -> None:
    """A return value that breaks the declared return type gives kind ``output_invalid``."""

    @tool
    def count() -> int:
        """Count."""
        return "three"  # type: ignore[return-value]

    @tool
    def names() -> list[str]:
        """Names."""
        return [1, 2]  # type: ignore[list-item]

    result = run(count.invoke({}))
    assert result.error is not None
    assert result.error.kind == "output_invalid"
    assert result.content == (
        "Tool 'count' returned a value that does not match its declared output type: "
        "expected int, got str"
    )
    error = run(names.invoke({})).error
    assert error is not None
    assert error.kind == "output_invalid"


def test_output_check_can_be_switched_off(run: Any) -> None:
    """``validate_output=False`` returns whatever the function returned."""

    @tool(validate_output=False)
    def count() -> int:
        """Count."""
        return "three"  # type: ignore[return-value]

    assert run(count.invoke({})).value == "three"


def test_int_is_a_valid_float_output_but_bool_is_not_an_int(run: Any) -> None:
    """``-> float`` accepts an int; ``-> int`` refuses a bool."""

    @tool
    def ratio() -> float:
        """Ratio."""
        return 1

    @tool
    def count() -> int:
        """Count."""
        return True

    assert run(ratio.invoke({})).value == 1
    error = run(count.invoke({})).error
    assert error is not None
    assert error.kind == "output_invalid"


# -- context -----------------------------------------------------------------------------------


def test_context_is_injected_under_any_name(run: Any, context: ToolContext) -> None:
    """A parameter annotated ToolContext receives the call's context, whatever its name."""
    seen: list[ToolContext] = []

    @tool
    def who(question: str, whatever_name: ToolContext) -> str:
        """Who is asking."""
        seen.append(whatever_name)
        return question

    assert "whatever_name" not in who.input_schema["properties"]
    assert run(who.invoke({"question": "q"}, context)).value == "q"
    ctx = seen[0]
    assert ctx.call_id == "call-42"
    assert ctx.execution_id == "call-42"
    assert ctx.agent_id == "researcher"
    assert ctx.caller_identity == "user-7"
    assert ctx.metadata == {"tenant": "acme"}
    assert ctx.invocation_state == {"turn": 1}
    assert ctx.tool_name == "who"
    assert ctx.cancelled is False


def test_context_is_created_when_none_is_given(run: Any) -> None:
    """Without a context a fresh one with a generated call id is injected."""

    @tool
    def who(ctx: ToolContext) -> str:
        """Who is asking."""
        return f"{ctx.call_id}|{ctx.agent_id}|{ctx.caller_identity}|{dict(ctx.metadata)}"

    result = run(who.invoke({}))
    call_id, rest = result.value.split("|", 1)
    assert call_id.startswith("call_")
    assert call_id == result.call_id
    assert rest == "None|None|{}"


def test_invocation_state_is_shared_with_the_application(run: Any, context: ToolContext) -> None:
    """The tool sees and may update the application's invocation state dict."""

    @tool
    def bump(ctx: ToolContext) -> int:
        """Bump the turn."""
        ctx.invocation_state["turn"] += 1
        return int(ctx.invocation_state["turn"])

    assert run(bump.invoke({}, context)).value == 2
    assert context.invocation_state == {"turn": 2}


def test_result_call_id_comes_from_the_context(run: Any, add: Tool, context: ToolContext) -> None:
    """The result carries the context's call id; otherwise a generated one."""
    assert run(add.invoke({"a": 1}, context)).call_id == "call-42"
    generated = run(add.invoke({"a": 1})).call_id
    assert generated.startswith("call_")
    assert run(add.invoke({"a": 1})).call_id != generated


def test_application_context_is_not_changed_by_a_call(run: Any) -> None:
    """The context the application passes is left as it was (the tool gets a copy)."""
    ctx = ToolContext(agent_id="a")

    @tool
    def who(c: ToolContext) -> str:
        """Who."""
        return c.call_id

    run(who.invoke({}, ctx))
    assert (ctx.call_id, ctx.tool_name) == ("", None)


# -- fixed keyword arguments -------------------------------------------------------------------


def test_fixed_kwargs_are_merged_into_every_call(run: Any) -> None:
    """A fixed kwarg reaches the function without the caller sending it."""

    @tool(base="https://example.test")
    def fetch(path: str, base: str) -> str:
        """Fetch."""
        return base + path

    assert run(fetch.invoke({"path": "/x"})).value == "https://example.test/x"


def test_callable_fixed_kwarg_is_evaluated_at_every_call(run: Any) -> None:
    """A lambda fixed kwarg is called per invocation and the function gets its value."""
    counter = iter(range(100))

    @tool(n=lambda: next(counter))
    def number(n: int) -> int:
        """Number."""
        return n

    assert [run(number.invoke({})).value for _ in range(3)] == [0, 1, 2]


def test_call_time_argument_overrides_a_fixed_kwarg_with_a_warning(
    run: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A call-time argument named like a fixed kwarg wins, and a warning is logged."""

    @tool(limit=10)
    def page(q: str, limit: int) -> str:
        """Page."""
        return f"{q}:{limit}"

    with caplog.at_level(logging.WARNING, logger="toolpacks"):
        result = run(page.invoke({"q": "x", "limit": "3"}))
    assert result.value == "x:3"
    assert [r.getMessage() for r in caplog.records] == [
        "tool 'page': call-time argument(s) limit override fixed keyword arguments"
    ]


def test_overriding_value_is_validated_against_the_parameter_type(run: Any) -> None:
    """An override that does not fit the parameter's type is an invalid-arguments result."""

    @tool(limit=10)
    def page(q: str, limit: int) -> str:
        """Page."""
        return f"{q}:{limit}"

    result = run(page.invoke({"q": "x", "limit": "many"}))
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert result.error.details[0].argument == "limit"


# -- methods -----------------------------------------------------------------------------------


def test_invoke_on_an_unbound_method_gives_an_error_result(run: Any) -> None:
    """A method tool invoked through its class (no instance) gives an error, not a crash."""

    class Service:
        @tool
        def lookup(self, key: str) -> str:
            """Look up."""
            return key

    result = run(Service.lookup.invoke({"key": "k"}))
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert result.content == "Tool 'lookup' is a method; use it through an instance of its class."


# -- metadata ----------------------------------------------------------------------------------


def test_metadata_times_are_none_before_the_first_run(add: Tool) -> None:
    """``start_time``/``end_time`` are None until the tool runs; dict() shows None."""
    assert add.metadata.start_time is None
    assert add.metadata.end_time is None
    assert add.metadata.dict()["start_time"] is None
    assert add.metadata.dict()["end_time"] is None


def test_metadata_times_are_set_by_a_run(run: Any, add: Tool) -> None:
    """A run sets start and end (start <= end) on the same metadata instance."""
    metadata = add.metadata
    run(add.invoke({"a": 1}))
    assert add.metadata is metadata
    assert metadata.start_time is not None
    assert metadata.end_time is not None
    assert metadata.start_time <= metadata.end_time


def test_metadata_end_time_is_set_when_the_tool_fails(run: Any) -> None:
    """The end time is recorded in a ``finally``: failures count as runs."""

    @tool
    def fail() -> int:
        """Fail."""
        raise ValueError

    run(fail.invoke({}))
    assert fail.metadata.end_time is not None


def test_metadata_dict_has_iso_times_and_schemas(run: Any, add: Tool) -> None:
    """``metadata.dict()`` gives name, description, ISO-8601 times and both schemas."""
    run(add.invoke({"a": 1}))
    data = add.metadata.dict()
    assert set(data) == {
        "name",
        "description",
        "start_time",
        "end_time",
        "input_schema",
        "output_schema",
    }
    assert (data["name"], data["description"]) == ("add", "Add two integers.")
    assert datetime.fromisoformat(data["start_time"]) == add.metadata.start_time
    assert data["end_time"].endswith("+00:00")
    assert data["input_schema"] == add.input_schema
    assert data["output_schema"] == {"type": "integer"}


def test_invalid_arguments_do_not_count_as_a_run(run: Any, add: Tool) -> None:
    """A call refused by validation does not touch the run times."""
    run(add.invoke({"a": "x"}))
    assert add.metadata.start_time is None
