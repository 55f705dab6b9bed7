"""What every framework adapter needs: the framework import, calls, approvals, result values.

A small, stable helper for the modules of ``toolpacks.integrations`` (private to the package):

- ``framework_missing(framework, extra, cause)`` is the ``ImportError`` to raise when the
  framework cannot be imported: it names the extra to install;
- ``call(toolset, name, arguments, call_id=..., approved=...)`` runs a call through
  ``Toolset.call`` (so the gate, permissions, approvals, hooks, timeouts and pinning apply)
  and, when the toolset has no approval handler, reports an approval toolpacks asked for
  instead of denying it, so that the adapter can hand it to the framework's own approval
  mechanism (``Outcome.approval``);
- ``probe(toolset, name, arguments, call_id=...)`` asks the ``authorize`` hooks about a call
  without running it, for frameworks that decide whether to pause before they invoke a tool
  (openai-agents' ``needs_approval``, LangChain's human-in-the-loop middleware); ``call``
  then replays the hooks' answer (``answer=``) rather than asking them twice;
- ``model_value(result, toolset, name)`` is the value a framework that takes structured tool
  output should get: ``ToolResult.value``, or the capped text when the value is too long;
- ``plain_entry(toolset, name)`` and ``plain_result(result, entry, name, call_id)`` let
  an adapter skip ``Toolset.call`` for a call that needs nothing of it but the run (no
  tracer, no ``authorize`` hook, no approval, no agent restriction, not deferred): the same
  run and the same result, without the steps that would do nothing.
"""

from __future__ import annotations

import copy
import inspect
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from toolpacks.core._content import has_content
from toolpacks.core._context import ToolContext
from toolpacks.core._hooks import EMPTY_HOOKS
from toolpacks.core._principal import Principal
from toolpacks.core._result import ToolResult
from toolpacks.core.call._plan import plan_of
from toolpacks.exceptions import ToolNotFoundError
from toolpacks.host._approval import ApprovalRequest, Approver
from toolpacks.host._call_shapes import renamed_error
from toolpacks.host._toolset import ToolEntry, Toolset

__all__ = [
    "Outcome",
    "Verdict",
    "Verdicts",
    "call",
    "framework_missing",
    "may_ask",
    "model_value",
    "plain_entry",
    "plain_result",
    "principal_context",
    "principal_of",
    "probe",
]

_UNSET: Any = object()


def framework_missing(framework: str, extra: str, cause: ImportError) -> ImportError:
    """The error an adapter raises when its framework is not installed.

    Use it where the adapter imports its framework::

        try:
            import pydantic_ai
        except ImportError as exc:
            raise framework_missing("pydantic-ai", "pydantic-ai", exc) from exc

    Args:
        framework: The framework's name, for the message.
        extra: The toolpacks extra that installs it (``"pydantic-ai"``).
        cause: The original ``ImportError``.
    """
    return ImportError(
        f"toolpacks' {framework} integration needs {framework}, which could not be imported "
        f"({cause}); install it with: pip install 'toolpacks[{extra}]'"
    )


class Outcome(NamedTuple):
    """What ``call`` returns: the result, and the approval it is waiting for, if any."""

    result: ToolResult
    """The call's result (a "denied" error result while approval is pending)."""
    approval: ApprovalRequest | None = None
    """The approval toolpacks asked for and the framework has not given; None otherwise."""


class _Deferral:
    """An approval handler for one call: records the request, answers with ``approved``."""

    __slots__ = ("approved", "request")

    def __init__(self, approved: bool) -> None:
        self.approved = approved
        self.request: ApprovalRequest | None = None

    def __call__(self, request: ApprovalRequest) -> bool:
        self.request = request
        return self.approved


