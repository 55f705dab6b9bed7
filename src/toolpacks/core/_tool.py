"""The ``Tool`` object and the ``@tool`` decorator."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping
from typing import TYPE_CHECKING, Any, overload

from toolpacks.core.define._definition import ToolDefinition
from toolpacks.core.define._schema import ExtraArgs
from toolpacks.exceptions import ToolConflictError, ToolDefinitionError

if TYPE_CHECKING:
    from toolpacks.core._context import ToolContext
    from toolpacks.core._result import ToolResult
    from toolpacks.core.call._options import CallOptions

__all__ = ["Tool", "tool"]


class _Engine:
    """``Tool.invoke`` until the first access: binds the call engine's ``start`` in its place.

    Defining a tool needs no call engine (the plan, the threads, results and outcomes, and
    with them ``concurrent.futures`` and ``logging``): it is imported when ``invoke`` is
    first read, and from then on ``Tool.invoke`` is the plain function, so a call pays
    nothing for the laziness (tests/core/test_import_cost.py holds the line).
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.owner, self.name = owner, name

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        from toolpacks.core.call._invoke import start

        setattr(self.owner, self.name, start)
        return start.__get__(instance, owner)


_OPTION_NAMES = frozenset(
    {
        "name",
        "description",
        "tags",
        "lock",
        "timeout",
        "require_approval",
        "allowed_agents",
        "input_schema",
        "read_only",
        "destructive",
        "idempotent",
        "open_world",
        "title",
        "instructions",
        "extra_args",
        "strict",
        "context",
        "validate_output",
        "max_abandoned_threads",
        "credentials",
        "scopes",
    }
)


class Tool(ToolDefinition):
    """A callable a model can use, with a name, a description, an input schema and hooks.

    It adds to a function what a model needs: a JSON Schema for its input, validation,
    metadata and hooks.

    Make one with ``@tool`` or by hand, ``Tool(fn, name=..., description=...)``. Calling it
    directly calls the original function, unchanged; ``await t.invoke(arguments)`` validates
    model-supplied arguments and runs it safely, returning a ``ToolResult``.
    """

    # -- calling ------------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the original function with these arguments and return its raw result."""
        return self.fn(*args, **kwargs)

    if TYPE_CHECKING:

        def invoke(
            self,
            arguments: Mapping[str, Any] | str | bytes | None = None,
            context: ToolContext | None = None,
            *,
            options: CallOptions | None = None,
        ) -> Coroutine[Any, Any, ToolResult]:
            """Validate ``arguments`` (a dict or JSON text), run the tool, return a result."""
            ...

    else:
        invoke = _Engine()
        """Validate ``arguments`` (a dict or JSON text), run the tool and return a result.

        ``await t.invoke(arguments, context=None, *, options=None)``. Never raises for bad
        arguments or a failing tool: the result says what went wrong in a form a model can
        act on. Exceptions raised by hooks, and cancellation, propagate.
        """

    def invoke_sync(
        self,
        arguments: Mapping[str, Any] | str | bytes | None = None,
        context: ToolContext | None = None,
        *,
        options: CallOptions | None = None,
    ) -> ToolResult:
        """``invoke`` for synchronous code; safe inside a running event loop too.

        The call runs on toolpacks' private event loop thread while this thread waits, so
        hooks, approvals, locks and timeouts behave as in ``await t.invoke(...)``, and a
        sync tool still runs in a worker thread. Interrupting the wait cancels the call. A
        plain sync tool without timeout, lock or hooks runs on this thread instead, with the
        same result (``core.call._sync``).
        """
        from toolpacks.core.call import _sync  # loaded by the first synchronous call

        coro = self.invoke(arguments, context, options=options)
        if _sync.runs_here(self, options):
            return _sync.run_here(coro)
        return _sync.run_sync(coro)

    def stream(
        self,
        arguments: Mapping[str, Any] | str | bytes | None = None,
        context: ToolContext | None = None,
        *,
        options: CallOptions | None = None,
    ) -> AsyncIterator[Any]:
        """Run a generator tool and yield each item as it is produced.

        Raises:
            WrongRunMethodError: The tool is not a generator (use ``invoke``).
            InvalidArgumentsError: The arguments do not validate.
        """
        from toolpacks.core.call._generators import stream, wrong_run_method

        if not self.is_generator:
            raise wrong_run_method(self)
        return stream(self, arguments, context, options)

    # -- structure ----------------------------------------------------------------------------

    @overload
    def subtool(self, fn: Callable[..., Any], /) -> Tool: ...

    @overload
    def subtool(
        self, fn: None = None, /, **options: Any
    ) -> Callable[[Callable[..., Any]], Tool]: ...

    def subtool(
        self, fn: Callable[..., Any] | None = None, /, **options: Any
    ) -> Tool | Callable[[Callable[..., Any]], Tool]:
        """Define a child tool, registered under the scoped name ``parent.child``.

        Takes the same options as ``@tool``.
        """

        def decorate(f: Callable[..., Any]) -> Tool:
            child = _build(f, options, parent=self)
            if child.name in self._subtools:
                raise ToolConflictError(
                    f"tool {self.scoped_name!r} already has a subtool named {child.name!r}"
                )
            self._subtools[child.name] = child  # type: ignore[assignment]  # children are Tools
            return child

        return decorate(fn) if fn is not None else decorate


