"""What a tool is: its definition (name, description, schemas, options, hooks, binding).

``ToolDefinition`` holds everything that is decided when a tool is defined; ``Tool`` (in
``_tool``) adds running it. The split keeps the invocation engine, which reads definitions,
below the class whose methods call it.
"""

from __future__ import annotations

import contextlib
import inspect
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from types import MethodType
from typing import Any, Self

from toolpacks.core._credentials import credentials_of
from toolpacks.core._hooks import ToolHooks
from toolpacks.core._principal import scopes_of
from toolpacks.core.define._docstrings import parse_docstring
from toolpacks.core.define._hints import unwrap_partial
from toolpacks.core.define._output import output_of, output_type_of
from toolpacks.core.define._schema import ExtraArgs, Signature, analyze, docstring_of
from toolpacks.core.define._text import hidden_characters, hidden_in_schema
from toolpacks.core.define._traits import (
    Kind,
    MissingDocstringWarning,
    ToolHints,
    ToolLock,
    check_name,
    is_typed,
    kind_of,
    user_stacklevel,
)
from toolpacks.exceptions import ToolDefinitionError

__all__ = ["ToolDefinition", "ToolMetadata"]


class ToolMetadata:
    """Descriptive data of a tool, including when its last run started and ended.

    ``start_time`` is set at the entry of every run and ``end_time`` when it finishes (in a
    ``finally``), on this same instance; both are ``None`` before the first run. Concurrent
    runs overwrite each other here; each ``ToolResult`` carries its own timing.
    """

    __slots__ = ("_tool", "end", "start")

    def __init__(self, tool: ToolDefinition) -> None:
        self._tool = tool
        self.start: float | None = None
        self.end: float | None = None

    @property
    def name(self) -> str:
        """The tool's short name."""
        return self._tool.name

    @property
    def description(self) -> str:
        """The tool's description."""
        return self._tool.description

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments."""
        return self._tool.input_schema

    @property
    def output_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of the tool's output (a generator's items), if typed."""
        return self._tool.output_schema

    @property
    def start_time(self) -> datetime | None:
        """When the last run started (UTC), or None."""
        return None if self.start is None else datetime.fromtimestamp(self.start, UTC)

    @property
    def end_time(self) -> datetime | None:
        """When the last run ended (UTC), or None."""
        return None if self.end is None else datetime.fromtimestamp(self.end, UTC)

    def dict(self) -> dict[str, Any]:
        """Name, description, start and end time (ISO-8601 or None) and both schemas."""
        start, end = self.start_time, self.end_time
        return {
            "name": self.name,
            "description": self.description,
            "start_time": start.isoformat() if start else None,
            "end_time": end.isoformat() if end else None,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
        }


