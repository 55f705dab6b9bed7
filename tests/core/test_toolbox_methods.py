"""Tools defined on classes: methods bound to instances, and ``Toolbox`` classes."""

from __future__ import annotations

from typing import Any

import pytest

from toolpacks import Tool, Toolbox, ToolConflictError, tool


class Greeter:
    """A class with tool methods."""

    def __init__(self, greeting: str) -> None:
        self.greeting = greeting

    @tool
    def greet(self, name: str) -> str:
        """Greet someone."""
        return f"{self.greeting}, {name}!"

    @tool(name="shout", tags=["loud"])
    async def shout(self, name: str) -> str:
        """Greet someone loudly."""
        return f"{self.greeting.upper()}, {name.upper()}!"


class Files(Toolbox):
    """Tools over one root directory."""

    toolbox_tags = frozenset({"files"})

    def __init__(self, root: str) -> None:
        self.root = root

    def read(self, path: str) -> str:
        """Read a file."""
        return f"read {self.root}/{path}"

    @tool(name="ls", tags=["listing"])
    def listing(self) -> list[str]:
        """List the root."""
        return [self.root]

    async def stat(self, path: str) -> int:
        """Size of a file."""
        return len(self.root + path)

    def _helper(self) -> str:
        return "private"


def test_method_accessed_through_an_instance_is_bound(run: Any) -> None:
    """``instance.tool`` is a Tool bound to that instance."""
    hello = Greeter("Hello")
    assert isinstance(hello.greet, Tool)
    assert hello.greet("Ada") == "Hello, Ada!"
    assert run(hello.greet.invoke({"name": "Ada"})).value == "Hello, Ada!"
    assert run(hello.shout.invoke({"name": "bo"})).value == "HELLO, BO!"


def test_method_accessed_through_the_class_is_unbound() -> None:
    """``Class.tool`` is the unbound tool; a direct call takes the instance explicitly."""
    assert Greeter.greet is Greeter.__dict__["greet"]
    assert Greeter.greet(Greeter("Hi"), "Ada") == "Hi, Ada!"


def test_self_is_not_in_the_schema() -> None:
    """``self`` never reaches the schema, bound or not."""
    assert list(Greeter.greet.input_schema["properties"]) == ["name"]
    assert list(Greeter("x").greet.input_schema["properties"]) == ["name"]


def test_each_instance_gets_its_own_bound_tool(run: Any) -> None:
    """Two instances give two tools, each using its own state; access is cached."""
    hello, hi = Greeter("Hello"), Greeter("Hi")
    assert hello.greet is hello.greet
    assert hello.greet is not hi.greet
    assert run(hi.greet.invoke({"name": "Ada"})).value == "Hi, Ada!"


def test_bound_tool_keeps_the_options() -> None:
    """Binding keeps name, tags and description."""
    shout = Greeter("x").shout
    assert (shout.name, shout.tags, shout.description) == (
        "shout",
        frozenset({"loud"}),
        "Greet someone loudly.",
    )


def test_bound_tool_copies_class_level_hooks(run: Any) -> None:
    """Hooks on the class-level tool fire for instances; hooks on a bound tool stay there."""

    class Counter:
        @tool
        def bump(self, n: int) -> int:
            """Bump."""
            return n + 1

    class_seen: list[Any] = []
    Counter.bump.after_invoke(class_seen.append)
    first, second = Counter(), Counter()
    instance_seen: list[Any] = []
    first.bump.after_invoke(instance_seen.append)
    run(first.bump.invoke({"n": 1}))
    run(second.bump.invoke({"n": 10}))
    assert class_seen == [2, 11]
    assert instance_seen == [2]


def test_invoke_on_the_unbound_method_is_an_error_result(run: Any) -> None:
    """Invoking the class-level tool has no ``self``: an error result, not an exception."""
    result = run(Greeter.greet.invoke({"name": "Ada"}))
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert "use it through an instance" in result.content


# -- Toolbox -----------------------------------------------------------------------------------


def test_toolbox_public_methods_become_tools_in_definition_order() -> None:
    """Every public method is a tool; private ones are not; order follows the class body."""
    tools = Files("/data").tools()
    assert [t.name for t in tools] == ["read", "ls", "stat"]


def test_toolbox_tools_are_bound_to_the_configured_instance(run: Any) -> None:
    """Each tool runs on the instance whose constructor arguments configured it."""
    one, two = Files("/one").tools(), Files("/two").tools()
    assert run(one[0].invoke({"path": "a"})).value == "read /one/a"
    assert run(two[0].invoke({"path": "a"})).value == "read /two/a"
    assert run(two[1].invoke({})).value == ["/two"]
    assert run(two[2].invoke({"path": "ab"})).value == len("/twoab")


def test_toolbox_tools_take_names_descriptions_and_tags(run: Any) -> None:
    """Undecorated methods use their own name and docstring; toolbox tags are added."""
    read, ls, _ = Files("/r").tools()
    assert (read.name, read.description) == ("read", "Read a file.")
    assert read.tags == frozenset({"files"})
    assert ls.tags == frozenset({"files", "listing"})
    assert list(read.input_schema["properties"]) == ["path"]


def test_toolbox_subclass_inherits_and_overrides() -> None:
    """Base-class tools come first; an override replaces the base method's tool."""

    class MoreFiles(Files):
        def read(self, path: str) -> str:
            """Read a file, differently."""
            return path

        def write(self, path: str, text: str) -> str:
            """Write a file."""
            return path

    tools = MoreFiles("/r").tools()
    assert [t.name for t in tools] == ["read", "ls", "stat", "write"]
    assert tools[0].description == "Read a file, differently."


def test_toolbox_method_without_hints_is_refused() -> None:
    """A Toolbox method must be typed like any tool."""

    class Broken(Toolbox):
        def run(self, x):  # type: ignore[no-untyped-def]
            """Run."""
            return x

    with pytest.raises(ValueError, match="parameter 'x' has no type hint"):
        Broken().tools()


def test_toolbox_override_of_a_decorated_method_uses_the_subclass(run: Any) -> None:
    """A subclass overriding a ``@tool`` method with a plain one runs the subclass's code."""

    class Quiet(Files):
        def listing(self) -> list[str]:
            """List nothing."""
            return []

    tools = {t.name: t for t in Quiet("/r").tools()}
    assert run(tools["listing"].invoke({})).value == []
    assert "ls" not in tools


def test_toolbox_decorated_override_keeps_its_options() -> None:
    """A subclass decorating an override with ``@tool(...)`` gets those options."""

    class Named(Files):
        @tool(name="read_file", tags=["read"])
        def read(self, path: str) -> str:
            """Read, renamed."""
            return path

    first = Named("/r").tools()[0]
    assert (first.name, first.tags) == ("read_file", frozenset({"read", "files"}))


def test_toolbox_tools_with_the_same_name_are_refused() -> None:
    """Two methods giving the same tool name are a conflict, never last-wins."""

    class Clash(Toolbox):
        @tool(name="b")
        def a(self) -> str:
            """A."""
            return "a"

        def b(self) -> str:
            """B."""
            return "b"

    with pytest.raises(ToolConflictError, match="methods 'a' and 'b' both define a tool named 'b'"):
        Clash().tools()


def test_decorating_a_toolbox_class_is_refused() -> None:
    """A Toolbox class is registered as an instance, never decorated."""
    with pytest.raises(ValueError, match="subclass Toolbox and register an instance"):
        tool(Files)
