"""Per-tool hooks (before, after, on_error) and the global hook set a host passes."""

from __future__ import annotations

from typing import Any

import pytest

from toolpacks import CallOptions, Tool, ToolContext, tool
from toolpacks.core._hooks import GlobalHook, HookSet


def test_before_invoke_receives_the_call_kwargs(run: Any, add: Tool) -> None:
    """``@t.before_invoke`` hooks get the validated keyword arguments, defaults excluded."""
    seen: list[dict[str, Any]] = []

    @add.before_invoke
    def record(**kwargs: Any) -> None:
        seen.append(kwargs)

    run(add.invoke({"a": "1"}))
    run(add.invoke({"a": 2, "b": 3}))
    assert seen == [{"a": 1}, {"a": 2, "b": 3}]


def test_before_invoke_does_not_see_the_context(run: Any) -> None:
    """The injected context is not among the kwargs a before hook gets."""
    seen: list[dict[str, Any]] = []

    @tool
    def f(x: int, ctx: ToolContext) -> int:
        """F."""
        return x

    f.before_invoke(lambda **kw: seen.append(kw))
    run(f.invoke({"x": 1}))
    assert seen == [{"x": 1}]


def test_after_invoke_receives_the_return_value(run: Any, add: Tool) -> None:
    """``@t.after_invoke`` hooks get the raw return value."""
    seen: list[Any] = []
    add.after_invoke(seen.append)
    run(add.invoke({"a": 1}))
    assert seen == [3]


def test_hooks_fire_in_order_around_the_run(run: Any) -> None:
    """before, then the function, then after."""
    events: list[str] = []

    @tool
    def f() -> str:
        """F."""
        events.append("run")
        return "v"

    f.before_invoke(lambda **kw: events.append("before"))
    f.after_invoke(lambda value: events.append(f"after:{value}"))
    f.on_error(lambda exc: events.append("error"))
    run(f.invoke({}))
    assert events == ["before", "run", "after:v"]


def test_on_error_receives_exc_and_after_does_not_fire(run: Any) -> None:
    """When the tool raises, on_error gets ``exc=`` (the very exception); after is skipped."""
    boom = ValueError("boom")
    errors: list[BaseException] = []
    afters: list[Any] = []

    @tool
    def fail() -> int:
        """Fail."""
        raise boom

    @fail.on_error
    def record(*, exc: BaseException) -> None:
        errors.append(exc)

    fail.after_invoke(afters.append)
    result = run(fail.invoke({}))
    assert result.is_error
    assert errors == [boom]
    assert afters == []


def test_on_error_does_not_fire_on_success(run: Any, add: Tool) -> None:
    """A successful run does not dispatch on_error."""
    errors: list[BaseException] = []
    add.on_error(lambda exc: errors.append(exc))
    run(add.invoke({"a": 1}))
    assert errors == []


def test_async_hooks_are_awaited(run: Any, add: Tool) -> None:
    """Hooks may be coroutines; they are awaited."""
    seen: list[Any] = []

    @add.after_invoke
    async def record(value: Any) -> None:
        seen.append(value)

    run(add.invoke({"a": 5}))
    assert seen == [7]


def test_hook_decorators_return_the_hook(add: Tool) -> None:
    """The decorators return the function unchanged, so it stays usable."""

    def hook(**kwargs: Any) -> None:
        return None

    assert add.before_invoke(hook) is hook
    assert add.after_invoke(hook) is hook
    assert add.on_error(hook) is hook
    assert add.on_yield(hook) is hook


def test_hooks_fire_only_for_their_own_tool(run: Any, add: Tool) -> None:
    """A hook registered on one tool never fires for another."""
    seen: list[Any] = []

    @tool
    def other() -> int:
        """Other."""
        return 0

    add.after_invoke(seen.append)
    run(other.invoke({}))
    assert seen == []


@pytest.mark.parametrize("event", ["before_invoke", "after_invoke"])
def test_exceptions_in_hooks_propagate(run: Any, add: Tool, event: str) -> None:
    """An exception raised by a before or after hook reaches the caller of invoke."""

    def bad(*args: Any, **kwargs: Any) -> None:
        raise LookupError("hook failed")

    getattr(add, event)(bad)
    with pytest.raises(LookupError, match="hook failed"):
        run(add.invoke({"a": 1}))


def test_exception_in_on_error_hook_propagates(run: Any) -> None:
    """An on_error hook that raises is not swallowed either."""

    @tool
    def fail() -> int:
        """Fail."""
        raise ValueError("tool")

    @fail.on_error
    def bad(exc: BaseException) -> None:
        raise RuntimeError("hook")

    with pytest.raises(RuntimeError, match="hook"):
        run(fail.invoke({}))


def test_global_hooks_get_tool_arguments_result_and_context(run: Any, add: Tool) -> None:
    """Hooks from ``CallOptions.hooks`` receive tool=, arguments=/result= and context=."""
    events: list[tuple[str, Any]] = []
    hooks = HookSet(
        before=(
            lambda tool, arguments, context: events.append(("before", (tool.name, arguments))),
        ),
        after=(lambda tool, result, context: events.append(("after", result.value)),),
    )
    run(add.invoke({"a": 1}, options=CallOptions(hooks=hooks)))
    assert events == [("before", ("add", {"a": 1})), ("after", 3)]


def test_global_error_hook_gets_the_exception(run: Any) -> None:
    """A global on_error hook receives the tool's exception."""
    seen: list[Any] = []

    @tool
    def fail() -> int:
        """Fail."""
        raise KeyError("k")

    hooks = HookSet(error=(lambda tool, exc, context: seen.append((tool.name, type(exc))),))
    run(fail.invoke({}, options=CallOptions(hooks=hooks)))
    assert seen == [("fail", KeyError)]


def test_global_hook_tags_select_tools_by_any_overlap() -> None:
    """A tagged global hook applies to tools sharing any tag; an untagged one to all."""
    io = GlobalHook("before_invoke", print, frozenset({"io"}))
    everywhere = GlobalHook("after_invoke", print)
    assert io.applies_to(frozenset({"io", "net"}))
    assert not io.applies_to(frozenset())
    assert everywhere.applies_to(frozenset())
    selected = HookSet.for_tags([io, everywhere], frozenset({"db"}))
    assert selected == HookSet(after=(print,))
    assert not HookSet()
    assert selected
