"""A toolpacks ``Toolset`` as a pydantic-ai toolset: ``Agent(model, toolsets=[as_toolset(ts)])``.

Every call goes through ``Toolset.call``, so the gate, permissions, approvals, hooks, timeouts
and pinning apply. pydantic-ai's own argument validation is left to toolpacks: the text the
model sent reaches toolpacks' gate as it was sent (duplicate keys and all), and an error comes
back in pydantic-ai's idiom:

- invalid arguments (or an unknown tool) raise ``ModelRetry`` carrying toolpacks' message, so
  the model corrects the call and retries (within the tool's retry budget);
- any other failure (the tool raised, timed out, was denied, returned an invalid value) raises
  ``ToolFailed`` with toolpacks' message: the model sees it, and no retry is asked for;
- an approval toolpacks asks for while the toolset has no approval handler raises
  ``ApprovalRequired``, so the run ends with ``DeferredToolRequests`` and the application
  approves or denies through ``DeferredToolResults`` (a handler set on the toolset decides
  instead, as for every toolpacks call);
- a successful call returns ``ToolResult.value`` itself (structured values stay structured),
  or the capped text when it is longer than the call's ``max_content_chars``.

Requires the ``pydantic-ai`` extra: ``pip install 'toolpacks[pydantic-ai]'``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NoReturn

from pydantic_core import from_json

from toolpacks.core._jsonargs import DEFAULT_LIMITS, ArgumentLimits, quick_parse
from toolpacks.core._result import ToolResult
from toolpacks.host._toolset import Toolset
from toolpacks.integrations._common import (
    call,
    framework_missing,
    model_value,
    plain_entry,
    plain_result,
    principal_context,
)

try:
    from pydantic_ai import RunContext
    from pydantic_ai.exceptions import ApprovalRequired, ModelRetry, ToolFailed
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
except ImportError as exc:  # pragma: no cover - tested in a subprocess without the framework
    raise framework_missing("pydantic-ai", "pydantic-ai", exc) from exc

__all__ = ["ToolpacksToolset", "as_toolset"]

_RETRY_KINDS = frozenset({"invalid_arguments", "not_found"})
"""Error kinds the model can fix by calling again differently (``ModelRetry``)."""

Partial = bool | Literal["off", "on", "trailing-strings"]


class _SentArguments(dict[str, Any]):
    """Arguments as pydantic-ai sees them, still holding the text the model sent.

    The text goes to toolpacks' gate (which checks what parsing would hide, such as duplicate
    keys) unless something in pydantic-ai (a capability's validation hook) changed the dict.
    """

    __slots__ = ("sent",)

    sent: str | bytes | bytearray


def _parse(sent: str | bytes | bytearray, allow_partial: Partial = False) -> dict[str, Any]:
    try:
        parsed = from_json(sent, allow_partial=allow_partial)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


class _ArgumentsValidator:
    """pydantic-ai's ``args_validator`` slot: parses, and leaves validation to toolpacks.

    Text that passes toolpacks' checks of text at once (``quick_parse``: size, depth,
    duplicate keys, non-finite literals, under the tool's own limits) is parsed once, here,
    and the plain dict stands for it from then on: its values get the checks every dict gets.
    Any other text is kept beside what it parses to (``_SentArguments``), so that toolpacks'
    gate words the refusal from the text itself.
    """

    __slots__ = ("limits",)

    def __init__(self, limits: ArgumentLimits = DEFAULT_LIMITS) -> None:
        self.limits = limits

    def validate_json(
        self, input: str | bytes | bytearray, *, allow_partial: Partial = False, **kwargs: Any
    ) -> Any:
        if type(input) is str and not allow_partial:
            checked = quick_parse(input, self.limits)
            if checked is not None:
                return checked
        arguments = _SentArguments(_parse(input, allow_partial))
        arguments.sent = input
        return arguments

    def validate_python(self, input: Any, *, allow_partial: Partial = False, **kwargs: Any) -> Any:
        return input  # pydantic-ai's own parse of the model's arguments: toolpacks checks it


def _arguments(tool_args: Mapping[str, Any]) -> Mapping[str, Any] | str | bytes:
    """The model's own text when pydantic-ai passed the parsed arguments on unchanged."""
    if type(tool_args) is _SentArguments and tool_args == _parse(tool_args.sent):
        sent = tool_args.sent
        return bytes(sent) if isinstance(sent, bytearray) else sent
    return tool_args


class ToolpacksToolset(AbstractToolset[Any]):
    """A pydantic-ai toolset that runs the tools of a toolpacks ``Toolset``.

    Make one with :func:`as_toolset`. Tool definitions are read from the toolset once, on
    first use: the exposed names, descriptions (with instructions) and input schemas.
    """

    def __init__(
        self,
        toolset: Toolset,
        *,
        id: str | None = None,
        strict: bool | None = None,
        max_retries: int | None = None,
    ) -> None:
        if not isinstance(toolset, Toolset):
            raise TypeError(
                f"as_toolset() takes a toolpacks Toolset, got {type(toolset).__name__}; "
                "build one with Host().toolset(...) or Toolset([...])"
            )
        if max_retries is not None and max_retries < 0:
            raise ValueError(f"max_retries must be at least 0, got {max_retries}")
        self.toolset = toolset
        """The toolpacks toolset every call goes through."""
        self.strict = strict
        """``ToolDefinition.strict`` of every tool (None lets pydantic-ai decide per model)."""
        self.max_retries = max_retries
        """Retries after invalid arguments (None: the agent's setting)."""
        self._id = id
        self._definitions: list[ToolDefinition] | None = None
        self._validators: dict[str, _ArgumentsValidator] = {}

    @property
    def id(self) -> str | None:
        """The id given to ``as_toolset`` (needed for durable execution), or None."""
        return self._id

    @property
    def label(self) -> str:
        """The name of this toolset in pydantic-ai's error messages."""
        agent = self.toolset.agent
        own = f"toolpacks toolset of agent {agent!r}" if agent else "toolpacks toolset"
        return f"{own} ({self._id!r})" if self._id else own

    def tool_definitions(self) -> list[ToolDefinition]:
        """The pydantic-ai definition of every tool, in the toolset's order."""
        if self._definitions is None:
            entries = self.toolset.entries()
            neutral = self.toolset.definitions("neutral", defer=False)
            self._definitions = [
                ToolDefinition(
                    name=entry.exposed,
                    parameters_json_schema=spec["input_schema"],
                    description=spec["description"] or None,
                    strict=self.strict,
                    defer_loading=entry.deferred,  # pydantic-ai's own tool search reveals it
                    metadata={
                        "toolpacks": {
                            "qualified_name": entry.qualified,
                            "pack": entry.pack,
                            "tags": sorted(entry.tool.tags),
                            "require_approval": entry.require_approval,
                        }
                    },
                )
                for entry, spec in zip(entries, neutral, strict=True)
            ]
            self._validators = {e.exposed: _ArgumentsValidator(e.options.limits) for e in entries}
        return self._definitions

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """The tools, as pydantic-ai lists them for a run step."""
        retries = self.max_retries if self.max_retries is not None else ctx.max_retries
        definitions = self.tool_definitions()
        validators = self._validators
        return {
            definition.name: ToolsetTool(
                toolset=self,
                tool_def=definition,
                max_retries=retries,
                args_validator=validators[definition.name],
            )
            for definition in definitions
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        """Run one call through ``Toolset.call`` and answer in pydantic-ai's idiom.

        Raises:
            ModelRetry: The arguments are invalid; the message is toolpacks'.
            ToolFailed: The call failed (the tool raised, timed out, was denied...).
            ApprovalRequired: The call needs approval, the toolset has no handler, and the
                application has not approved it yet.
        """
        toolset, call_id = self.toolset, ctx.tool_call_id
        arguments = tool_args if type(tool_args) is not _SentArguments else _arguments(tool_args)
        context = principal_context(ctx.deps, call_id)  # deps: a Principal, or carrying one
        plain = plain_entry(toolset, name) if context is None else None
        if plain is not None:  # nothing to authorize or approve: the run alone
            entry, short = plain
            context = None if short else toolset._context(None, call_id)
            result = await entry.tool.invoke(arguments, context, options=entry.options)
            if result.error is None:
                return model_value(result, toolset, name)
            self._failed(plain_result(result, entry, name, context.call_id if context else call_id))
        outcome = await call(
            toolset,
            name,
            arguments,
            call_id=call_id,
            approved=ctx.tool_call_approved,
            context=context,
        )
        if outcome.approval is not None:
            request = outcome.approval
            raise ApprovalRequired(
                metadata={
                    "qualified_name": request.qualified_name,
                    "reason": request.reason,
                    "arguments": dict(request.arguments),
                }
            )
        result = outcome.result
        if result.error is not None:
            self._failed(result)
        return model_value(result, toolset, name)

    @staticmethod
    def _failed(result: ToolResult) -> NoReturn:
        """Raise the failed call's error in pydantic-ai's idiom (retry when fixable)."""
        assert result.error is not None
        if result.error.kind in _RETRY_KINDS:
            raise ModelRetry(result.content)
        raise ToolFailed(result.content)


def as_toolset(
    toolset: Toolset,
    *,
    id: str | None = None,
    strict: bool | None = None,
    max_retries: int | None = None,
) -> ToolpacksToolset:
    """The tools of ``toolset`` as a pydantic-ai toolset.

    Args:
        toolset: A toolpacks toolset (``Host().toolset("agent")``, ``Toolset([...])``).
        id: The pydantic-ai toolset id (needed for durable execution, e.g. Temporal).
        strict: ``ToolDefinition.strict`` for every tool; None (the default) lets pydantic-ai
            decide per model (OpenAI: strict when the schema allows it).
        max_retries: How many times the model may retry a call whose arguments were invalid;
            None uses the agent's ``retries``.

    Returns:
        The toolset, for ``Agent(model, toolsets=[...])``.

    Raises:
        TypeError: ``toolset`` is not a toolpacks ``Toolset``.
        ValueError: ``max_retries`` is negative.

    Example:
        >>> from pydantic_ai import Agent
        >>> from pydantic_ai.models.test import TestModel
        >>> from toolpacks import Toolset, tool
        >>> @tool
        ... def add(a: int, b: int) -> int:
        ...     '''Add two integers.'''
        ...     return a + b
        >>> agent = Agent(TestModel(), toolsets=[as_toolset(Toolset([add]))])
        >>> agent.run_sync("add 1 and 2").output
        '{"add":0}'
    """
    return ToolpacksToolset(toolset, id=id, strict=strict, max_retries=max_retries)
