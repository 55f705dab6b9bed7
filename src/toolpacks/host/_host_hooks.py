"""Hooks a host's own code registers (``Host.hook``), called like pluggy calls a pack's."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from toolpacks.core._hooks import GlobalHook
from toolpacks.packs.entrypoints._loading import ImplCaller

__all__ = ["HOOK_ARGS", "TaggedAuthorizer", "host_hook_caller", "registrar"]


HOOK_ARGS: dict[str, tuple[str, ...]] = {
    "before_invoke": ("tool", "arguments", "context"),
    "after_invoke": ("tool", "result", "context"),
    "on_error": ("tool", "exc", "context"),
    "on_yield": ("tool", "item", "context"),
    "authorize": ("tool", "arguments", "context"),
}


def host_hook_caller(event: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``fn`` to receive only the arguments it declares, as pluggy does for packs.

    Raises:
        TypeError: ``fn`` declares a parameter the event does not provide.
    """
    allowed = HOOK_ARGS[event]
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: give it everything
        return fn
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return fn
    names = tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    required = [p.name for p in params if p.default is p.empty and p.kind is not p.VAR_POSITIONAL]
    unknown = [n for n in required if n not in allowed]
    if unknown:
        raise TypeError(
            f"{event} hook {getattr(fn, '__qualname__', fn)!r} takes {', '.join(unknown)}; "
            f"{event} hooks are called with keyword arguments {', '.join(allowed)}"
        )
    return ImplCaller(fn, tuple(n for n in names if n in allowed))


@dataclass(frozen=True, slots=True)
class TaggedAuthorizer:
    """An ``authorize`` hook that answers only for tools sharing one of its tags."""

    fn: Callable[..., Any]
    tags: frozenset[str]

    def __call__(self, **kwargs: Any) -> Any:
        tool = kwargs.get("tool")
        if tool is not None and self.tags.isdisjoint(tool.tags):
            return None
        return self.fn(**kwargs)


def registrar(
    event: str,
    tags: Iterable[str] | str,
    hooks: list[GlobalHook],
    authorizers: list[Callable[..., Any]],
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The decorator ``Host.hook(event, tags=...)`` returns: it appends to the host's lists.

    Raises:
        ValueError: ``event`` is not one of ``HOOK_ARGS``.
    """
    if event not in HOOK_ARGS:
        raise ValueError(f"unknown hook event {event!r}; use one of: {', '.join(HOOK_ARGS)}")
    tag_set = frozenset((tags,) if isinstance(tags, str) else tags)

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        caller = host_hook_caller(event, fn)
        if event == "authorize":
            authorizers.append(caller if not tag_set else TaggedAuthorizer(caller, tag_set))
        else:
            hooks.append(GlobalHook(event, caller, tag_set))
        return fn

    return register