async def call(
    toolset: Toolset,
    name: str,
    arguments: Mapping[str, Any] | str | bytes | None,
    *,
    call_id: str | None = None,
    approved: bool = False,
    answer: object = _UNSET,
    context: ToolContext | None = None,
) -> Outcome:
    """Run ``name`` through ``toolset.call``, with approvals left to the framework if need be.

    When the toolset has an approval handler, it decides, as in every call. When it has none,
    an approval the call needs (a tool that requires it, an ``authorize`` hook answering
    "ask") is answered with ``approved`` and, when that is False, reported in
    ``Outcome.approval`` so the adapter can ask its framework's user; the arguments have
    passed the gate and validation by then, and no tool code or hook has run.

    Args:
        toolset: The toolset.
        name: The exposed (or qualified) tool name.
        arguments: The arguments as the model sent them (JSON text or a mapping).
        call_id: The framework's tool-call id.
        approved: Whether the framework's user has approved this call already.
        answer: The ``authorize`` hooks' answer ``probe`` recorded for this call (its
            ``Verdict.answer``): it stands in for the hooks, which are not asked again.
        context: The call's ``ToolContext`` (its invocation state...), if the adapter has one.
    """
    target = toolset
    if answer is not _UNSET:
        target = copy.copy(toolset)
        target.authorizers = () if answer is None else (_Replay(answer),)
    deferral: _Deferral | None = None
    if toolset.approver.handler is None and may_ask(toolset, name):
        # A copy of the toolset for this one call, with a handler that records the request;
        # "always" answers stay shared with the original.
        deferral = _Deferral(approved)
        target = copy.copy(target)
        target.approver = Approver(deferral, toolset.approver.always)
    result = await target.call(name, arguments, context, call_id=call_id)
    if deferral is not None and deferral.request is not None and not approved:
        return Outcome(result, deferral.request)
    return Outcome(result)


class Verdict(NamedTuple):
    """What toolpacks will decide for one call, found by ``probe`` before it runs."""

    answer: object
    """The ``authorize`` hooks' first answer other than None (None when none answered)."""
    ask: bool
    """Whether toolpacks asks for approval: a hook answered "ask", or the tool requires it
    and no hook denied the call."""


class _Replay:
    """An ``authorize`` hook that gives the answer the real hooks gave in ``probe``."""

    __slots__ = ("answer",)

    def __init__(self, answer: object) -> None:
        self.answer = answer

    def __call__(self, **_: Any) -> Any:
        return self.answer


class _Recorder:
    """An ``authorize`` hook that asks the real ones, records their answer, and stops."""

    __slots__ = ("answer", "authorizers", "reached")

    def __init__(self, authorizers: tuple[Any, ...]) -> None:
        self.authorizers = authorizers
        self.answer: object = None
        self.reached = False

    async def __call__(self, **kwargs: Any) -> Literal["deny"]:
        self.reached = True
        for authorizer in self.authorizers:  # as Toolset.call asks them: first answer wins
            answer = authorizer(**kwargs)
            if inspect.isawaitable(answer):
                answer = await answer
            if answer is not None:
                self.answer = answer
                break
        return "deny"  # a probe never runs the tool


async def probe(
    toolset: Toolset,
    name: str,
    arguments: Mapping[str, Any] | str | bytes | None,
    *,
    call_id: str | None = None,
) -> Verdict | None:
    """What toolpacks will decide for a call, without running it.

    The call goes through ``Toolset.call`` up to the ``authorize`` hooks (lookup, agent
    permissions, the gate and validation), the hooks are asked as a call asks them, and the
    call stops there: no tool code or ``before_invoke`` hook runs.

    Returns:
        The hooks' answer and whether toolpacks asks for approval; None when the call fails
        before the hooks are asked (an unknown tool, invalid arguments...): no person should
        be asked about it, and the call reports the error when it runs.
    """
    recorder = _Recorder(toolset.authorizers)
    target = copy.copy(toolset)
    target.authorizers = (recorder,)
    target.tracer = None  # a probe is not a call: it leaves no span
    await target.call(name, arguments, call_id=call_id)
    if not recorder.reached:
        return None
    answer = recorder.answer
    if answer not in (None, "allow", "ask"):
        return Verdict(answer, False)  # denied (or an answer Toolset.call refuses)
    return Verdict(answer, answer == "ask" or toolset.entry(name).require_approval)


class Verdicts:
    """The verdicts of calls a framework paused for, by call id, until each call runs.

    Bounded: verdicts of calls that never run (rejected, abandoned) are forgotten oldest
    first, and such a call, if it ever runs, asks the hooks again.
    """

    def __init__(self, limit: int = 4096) -> None:
        self._verdicts: OrderedDict[str, Verdict] = OrderedDict()
        self._limit = limit

    def put(self, call_id: str, verdict: Verdict) -> None:
        """Keep ``verdict`` for the call ``call_id``."""
        self._verdicts[call_id] = verdict
        self._verdicts.move_to_end(call_id)
        while len(self._verdicts) > self._limit:
            self._verdicts.popitem(last=False)

    def get(self, call_id: str) -> Verdict | None:
        """The verdict kept for ``call_id``, if any."""
        return self._verdicts.get(call_id)

    def pop(self, call_id: str) -> Verdict | None:
        """The verdict kept for ``call_id``, forgotten now (the call runs)."""
        return self._verdicts.pop(call_id, None)


