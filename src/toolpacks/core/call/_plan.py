"""What a call of one tool needs, decided once per tool on its first call (``CallPlan``).

This module is imported with ``@tool`` and imports what plans need when the first is made.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolpacks.core.define._schema import _is_context

if TYPE_CHECKING:
    from toolpacks.core._jsonargs import ArgumentLimits
    from toolpacks.core.call._gate_compiled import CompiledGate
    from toolpacks.core.define._definition import ToolDefinition

__all__ = ["CallPlan", "before_first_plan", "plan_of"]

_first_plan_hooks: list[Callable[[], None]] = []
_first_plan_lock = threading.Lock()


def before_first_plan(hook: Callable[[], None]) -> None:
    """Have ``hook`` called once, before the first ``CallPlan`` of the process is made.

    The invocation engine imports the parts a call needs then (see ``_invoke``): every call
    of a tool goes through its plan, so they are in place before any call needs them.
    """
    # A hook registered once plans exist (the engine is imported when ``Tool.invoke`` is
    # first read, perhaps after a plan was made directly) runs at once instead.
    with _first_plan_lock:
        if not _planned:
            _first_plan_hooks.append(hook)
            return
    hook()


_planned = False
"""Whether the first plan of the process was made (its hooks ran)."""


def _run_first_plan_hooks() -> None:
    # The list is emptied only once every hook has run: a thread that finds it empty knows
    # they are done, one that finds it not empty waits here for them.
    global _planned
    with _first_plan_lock:
        for hook in _first_plan_hooks:
            hook()
        _first_plan_hooks.clear()
        _planned = True


class CallPlan:
    """What a call of one tool needs, computed once, on its first call."""

    __slots__ = (
        "_compiled",
        "bool_params",
        "closed",
        "context_param",
        "fast",
        "fixed",
        "fixed_calls",
        "gate",
        "gate_limits",
        "inline_checks",
        "kinds",
        "number_params",
        "out_simple",
        "override_checks",
        "params",
        "secret_params",
        "unbound",
        "validate",
    )

    def __init__(self, tool: ToolDefinition) -> None:
        if not _planned:
            _run_first_plan_hooks()
        from toolpacks.core._jsonargs import DEFAULT_LIMITS
        from toolpacks.core._kinds import compile_kind_checks, flat_kinds
        from toolpacks.core.call import _watchdog

        sig = tool.signature
        schema = tool.input_schema
        self.context_param = sig.context_param if sig else _annotated_context(tool.fn)
        self.kinds = compile_kind_checks(schema)
        # For a tool whose checks are all on top-level parameters, the short path inlines
        # them: the number and the boolean parameters (None: some check is nested).
        flat = flat_kinds(schema) if self.kinds is not None else {}
        self.number_params = (
            None if flat is None else frozenset(k for k, number in flat.items() if number)
        )
        self.bool_params = frozenset(k for k, number in (flat or {}).items() if not number)
        self.params = frozenset(sig.params if sig else schema.get("properties") or ())
        # Whether undeclared arguments can be dropped when a host asks to ignore them: not for
        # ``**kwargs`` functions, nor for schemas that leave the object open.
        if sig is not None:
            self.closed = not sig.var_keyword
        else:
            extra = schema.get("additionalProperties")
            self.closed = extra is False or (extra is None and bool(self.params))
        # The short path checks values inline when all checks are top-level and the tool is
        # closed (its validator refuses undeclared keys, so keys need no look).
        self.inline_checks = self.number_params is not None and self.closed
        self.fixed = dict(tool.fixed_kwargs)
        self.fixed_calls = frozenset(k for k, v in self.fixed.items() if callable(v))
        self.override_checks = _override_checks(tool) if self.fixed else {}
        self.secret_params = _secret_params(tool)
        self.unbound = sig is not None and sig.skips_first and tool._bound_to is None
        # A return value of exactly the declared scalar type needs no output check, and no
        # check that it can be sent as JSON either.
        out = tool._output_type
        self.out_simple = out if out in (str, int, float, bool) else None
        if tool.kind in ("coroutine", "async_generator") and not _watchdog.running:
            _watchdog.start()  # the watchdog that notices async tools blocking their loop
        # Calls of most tools need nothing but validation and the call itself; ``invoke``
        # takes a short path for them (hooks and options are checked per call).
        self.fast = (
            tool.kind in ("coroutine", "function")
            and tool.lock is None
            and tool.timeout is None
            and not self.fixed
            and self.context_param is None
            and not self.unbound
            and not self.secret_params
            and not tool.scopes
        )
        if sig is not None:
            validator = sig.validator
            if tool.strict:
                # Strict means JSON's strict mode: no "3" for 3, but an enum value, an ISO
                # date or an array for a tuple are what JSON can send, so they are accepted.
                from pydantic_core import to_json

                def validate_strict(arguments: Any) -> dict[str, Any]:
                    result: dict[str, Any] = validator.validate_json(to_json(arguments))
                    return result

                self.validate: Callable[[Any], dict[str, Any]] = validate_strict
            else:
                self.validate = validator.validate_python  # pydantic-core's, no Python layer
            if tool.extra_args == "reject":
                self.validate = _closed_nested(self.validate, sig.input_schema)
        else:
            from toolpacks.core.call._schema_validator import schema_validator

            self.validate = schema_validator(schema, tool.extra_args, tool.strict)
        # Every gate check compiled into a second validator, for the arguments it can bound
        # (``_gate_compiled``); valid for calls whose limits are ``gate_limits``.
        self._compiled = _compile_gate(tool)
        self.gate = self._compiled.validate if self._compiled is not None else None
        self.gate_limits = DEFAULT_LIMITS

    def gate_for(self, limits: ArgumentLimits) -> Callable[[Any], dict[str, Any]] | None:
        """The compiled gate if it holds under ``limits`` (kept as ``gate_limits``), else None."""
        if limits is self.gate_limits:
            return self.gate
        if self._compiled is None or not self._compiled.fits(limits):
            return None
        self.gate_limits = limits
        return self.gate


def _compile_gate(tool: ToolDefinition) -> CompiledGate | None:
    sig = tool.signature
    if sig is None or tool.strict or sig.arguments_core is None:
        return None  # strict tools validate JSON text, which this validator does not
    from toolpacks.core._jsonargs import DEFAULT_LIMITS
    from toolpacks.core.call._gate_compiled import compile_gate

    return compile_gate(sig.arguments_core, DEFAULT_LIMITS)


def _closed_nested(
    validate: Callable[[Any], dict[str, Any]], schema: dict[str, Any]
) -> Callable[[Any], dict[str, Any]]:
    """``validate``, refusing unknown fields of nested objects first (``_nested_extra``)."""
    from toolpacks.core.define._nested_extra import nested_checker

    check = nested_checker(schema)
    if check is None:
        return validate

    def validate_closed(arguments: Any) -> dict[str, Any]:
        check(arguments)
        return validate(arguments)

    return validate_closed


def _override_checks(tool: ToolDefinition) -> dict[str, Callable[[Any], Any]]:
    """Validators for call-time values overriding fixed kwargs, from the parameters' types."""
    from pydantic import ConfigDict, TypeAdapter

    from toolpacks.core.define._hints import type_hints

    try:
        hints = type_hints(tool.fn)
    except Exception:
        return {}
    checks: dict[str, Callable[[Any], Any]] = {}
    for name in tool.fixed_kwargs:
        annotation = hints.get(name)
        if annotation is None or annotation is Any:
            continue
        for config in (None, ConfigDict(arbitrary_types_allowed=True)):
            try:
                checks[name] = TypeAdapter(annotation, config=config).validate_python
                break
            except Exception:  # a type pydantic cannot validate: the value goes through as is
                continue
    return checks


def _annotated_context(fn: Callable[..., Any]) -> str | None:
    """A schema-only tool's parameter annotated ``ToolContext`` (typed tools: ``analyze``)."""
    try:
        parameters = inspect.signature(fn, eval_str=True).parameters.values()
    except Exception:
        return None
    return next((p.name for p in parameters if _is_context(p.annotation)), None)


def _secret_params(tool: ToolDefinition) -> frozenset[str]:
    """The parameters a schema marks secret, inferred or written by hand (the model's).

    ``SecretStr`` gives ``format: password``; a plain ``str`` is marked by ``writeOnly``.
    """
    sig = tool.signature
    schemas = [tool.input_schema] if sig is None else [sig.input_schema, tool.input_schema]
    return frozenset(
        name
        for schema in schemas
        for name, prop in _properties(schema)
        if prop.get("format") == "password" or prop.get("writeOnly") is True
    )


def _properties(schema: Any) -> list[tuple[str, dict[str, Any]]]:
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return []
    return [(k, v) for k, v in properties.items() if isinstance(v, dict)]


def plan_of(tool: ToolDefinition) -> CallPlan:
    plan: CallPlan | None = tool._plan
    if plan is None:
        plan = tool._plan = CallPlan(tool)
    return plan