class ToolDefinition:
    """A tool's definition: everything about it but running it (``Tool`` adds that).

    Use ``Tool``; this base class exists so that the invocation engine can read definitions
    without importing the class that calls it.
    """

    _loop_blocks: int = 0
    """Times this (async) tool was caught blocking the event loop (see ``_watchdog``)."""
    deferred: bool = False
    """Whether this is a placeholder listed from its pack's manifest, whose pack is imported
    on its first call (``toolpacks.packs.entrypoints._manifest_tool.ManifestTool``); a toolset
    swaps it then."""

    name: str
    """The tool's short name (a subtool's too; see ``scoped_name``)."""
    description: str
    """The model-facing description."""
    tags: frozenset[str]
    """Tags used for filtering and hook selection."""
    fn: Callable[..., Any]
    """The original function."""
    hints: ToolHints
    """Behaviour hints (read-only, destructive, idempotent, open-world)."""
    title: str | None
    """A human-readable title, if any."""
    instructions: str | None
    """Extra usage instructions for the model (a TOOL.md body), if any."""
    timeout: float | None
    """Seconds a run may take before it gives a timeout result; None for no limit."""
    require_approval: bool
    """Whether a call waits for an approval handler before running."""
    allowed_agents: frozenset[str] | None
    """The agents that may use the tool; None means every agent."""
    lock: ToolLock | None
    """The lock that serializes runs (``lock=True``), or None."""
    hooks: ToolHooks
    """The per-tool hooks."""
    fixed_kwargs: Mapping[str, Any]
    """Keyword arguments merged into every invocation (callables evaluated per call)."""
    extra_args: ExtraArgs
    """What ``invoke`` does with undeclared arguments: ``"reject"`` or ``"ignore"``."""
    kind: Kind
    """Whether ``fn`` is a plain function, coroutine, generator or async generator."""
    parent: ToolDefinition | None
    """The parent tool of a subtool."""
    pack: str | None
    """The pack the tool came from, once registered by a host."""
    credentials: tuple[str, ...]
    """The per-user credentials the tool uses (``[credentials.NAME]``), the only ones its
    ``ToolContext.credential`` returns; resolved for each call's principal."""
    scopes: frozenset[str]
    """Scopes a call's principal needs (``@tool(scopes=[...])``); empty: none."""

    def __init__(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        tags: Iterable[str] = (),
        lock: bool = False,
        timeout: float | None = None,
        require_approval: bool = False,
        allowed_agents: Iterable[str] | None = None,
        input_schema: Mapping[str, Any] | None = None,
        read_only: bool | None = None,
        destructive: bool | None = None,
        idempotent: bool | None = None,
        open_world: bool | None = None,
        title: str | None = None,
        instructions: str | None = None,
        extra_args: ExtraArgs = "reject",
        strict: bool = False,
        context: str | bool | None = None,
        validate_output: bool = True,
        max_abandoned_threads: int = 4,
        fixed_kwargs: Mapping[str, Any] | None = None,
        func: Callable[..., Any] | None = None,
        parameters: Mapping[str, Any] | None = None,
        parent: ToolDefinition | None = None,
        credentials: Iterable[str] = (),
        scopes: Iterable[str] = (),
    ) -> None:
        fn = fn if fn is not None else func
        if fn is None:
            raise ToolDefinitionError("Tool(...) needs a function: Tool(fn, name=...)")
        if input_schema is None and parameters is not None:
            input_schema = parameters
        named = unwrap_partial(fn)
        label = getattr(named, "__qualname__", None) or getattr(named, "__name__", None) or repr(fn)
        if inspect.isclass(fn):
            raise ToolDefinitionError(
                f"tool {label!r}: a class cannot be a tool; decorate a function or method, "
                "or subclass Toolbox and register an instance"
            )
        if not callable(fn):
            raise ToolDefinitionError(f"tool {label!r}: Callable required, got {type(fn).__name__}")
        if extra_args not in ("reject", "ignore"):
            raise ToolDefinitionError(
                f"tool {label!r}: extra_args={extra_args!r}; use 'reject' or 'ignore'"
            )
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
        ):
            raise ToolDefinitionError(f"tool {label!r}: timeout must be a positive number")
        self.fn = fn
        self.kind = kind_of(fn)
        self.name = check_name(name if name is not None else getattr(named, "__name__", ""), label)
        fixed = dict(fixed_kwargs or {})
        self._check_fixed(fn, label, fixed)
        self.fixed_kwargs = fixed
        explicit_schema = dict(input_schema) if input_schema is not None else None
        self._signature: Signature | None = None
        if explicit_schema is None or is_typed(fn):
            try:
                self._signature = analyze(
                    fn,
                    exclude=frozenset(fixed),
                    extra_args=extra_args,
                    strict=strict,
                    context=context,
                    is_generator=self.kind in ("generator", "async_generator"),
                )
            except ToolDefinitionError:
                # An explicit schema is used verbatim and suppresses inference: arguments are
                # then validated against it, whatever the annotations say.
                if explicit_schema is None:
                    raise
        self._explicit_schema = explicit_schema
        doc_description = (
            self._signature.description
            if self._signature
            else parse_docstring(docstring_of(fn)).description
        )
        if description is None:
            if not (docstring_of(fn) or "").strip():
                warnings.warn(
                    f"tool {self.name!r} has no docstring; its description falls back to its "
                    "name. Add a docstring saying what it does and when to use it.",
                    MissingDocstringWarning,
                    stacklevel=user_stacklevel(),
                )
            description = doc_description or self.name
        self.description = description
        self.tags = frozenset(tags) if not isinstance(tags, str) else frozenset({tags})
        self.hints = ToolHints(read_only, destructive, idempotent, open_world)
        self.title = title
        self.instructions = instructions
        for what, text in (
            ("description", description),
            ("title", title),
            ("instructions", instructions),
        ):
            hidden = hidden_characters(text) if text else []
            if hidden:
                raise ToolDefinitionError(
                    f"tool {self.name!r}: its {what} contains invisible or bidirectional control "
                    f"characters ({', '.join(hidden)}), which can hide instructions from a "
                    "reviewer; remove them"
                )
        self.timeout = timeout
        self.require_approval = bool(require_approval)
        self.credentials = credentials_of(credentials, self.name)
        self.scopes = scopes_of(scopes, self.name)
        self.allowed_agents = (
            None
            if allowed_agents is None
            else frozenset({allowed_agents} if isinstance(allowed_agents, str) else allowed_agents)
        )
        self.lock = ToolLock() if lock else None
        self.extra_args = extra_args
        self.strict = strict
        self.validate_output = validate_output
        self.max_abandoned_threads = max_abandoned_threads
        self.hooks = ToolHooks()
        self.parent = parent
        self.pack = None
        self.metadata = ToolMetadata(self)
        self._subtools: dict[str, Self] = {}
        self._bound_to: object | None = None
        self._output_type = (
            output_type_of(
                self._signature.return_annotation,
                generator=self.kind in ("generator", "async_generator"),
            )
            if self._signature
            else inspect.Parameter.empty
        )
        output_schema, self._output_adapter = output_of(label, self._output_type)
        self._output_schema: dict[str, Any] | None = output_schema
        self._input_schema = (
            explicit_schema
            if explicit_schema is not None
            else (self._signature.input_schema if self._signature else {"type": "object"})
        )
        in_schema = hidden_in_schema(self._input_schema)
        if in_schema:
            raise ToolDefinitionError(
                f"tool {self.name!r}: {in_schema[0]} in its input schema contains invisible or "
                f"bidirectional control characters ({', '.join(in_schema[1])}), which can hide "
                "instructions from a reviewer; remove them"
            )
        self._abandoned = 0
        self._abandoned_lock = threading.Lock()
        self._plan: Any = None
        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            with contextlib.suppress(AttributeError):
                setattr(self, attr, getattr(fn, attr))
        self.__wrapped__ = fn

    # -- definition helpers -------------------------------------------------------------------

    @staticmethod
    def _check_fixed(fn: Callable[..., Any], label: str, fixed: Mapping[str, Any]) -> None:
        if not fixed:
            return
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            return
        if any(p.kind is p.VAR_KEYWORD for p in params.values()):
            return
        unknown = sorted(set(fixed) - set(params))
        if unknown:
            raise TypeError(
                f"tool {label!r}: fixed keyword argument(s) {', '.join(unknown)} do not match "
                f"any parameter of the function (it takes {', '.join(params) or 'none'}); "
                "remove them or add matching parameters"
            )

    # -- properties ---------------------------------------------------------------------------

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema (type object) of the tool's arguments."""
        return self._input_schema

    @property
    def json_schema(self) -> dict[str, Any]:
        """Alias of ``input_schema``."""
        return self._input_schema

    @property
    def output_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of the return type (a generator's item type), or None."""
        return self._output_schema

    @property
    def scoped_name(self) -> str:
        """The name under which a registry holds it: ``parent.child`` for subtools."""
        if self.parent is None:
            return self.name
        return f"{self.parent.scoped_name}.{self.name}"

    @property
    def is_generator(self) -> bool:
        """Whether the tool yields items (sync or async generator)."""
        return self.kind in ("generator", "async_generator")

    @property
    def subtools(self) -> tuple[Self, ...]:
        """Direct subtools, in definition order."""
        return tuple(self._subtools.values())

    @property
    def signature(self) -> Signature | None:
        """What was learned from the function's signature (None for a schema-only tool)."""
        return self._signature

    # -- hooks --------------------------------------------------------------------------------

    def before_invoke(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register a hook called with the call's keyword arguments before each run."""
        self.hooks.before.append(fn)
        return fn

    def after_invoke(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register a hook called with the return value (a generator's items) after success."""
        self.hooks.after.append(fn)
        return fn

    def on_error(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register a hook called with ``exc=`` when the tool raises."""
        self.hooks.error.append(fn)
        return fn

    def on_yield(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register a hook called with each item a generator tool yields."""
        self.hooks.on_yield.append(fn)
        return fn

    # -- structure ----------------------------------------------------------------------------

    def walk(self) -> Iterable[Self]:
        """This tool and all its subtools, depth first, in definition order."""
        yield self
        for child in self._subtools.values():
            yield from child.walk()

    def doc_tree(self) -> dict[str, Any]:
        """``{"name", "description", "subtools": [...]}``, recursively, with short names."""
        return {
            "name": self.name,
            "description": self.description,
            "subtools": [child.doc_tree() for child in self._subtools.values()],
        }

    # -- methods ------------------------------------------------------------------------------

    def __get__(self, obj: object, objtype: type | None = None) -> Self:
        """Accessed through an instance, a tool defined in a class binds to that instance."""
        if obj is None or self._bound_to is not None or self._signature is None:
            return self
        if not self._signature.skips_first:
            return self
        cache = getattr(obj, "__dict__", None)
        key = f"__toolpacks_bound_{self.name}"
        if cache is not None and key in cache:
            bound: Self = cache[key]
            return bound
        bound = self.bind(obj)
        if cache is not None:
            cache[key] = bound
        return bound

    def bind(self, obj: object) -> Self:
        """A copy of this tool whose function is bound to ``obj`` (hooks are copied)."""
        bound = object.__new__(type(self))
        bound.__dict__.update(self.__dict__)
        bound.fn = MethodType(self.fn, obj)
        bound.__wrapped__ = bound.fn
        bound._bound_to = obj
        bound.hooks = self.hooks.copy()
        bound.metadata = ToolMetadata(bound)
        bound._plan = None
        bound._abandoned = 0
        bound._abandoned_lock = threading.Lock()
        bound._subtools = {n: t.bind(obj) for n, t in self._subtools.items()}
        for child in bound._subtools.values():
            child.parent = bound
        return bound

    def replace(self, **changes: Any) -> Self:
        """A copy with some attributes changed (``name``, ``description``, ``tags``, ...).

        The function, schema and hooks are shared with the original.
        """
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.metadata = ToolMetadata(new)
        for key, value in changes.items():
            if key == "tags" or (key == "allowed_agents" and value is not None):
                value = frozenset(value)
            elif key == "scopes":
                value = scopes_of(value, self.name)
            elif key == "name":
                value = check_name(value, self.name)
            elif key not in {"description", "title", "instructions", "require_approval", "pack"}:
                raise TypeError(f"Tool.replace() cannot change {key!r}")
            setattr(new, key, value)
        new._plan = None
        return new

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.scoped_name!r}>"
