"""Defining tools: the decorator, its options, and every way a definition is refused."""

from __future__ import annotations

import socket
import warnings
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from toolpacks import (
    Tool,
    Toolbox,
    ToolContext,
    ToolDefinitionError,
    ToolHints,
    ToolpacksError,
    tool,
)
from toolpacks.core.define._traits import MissingDocstringWarning, ToolLock


class Plain:
    """A class pydantic has no schema for."""

    def __init__(self, value: int) -> None:
        self.value = value


# -- the decorator ---------------------------------------------------------------------------


def test_bare_decorator_returns_a_tool_named_after_the_function() -> None:
    """Bare ``@tool`` gives a ``Tool`` (not a function) named after the function."""

    @tool
    def search_web(query: str) -> str:
        """Search the web."""
        return query

    assert isinstance(search_web, Tool)
    assert search_web.name == "search_web"


def test_called_decorator_is_equivalent_to_bare() -> None:
    """``@tool()`` and ``@tool`` give tools with the same name, description and schema."""

    def echo(text: str) -> str:
        """Echo the text."""
        return text

    bare, called = tool(echo), tool()(echo)
    assert (bare.name, bare.description, bare.input_schema) == (
        called.name,
        called.description,
        called.input_schema,
    )


def test_name_option_overrides_the_function_name() -> None:
    """``@tool(name="web_search")`` names the tool ``web_search``."""

    @tool(name="web_search")
    def search(query: str) -> str:
        """Search."""
        return query

    assert search.name == "web_search"
    assert search.metadata.name == "web_search"


@pytest.mark.parametrize("bad", [3, None.__class__, b"name"])
def test_non_str_name_is_a_value_error(bad: object) -> None:
    """A name that is not a str is refused with a ValueError (a ToolDefinitionError)."""

    def f(x: int) -> int:
        """F."""
        return x

    with pytest.raises(ValueError, match="name must be a str"):
        tool(name=bad)(f)
    with pytest.raises(ToolDefinitionError, match="name must be a str"):
        Tool(f, name=bad)  # type: ignore[arg-type]


def test_name_with_invalid_characters_is_refused() -> None:
    """A name with spaces cannot be a provider tool name, so it is refused at definition."""

    def f(x: int) -> int:
        """F."""
        return x

    with pytest.raises(ToolDefinitionError, match="not a valid tool name"):
        tool(name="two words")(f)


def test_description_option_overrides_the_docstring() -> None:
    """``description=`` wins over the docstring."""

    @tool(description="Explicit.")
    def f(x: int) -> int:
        """From the docstring."""
        return x

    assert f.description == "Explicit."


def test_tags_from_a_list_or_set_become_a_frozenset() -> None:
    """``tags`` accepts a list or a set and is exposed as a frozenset; default is empty."""

    def f(x: int) -> int:
        """F."""
        return x

    assert tool(tags=["io", "read", "io"])(f).tags == frozenset({"io", "read"})
    assert tool(tags={"net"})(f).tags == frozenset({"net"})
    assert tool(f).tags == frozenset()
    assert isinstance(tool(tags=["a"])(f).tags, frozenset)


def test_options_are_exposed_on_the_tool() -> None:
    """Lock, timeout, approval, allowed agents and behaviour hints are kept as given."""

    @tool(
        lock=True,
        timeout=2.5,
        require_approval=True,
        allowed_agents=["a", "b"],
        read_only=True,
        destructive=False,
        idempotent=True,
        open_world=False,
    )
    def f(x: int) -> int:
        """F."""
        return x

    assert isinstance(f.lock, ToolLock)
    assert f.timeout == 2.5
    assert f.require_approval is True
    assert f.allowed_agents == frozenset({"a", "b"})
    assert f.hints == ToolHints(
        read_only=True, destructive=False, idempotent=True, open_world=False
    )


def test_defaults_of_options() -> None:
    """Unlocked tools have ``lock is None``; no timeout, no approval, every agent allowed."""

    @tool
    def f(x: int) -> int:
        """F."""
        return x

    assert f.lock is None
    assert f.timeout is None
    assert f.require_approval is False
    assert f.allowed_agents is None
    assert f.hints == ToolHints()
    assert f.extra_args == "reject"


