"""Per-tool hooks and the global hook set applied around every invocation.

Per-tool hooks are registered on a tool with ``@t.before_invoke`` and friends and fire only for
that tool. Global hooks come from packs (through pluggy) and from the host; a toolset filters
them by tag once, when it is built, so a call pays nothing for hooks that do not apply.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["GlobalHook", "HookSet", "ToolHooks", "call_hook"]


@dataclass(slots=True)
class ToolHooks:
    """The hooks registered on one tool, in registration order."""

    before: list[Callable[..., Any]] = field(default_factory=list)
    """Called with the call's keyword arguments before the tool runs."""
    after: list[Callable[..., Any]] = field(default_factory=list)
    """Called with the return value (a generator's list of items) after a successful run."""
    error: list[Callable[..., Any]] = field(default_factory=list)
    """Called with ``exc=`` when the tool raises."""
    on_yield: list[Callable[..., Any]] = field(default_factory=list)
    """Called with each item a generator tool yields."""

    def copy(self) -> ToolHooks:
        """A copy whose lists can grow independently."""
        return ToolHooks(list(self.before), list(self.after), list(self.error), list(self.on_yield))

    def __bool__(self) -> bool:
        return bool(self.before or self.after or self.error or self.on_yield)


@dataclass(frozen=True, slots=True)
class GlobalHook:
    """A hook that fires for many tools, optionally only those sharing one of ``tags``."""

    event: str
    """One of ``before_invoke``, ``after_invoke``, ``on_error``, ``on_yield``."""
    fn: Callable[..., Any]
    """Called with keyword arguments ``tool``, ``context`` and the event's payload
    (``arguments``, ``result``, ``exc`` or ``item``)."""
    tags: frozenset[str] = frozenset()
    """Fire only for tools with at least one of these tags; empty means every tool."""

    def applies_to(self, tool_tags: frozenset[str]) -> bool:
        """Whether this hook fires for a tool with ``tool_tags`` (any overlap)."""
        return not self.tags or not self.tags.isdisjoint(tool_tags)


@dataclass(frozen=True, slots=True)
class HookSet:
    """The global hooks that apply to one tool, grouped by event."""

    before: tuple[Callable[..., Any], ...] = ()
    """``before_invoke(tool=, arguments=, context=)`` hooks."""
    after: tuple[Callable[..., Any], ...] = ()
    """``after_invoke(tool=, result=, context=)`` hooks."""
    error: tuple[Callable[..., Any], ...] = ()
    """``on_error(tool=, exc=, context=)`` hooks."""
    on_yield: tuple[Callable[..., Any], ...] = ()
    """``on_yield(tool=, item=, context=)`` hooks."""

    @classmethod
    def for_tags(cls, hooks: Iterable[GlobalHook], tags: frozenset[str]) -> HookSet:
        """The hooks among ``hooks`` that apply to a tool tagged ``tags``."""
        groups: dict[str, list[Callable[..., Any]]] = {
            "before_invoke": [],
            "after_invoke": [],
            "on_error": [],
            "on_yield": [],
        }
        for hook in hooks:
            if hook.applies_to(tags):
                groups[hook.event].append(hook.fn)
        if not any(groups.values()):
            return EMPTY_HOOKS  # the short path of a call recognises this very object
        return cls(
            tuple(groups["before_invoke"]),
            tuple(groups["after_invoke"]),
            tuple(groups["on_error"]),
            tuple(groups["on_yield"]),
        )

    def __bool__(self) -> bool:
        return bool(self.before or self.after or self.error or self.on_yield)


EMPTY_HOOKS = HookSet()


async def call_hook(hook: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Call a sync or async hook; its exceptions propagate to the caller."""
    outcome = hook(*args, **kwargs)
    if inspect.isawaitable(outcome):
        await outcome
