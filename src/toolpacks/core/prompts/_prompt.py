"""A prompt: a named message template with arguments, and the ``@prompt`` decorator.

A prompt's function takes its arguments as keyword strings and returns its messages: a
string (one user message), a ``PromptMessage``, a content object (``Image``,
``EmbeddedResource``, ...; one user message), or a list of those. It may be a coroutine
function. Arguments come from the function's parameters: one without a default is required,
and the Google docstring's ``Args:`` section describes each.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

__all__ = ["Completer", "Prompt", "PromptArgument", "PromptMessage", "prompt"]

Completer = Callable[[str, str], "Sequence[str] | Awaitable[Sequence[str]]"]
"""Completes an argument: ``(argument name, partial value) -> candidate values``."""


@dataclass(frozen=True, slots=True)
class PromptArgument:
    """One argument a prompt takes (always a string over MCP)."""

    name: str
    """The argument's name."""
    description: str | None = None
    """What the argument is for."""
    required: bool = False
    """Whether ``get_prompt`` refuses a call without it."""


@dataclass(frozen=True, slots=True)
class PromptMessage:
    """One message of a prompt: who says it, and its content."""

    role: Literal["user", "assistant"]
    """``"user"`` or ``"assistant"``."""
    content: Any
    """Text, or a content object (``Image``, ``Audio``, ``EmbeddedResource``, ``ResourceLink``)."""


@dataclass(frozen=True, slots=True)
class Prompt:
    """A prompt a pack offers: ``name``, its arguments, and the function giving its messages."""

    name: str
    """The prompt's name (served as is; qualified by its pack for selection)."""
    fn: Callable[..., Any]
    """Called with the arguments as keywords; returns the messages (see the module doc)."""
    description: str = ""
    """What the prompt is for."""
    arguments: tuple[PromptArgument, ...] = ()
    """The arguments it takes."""
    complete: Completer | None = None
    """Suggests values for an argument (``completion/complete``), or None."""
    title: str | None = None
    """A human-readable title."""
    pack: str = field(default="", kw_only=True)
    """The pack that registered it (set when it is registered)."""

    @property
    def qualified(self) -> str:
        """``pack.name``: what an agent's ``prompts`` globs match."""
        return f"{self.pack}.{self.name}" if self.pack else self.name


def _described(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    doc = inspect.getdoc(fn) or ""
    if not doc:
        return "", {}
    import docstring_parser

    parsed = docstring_parser.parse(doc)
    text = "\n\n".join(p for p in (parsed.short_description, parsed.long_description) if p)
    return text, {p.arg_name: p.description or "" for p in parsed.params}


def arguments_of(fn: Callable[..., Any], docs: dict[str, str]) -> tuple[PromptArgument, ...]:
    """The arguments a prompt or resource function takes, from its signature and docstring."""
    out = []
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        required = param.default is inspect.Parameter.empty
        out.append(PromptArgument(param.name, docs.get(param.name) or None, required))
    return tuple(out)


@overload
def prompt(fn: Callable[..., Any], /) -> Prompt: ...


@overload
def prompt(
    fn: None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    complete: Completer | None = None,
    title: str | None = None,
) -> Callable[[Callable[..., Any]], Prompt]: ...


def prompt(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    complete: Completer | None = None,
    title: str | None = None,
) -> Prompt | Callable[[Callable[..., Any]], Prompt]:
    """Make a function a ``Prompt`` (usable bare, ``@prompt``, or with options).

    Args:
        fn: The function giving the prompt's messages.
        name: The prompt's name (default: the function's name).
        description: What it is for (default: the docstring's summary).
        complete: Suggests argument values for ``completion/complete``.
        title: A human-readable title.
    """

    def make(f: Callable[..., Any]) -> Prompt:
        text, docs = _described(f)
        return Prompt(
            name or f.__name__,
            f,
            description if description is not None else text,
            arguments_of(f, docs),
            complete,
            title,
        )

    return make(fn) if fn is not None else make