@pytest.mark.parametrize("timeout", [0, -1, "5"])
def test_bad_timeout_is_refused(timeout: object) -> None:
    """A timeout that is not a positive number is a definition error."""

    def f(x: int) -> int:
        """F."""
        return x

    with pytest.raises(ToolDefinitionError, match="timeout must be a positive number"):
        tool(timeout=timeout)(f)


def test_bad_extra_args_policy_is_refused() -> None:
    """``extra_args`` must be 'reject' or 'ignore'."""

    def f(x: int) -> int:
        """F."""
        return x

    with pytest.raises(ToolDefinitionError, match="extra_args='allow'"):
        tool(extra_args="allow")(f)


def test_functional_form_takes_options() -> None:
    """``tool(fn, name=...)`` works without decorator syntax."""

    def f(x: int) -> int:
        """F."""
        return x

    t = tool(f, name="renamed", tags=["x"])
    assert (t.name, t.tags) == ("renamed", frozenset({"x"}))


def test_every_tool_exposes_the_core_attributes() -> None:
    """A tool exposes metadata, fn, hooks, lock, tags and is callable."""

    def f(x: int) -> int:
        """F."""
        return x

    t = tool(f)
    assert t.fn is f
    assert t.metadata.name == "f"
    assert not t.hooks
    assert t.lock is None
    assert t.tags == frozenset()
    assert callable(t)


def test_decorating_twice_is_refused() -> None:
    """Applying ``@tool`` to a tool is a definition error."""

    @tool
    def f(x: int) -> int:
        """F."""
        return x

    with pytest.raises(ToolDefinitionError, match="already a tool"):
        tool(f)


def test_kinds_of_functions_are_recognised() -> None:
    """Sync functions, coroutines, sync and async generators are all accepted."""

    @tool
    def sync(x: int) -> int:
        """S."""
        return x

    @tool
    async def coro(x: int) -> int:
        """C."""
        return x

    @tool
    def gen(x: int) -> Iterator[int]:
        """G."""
        yield x

    @tool
    async def agen(x: int) -> AsyncIterator[int]:
        """A."""
        yield x

    assert [t.kind for t in (sync, coro, gen, agen)] == [
        "function",
        "coroutine",
        "generator",
        "async_generator",
    ]
    assert [t.is_generator for t in (sync, coro, gen, agen)] == [False, False, True, True]


def test_nothing_is_registered_globally() -> None:
    """Two same-named tools can be defined independently; neither replaces the other."""

    def make(answer: str) -> Tool:
        @tool
        def lookup(q: str) -> str:
            """Look up."""
            return answer

        return lookup

    first, second = make("one"), make("two")
    assert first.name == second.name == "lookup"
    assert (first("q"), second("q")) == ("one", "two")


# -- the direct call ---------------------------------------------------------------------------


def test_direct_call_is_the_original_function() -> None:
    """``t(1, 2)`` and ``t(a=1, b=2)`` call the function with exactly those arguments."""
    seen: list[tuple[Any, ...]] = []

    @tool
    def pair(a: int, b: int) -> list[int]:
        """Pair."""
        seen.append((a, b))
        return [a, b]

    assert pair(1, 2) == [1, 2]
    assert pair(a="x", b=None) == ["x", None]  # type: ignore[arg-type]  # no validation
    assert seen == [(1, 2), ("x", None)]


def test_direct_call_of_a_coroutine_tool_returns_the_coroutine(run: Any) -> None:
    """Calling an async tool directly gives the coroutine, as calling the function would."""

    @tool
    async def double(x: int) -> int:
        """Double."""
        return 2 * x

    assert run(double(4)) == 8


def test_exceptions_propagate_unchanged_from_the_direct_call() -> None:
    """An exception raised in the body leaves ``t(...)`` as the very same object."""
    boom = KeyError("missing")

    @tool
    def fail(x: int) -> int:
        """Fail."""
        raise boom

    with pytest.raises(KeyError) as caught:
        fail(1)
    assert caught.value is boom


def test_direct_call_missing_argument_raises_type_error() -> None:
    """A direct call missing a required argument fails as Python does: TypeError."""

    @tool
    def f(x: int) -> int:
        """F."""
        return x

    with pytest.raises(TypeError):
        f()