def _build(fn: Callable[..., Any], options: Mapping[str, Any], parent: Tool | None = None) -> Tool:
    if isinstance(fn, Tool):
        raise ToolDefinitionError(f"{fn!r} is already a tool; apply @tool once")
    known = {k: v for k, v in options.items() if k in _OPTION_NAMES}
    fixed = {k: v for k, v in options.items() if k not in _OPTION_NAMES}
    if "name" in known and not isinstance(known["name"], str):
        raise ToolDefinitionError(f"tool name must be a str, got {type(known['name']).__name__}")
    return Tool(fn, fixed_kwargs=fixed, parent=parent, **known)


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    fn: None = None,
    /,
    *,
    name: str | None = ...,
    description: str | None = ...,
    tags: Iterable[str] = ...,
    lock: bool = ...,
    timeout: float | None = ...,
    require_approval: bool = ...,
    allowed_agents: Iterable[str] | None = ...,
    input_schema: Mapping[str, Any] | None = ...,
    read_only: bool | None = ...,
    destructive: bool | None = ...,
    idempotent: bool | None = ...,
    open_world: bool | None = ...,
    title: str | None = ...,
    extra_args: ExtraArgs = ...,
    strict: bool = ...,
    context: str | bool | None = ...,
    credentials: Iterable[str] = ...,
    scopes: Iterable[str] = ...,
    **fixed_kwargs: Any,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None, /, **options: Any
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a typed function into a :class:`Tool`; usable bare (``@tool``) or with options.

    Args:
        fn: The function, when used bare (``tool(fn, **options)`` works too).
        **options: ``name``, ``description``, ``tags``, ``lock``, ``timeout``,
            ``require_approval``, ``allowed_agents``, ``input_schema``, ``read_only``,
            ``destructive``, ``idempotent``, ``open_world``, ``title``, ``extra_args``
            (``"reject"`` or ``"ignore"``), ``strict``, ``context`` (the name of the context
            parameter, when it is not annotated ``ToolContext``; ``True`` for the annotated
            one or ``tool_context``), ``validate_output``, ``credentials`` (the names of the
            per-user credentials the tool uses: ``ToolContext.credential(name)``), ``scopes``
            (scopes the call's principal needs, else the call is refused); any
            other keyword is a fixed argument merged into every invocation (a callable one is
            called at each invocation).

    Returns:
        The tool, or a decorator making one.

    Raises:
        ToolDefinitionError: The function cannot be a tool (missing hints, untyped return,
            a type with no JSON Schema, a misused context parameter, a class).
        TypeError: A fixed argument matches no parameter of the function.

    Example:
        >>> @tool
        ... def add(a: int, b: int) -> int:
        ...     '''Add two integers.'''
        ...     return a + b
        >>> add.name, add(1, 2)
        ('add', 3)
    """
    if fn is not None:
        return _build(fn, options)

    def decorate(f: Callable[..., Any]) -> Tool:
        return _build(f, options)

    return decorate