def plain_entry(toolset: Toolset, name: str) -> tuple[ToolEntry, bool] | None:
    """The entry of ``name`` when ``Toolset.call`` would do nothing for it but run the tool.

    That is: the toolset has no tracer and no ``authorize`` hooks, and the tool needs no
    approval, is open to every agent and is not a placeholder still to be imported. None
    otherwise (or for an unknown name): the call must take ``Toolset.call``. Read on every
    call, so a hook or tracer added later is never skipped.

    With the entry comes whether the call takes the core's short path, which reads nothing
    of the call's context but its id (the tool has a plan without a context parameter, lock,
    timeout or secrets, and no hooks apply): such a call can be given no context at all, and
    its id put on the result after (``plain_result``). Making a ``ToolContext`` would be
    half of such a call's time.
    """
    if toolset.tracer is not None or toolset.authorizers or toolset.principal is not None:
        return None  # a principal's view: Toolset.call puts it in the context
    entry = toolset._entries.get(name) or toolset._by_qualified.get(name)
    if entry is None or entry.require_approval or _identity_matters(toolset, entry.exposed):
        return None
    tool = entry.tool
    if tool.allowed_agents is not None or tool.deferred or tool.credentials:
        return None  # credentials: resolved for the principal by Toolset.call
    plan, options, hooks = tool._plan or plan_of(tool), entry.options, tool.hooks
    short = (
        plan.fast
        and options.hooks is EMPTY_HOOKS
        and options.extra_args is None
        and not (hooks.before or hooks.after or hooks.error or hooks.on_yield)
    )
    return entry, short


def _identity_matters(toolset: Toolset, exposed: str) -> bool:
    """Whether a call of ``exposed`` needs ``Toolset.call``'s scope check or audit record."""
    import logging

    table = toolset.scope_table
    if table.agent or exposed in table.tools:
        return True
    return logging.getLogger("toolpacks.audit").isEnabledFor(logging.INFO)


def principal_of(source: object) -> Principal | None:
    """The principal a framework's per-run object carries, or None.

    ``source`` is a ``Principal``; a ``ToolContext`` (its principal); a mapping with a
    ``"principal"`` key; or an object with a ``principal`` attribute (pydantic-ai's
    ``RunContext.deps``, openai-agents' ``RunContextWrapper.context``, langchain's
    ``config["configurable"]``).
    """
    if source is None or isinstance(source, Principal):
        return source
    found = source.get("principal") if isinstance(source, Mapping) else None
    if found is None and not isinstance(source, Mapping):
        found = getattr(source, "principal", None)
    return found if isinstance(found, Principal) else None


def principal_context(source: object, call_id: str | None = None) -> ToolContext | None:
    """A ``ToolContext`` naming the principal ``source`` carries (``principal_of``), or None."""
    principal = principal_of(source)
    if principal is None:
        return None
    return ToolContext(principal=principal, call_id=call_id or "")


def plain_result(
    result: ToolResult, entry: ToolEntry, name: str, call_id: str | None
) -> ToolResult:
    """``result`` of a call made without ``Toolset.call``, as ``Toolset.call`` returns it.

    It carries the framework's call id (when the call had no context) and names the tool as
    the model called it.
    """
    if call_id:
        result.call_id = call_id
    if result.tool_name != name:
        result.tool_name = name
        if result.error is not None:
            result = renamed_error(result, entry.tool.name, name)
    return result


def may_ask(toolset: Toolset, name: str) -> bool:
    """Whether a call of ``name`` can need approval (the tool requires it, or a hook may ask)."""
    if toolset.authorizers:
        return True
    try:
        return toolset.entry(name).require_approval
    except ToolNotFoundError:
        return False


def model_value(result: ToolResult, toolset: Toolset, name: str) -> Any:
    """The value to give a framework that takes structured tool output.

    ``ToolResult.value`` for a successful call whose text fits the call's
    ``max_content_chars``; otherwise ``ToolResult.content``, the text the model would get
    (the error message, or the value truncated with a marker). Result caps thus apply to
    structured values as they do to text. Images and resources give their text stand-in.

    Args:
        result: A result of ``toolset.call``.
        toolset: The toolset that made it (for the call's limits).
        name: The name it was called by.
    """
    value = result.value
    kind = type(value)
    if not result.is_error and (kind is int or kind is bool or value is None):
        return value
    text = result.content
    if result.is_error or kind is str or has_content(value):  # images: their text stand-in
        return text
    limit = toolset.entry(name).options.max_content_chars  # a successful call names a tool
    if limit and len(text) > limit:
        return text
    if kind is float and value - value != 0.0:  # NaN or infinity: JSON has no such number
        return None
    return value