def test_wrapper_attributes_are_kept() -> None:
    """``__name__``, ``__qualname__``, ``__doc__``, ``__module__`` and ``__wrapped__`` survive."""

    def original(x: int) -> int:
        """The doc."""
        return x

    t = tool(original)
    assert t.__name__ == "original"
    assert t.__qualname__ == original.__qualname__
    assert t.__doc__ == "The doc."
    assert t.__module__ == __name__
    assert t.__wrapped__ is original


# -- fixed keyword arguments -------------------------------------------------------------------


def test_fixed_kwargs_are_hidden_from_the_schema() -> None:
    """An unknown decorator keyword is a fixed kwarg, not an input the model sees."""

    @tool(api_base="https://example.test")
    def fetch(path: str, api_base: str) -> str:
        """Fetch."""
        return api_base + path

    assert fetch.fixed_kwargs == {"api_base": "https://example.test"}
    assert list(fetch.input_schema["properties"]) == ["path"]
    assert fetch.input_schema["required"] == ["path"]


def test_fixed_kwarg_the_function_cannot_accept_is_a_type_error() -> None:
    """A fixed kwarg matching no parameter (and no ``**kwargs``) fails at decoration."""

    def f(x: int) -> int:
        """F."""
        return x

    with pytest.raises(TypeError, match=r"fixed keyword argument\(s\) zzz do not match"):
        tool(zzz=1)(f)


def test_fixed_kwarg_is_accepted_by_var_keyword() -> None:
    """A function with ``**kwargs`` accepts any fixed kwarg."""

    @tool(region="eu")
    def f(x: int, **extra: str) -> str:
        """F."""
        return extra["region"]

    assert f.fixed_kwargs == {"region": "eu"}


# -- definitions refused -----------------------------------------------------------------------


def test_untyped_function_is_refused() -> None:
    """``def bad_tool(arg)`` (no hints, no return) raises ToolDefinitionError, not a warning."""

    def bad_tool(arg):  # type: ignore[no-untyped-def]
        return arg

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ToolDefinitionError, match="parameter 'arg' has no type hint"):
            tool(bad_tool)


def test_missing_parameter_hint_names_function_parameter_and_fix() -> None:
    """A parameter without a hint: the message names the function, the parameter and the fix."""

    def lookup(key, limit: int) -> str:  # type: ignore[no-untyped-def]
        """Look up."""
        return key

    with pytest.raises(ToolDefinitionError) as caught:
        tool(lookup)
    message = str(caught.value)
    assert "lookup" in message
    assert "parameter 'key' has no type hint" in message
    assert "`key: str`" in message


def test_missing_return_annotation_is_refused() -> None:
    """A function without a return annotation cannot be a tool."""

    def lookup(key: str):  # type: ignore[no-untyped-def]
        """Look up."""
        return key

    with pytest.raises(ToolDefinitionError, match=r"lookup' has no return annotation.*-> str"):
        tool(lookup)


def test_generator_may_omit_its_return_annotation() -> None:
    """Generators may infer their return type; they then have no output schema."""

    @tool
    def count(n: int):  # type: ignore[no-untyped-def]
        """Count."""
        yield from range(n)

    assert count.output_schema is None


def test_class_is_refused() -> None:
    """Decorating a class is a definition error that points to functions and Toolbox."""
    with pytest.raises(ToolDefinitionError, match=r"a class cannot be a tool.*Toolbox"):

        @tool
        class Thing:
            """A class."""

    class Box(Toolbox):
        """A toolbox class, which is registered as an instance."""

    with pytest.raises(ToolDefinitionError, match="a class cannot be a tool"):
        tool(Box)


def test_non_callable_is_refused() -> None:
    """Something that is not callable cannot be a tool."""
    with pytest.raises(ToolDefinitionError, match="Callable required"):
        Tool(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad_type", [socket.socket, Plain])
def test_parameter_type_without_json_schema_is_refused(bad_type: type) -> None:
    """A parameter typed ``socket.socket`` or a plain class has no JSON Schema: refused."""

    def connect(target: Any) -> str:
        """Connect."""
        return "ok"

    connect.__annotations__["target"] = bad_type
    with pytest.raises(ToolDefinitionError) as caught:
        tool(connect)
    message = str(caught.value)
    assert "connect" in message
    assert "parameter 'target' has a type with no JSON Schema" in message
    assert "use JSON-compatible types" in message


def test_return_type_without_json_schema_is_refused() -> None:
    """A return type with no JSON Schema is refused, suggesting ``-> Any``."""

    def connect(host: str) -> Plain:
        """Connect."""
        return Plain(1)

    with pytest.raises(ToolDefinitionError, match=r"return type .* has no JSON Schema.*-> Any"):
        tool(connect)


def test_var_positional_and_positional_only_are_refused() -> None:
    """``*args`` and positional-only parameters cannot be passed by name: refused."""

    def star(*items: str) -> str:
        """Star."""
        return ""

    def posonly(a: int, /) -> int:
        """Positional only."""
        return a

    with pytest.raises(ToolDefinitionError, match=r"'\*items' cannot be passed by name"):
        tool(star)
    with pytest.raises(ToolDefinitionError, match="'a' is positional-only"):
        tool(posonly)


def test_unresolvable_annotation_is_refused() -> None:
    """A string annotation naming an unknown type is a definition error naming the fix."""

    def f(x: NoSuchType) -> int:  # type: ignore[name-defined]  # noqa: F821
        """F."""
        return 1

    with pytest.raises(ToolDefinitionError, match="cannot resolve its type hints"):
        tool(f)


def test_definition_error_is_a_value_error_and_a_toolpacks_error() -> None:
    """``ToolDefinitionError`` subclasses both ValueError and ToolpacksError."""
    assert issubclass(ToolDefinitionError, ValueError)
    assert issubclass(ToolDefinitionError, ToolpacksError)


# -- the context parameter ---------------------------------------------------------------------


def test_two_context_parameters_are_refused() -> None:
    """Only one parameter may receive the ToolContext."""

    def f(first: ToolContext, second: ToolContext) -> str:
        """F."""
        return ""

    with pytest.raises(ToolDefinitionError, match="'first' and 'second' both ask for the"):
        tool(f)


def test_empty_context_name_is_refused() -> None:
    """``context=""`` names no parameter: a ValueError."""

    def f(x: int) -> int:
        """F."""
        return x

    with pytest.raises(ValueError, match="context='' names no parameter"):
        tool(context="")(f)


def test_context_naming_a_missing_parameter_is_refused() -> None:
    """``context="ctx"`` on a function without ``ctx`` is refused with the fix."""

    def f(x: int) -> int:
        """F."""
        return x

    with pytest.raises(ToolDefinitionError, match="no parameter 'ctx'; add `ctx: ToolContext`"):
        tool(context="ctx")(f)


def test_context_naming_a_parameter_of_another_type_is_refused() -> None:
    """``context="x"`` where ``x: int`` is refused: the context must be a ToolContext."""

    def f(x: int) -> int:
        """F."""
        return x

    with pytest.raises(ToolDefinitionError, match="annotate it `x: ToolContext`"):
        tool(context="x")(f)


def test_context_annotation_and_another_context_name_conflict() -> None:
    """A ``ToolContext`` parameter plus ``context=`` naming another parameter is refused."""

    def f(ctx: ToolContext, other) -> str:  # type: ignore[no-untyped-def]
        """F."""
        return ""

    with pytest.raises(ToolDefinitionError, match="both ask for the ToolContext"):
        tool(context="other")(f)


def test_context_option_names_an_unannotated_parameter() -> None:
    """``context="ctx"`` makes an unannotated ``ctx`` the context parameter."""

    @tool(context="ctx")
    def f(x: int, ctx) -> int:  # type: ignore[no-untyped-def]
        """F."""
        return x

    assert f.signature is not None
    assert f.signature.context_param == "ctx"
    assert list(f.input_schema["properties"]) == ["x"]


# -- hand-built tools --------------------------------------------------------------------------


def test_tool_can_be_built_by_hand_from_a_lambda_and_a_schema() -> None:
    """``Tool(name=..., func=lambda q: ..., description=..., parameters={...})`` works."""
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    t = Tool(
        name="fake_search",
        func=lambda q: f"results for {q}",
        description="Fake.",
        parameters=schema,
    )
    assert (t.name, t.description) == ("fake_search", "Fake.")
    assert t.input_schema == schema
    assert t.signature is None
    assert t("x") == "results for x"


def test_tool_without_a_function_is_refused() -> None:
    """``Tool()`` with neither ``fn`` nor ``func`` is a definition error."""
    with pytest.raises(ToolDefinitionError, match="needs a function"):
        Tool(name="nothing")


def test_untyped_lambda_without_schema_is_refused() -> None:
    """A hand-built tool from an untyped lambda needs a schema."""
    with pytest.raises(ToolDefinitionError, match="parameter 'q' has no type hint"):
        Tool(name="fs", func=lambda q: q, description="Fake.")


def test_explicit_schema_suppresses_inference_of_unusable_types() -> None:
    """With ``input_schema=`` a parameter type without a schema is no longer an error."""
    schema = {"type": "object", "properties": {"host": {"type": "string"}}, "required": ["host"]}

    @tool(input_schema=schema)
    def connect(host: Plain) -> str:
        """Connect."""
        return str(host)

    assert connect.input_schema == schema
    assert connect.signature is None


def test_bound_method_can_be_registered_directly(run: Any) -> None:
    """``tool(svc.get_weather)`` makes a tool of a bound method; ``self`` is not in the schema."""

    class Service:
        def __init__(self, city: str) -> None:
            self.city = city

        def get_weather(self, days: int) -> str:
            """Weather for the configured city."""
            return f"{self.city}:{days}"

    t = tool(name="get-weather")(Service("Oslo").get_weather)
    assert t.name == "get-weather"
    assert list(t.input_schema["properties"]) == ["days"]
    assert run(t.invoke({"days": 3})).value == "Oslo:3"


def test_callable_object_can_be_a_tool(run: Any) -> None:
    """An instance with a typed ``__call__`` is accepted; its schema comes from ``__call__``."""

    class Greeter:
        """Greets people."""

        def __call__(self, who: str) -> str:
            return f"hi {who}"

    t = Tool(Greeter(), name="greet")
    assert list(t.input_schema["properties"]) == ["who"]
    assert run(t.invoke({"who": "Ada"})).value == "hi Ada"


def test_missing_docstring_warns_and_points_at_the_definition() -> None:
    """No docstring: a MissingDocstringWarning attributed to this file, and the tool works."""

    def quiet_tool(arg: str) -> str:
        return arg

    with pytest.warns(MissingDocstringWarning, match="'quiet_tool' has no docstring") as record:
        t = tool(quiet_tool)
    assert record[0].filename == __file__
    assert isinstance(t, Tool)
    assert t.description == "quiet_tool"


def test_partial_of_a_coroutine_is_awaited(run: Any) -> None:
    """A ``functools.partial`` of an async function is a coroutine tool named after it."""
    import functools

    async def fetch(url: str, retries: int) -> str:
        """Fetch a URL."""
        return f"{url}:{retries}"

    t = Tool(functools.partial(fetch, retries=3))
    assert (t.name, t.kind, t.description) == ("fetch", "coroutine", "Fetch a URL.")
    assert run(t.invoke({"url": "u"})).value == "u:3"


def test_single_allowed_agent_as_a_string() -> None:
    """``allowed_agents="a"`` means the agent "a", not the letters of its name."""

    def f(x: int) -> int:
        """F."""
        return x

    assert tool(allowed_agents="researcher")(f).allowed_agents == frozenset({"researcher"})


def test_boolean_timeout_is_refused() -> None:
    """``timeout=True`` is not a number of seconds."""

    def f(x: int) -> int:
        """F."""
        return x

    with pytest.raises(ToolDefinitionError, match="timeout must be a positive number"):
        tool(timeout=True)(f)


def test_empty_explicit_schema_is_kept() -> None:
    """An explicit empty schema is used as given, not replaced by the generated one."""

    @tool(input_schema={})
    def f(x: int) -> int:
        """F."""
        return x

    assert f.input_schema == {}
