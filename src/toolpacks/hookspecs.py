"""The hooks a tool pack can implement, and the markers to implement them with.

A pack is a module (or object) with functions marked ``@hookimpl``; the host finds it through
the ``toolpacks`` entry point group and registers it with pluggy::

    from toolpacks import hookimpl, tool

    @tool
    def ping() -> str:
        '''Answer "pong".'''
        return "pong"

    @hookimpl
    def register_tools(register):
        register(ping)

Invocation hooks (``before_invoke``, ``after_invoke``, ``on_error``, ``on_yield``) fire around
every call of every tool in a toolset, after the tool's own hooks. Mark one with
``@toolpacks.tagged("io", ...)`` to fire only for tools that share at least one of those
tags. They may be plain functions or coroutines; an exception they raise propagates to the
caller. ``authorize`` decides whether a call may run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import pluggy

if TYPE_CHECKING:
    from toolpacks.core._context import ToolContext
    from toolpacks.core._result import ToolResult
    from toolpacks.core._tool import Tool

__all__ = [
    "CredentialStore",
    "Decision",
    "Ranker",
    "Register",
    "after_invoke",
    "authorize",
    "before_invoke",
    "hookimpl",
    "hookspec",
    "on_error",
    "on_yield",
    "register_prompts",
    "register_resources",
    "register_tools",
    "tagged",
    "toolpacks_credential_store",
    "toolpacks_ranker",
]

PROJECT = "toolpacks"

hookspec = pluggy.HookspecMarker(PROJECT)
"""Marks a function as a toolpacks hook specification."""
hookimpl = pluggy.HookimplMarker(PROJECT)
"""Marks a pack's function as an implementation of a toolpacks hook."""

Decision = Literal["allow", "deny", "ask"]
"""An ``authorize`` answer: run the call, refuse it, or ask the approval handler."""


class Register(Protocol):
    """The callback a pack's ``register_tools`` receives, with the pack's settings."""

    pack: str
    """The name the pack is loaded under (an alias's own name)."""
    config: Mapping[str, Any]
    """The pack's settings from ``[packs.NAME]``, environment references resolved."""
    config_dir: Path | None
    """The directory of the configuration file the settings came from: resolve relative
    paths in them against it, never against the working directory (None: from code)."""

    def __call__(self, item: Any, /, **options: Any) -> None:
        """Register ``item`` as one of the pack's tools.

        ``item`` is a ``Tool``, a typed function (made into a tool with ``options`` as
        ``@tool`` options), a ``Toolbox`` instance (``alias=`` names the instance), or a
        tools directory (a ``pathlib.Path`` holding ``<tool>/TOOL.md`` folders).
        """


@hookspec
def register_tools(register: Register) -> None:
    """Register the pack's tools.

    Called once per pack when a toolset that uses the pack is built. Call ``register`` for
    each tool, function, ``Toolbox`` instance or tools directory. The return value is ignored.

    Args:
        register: The callback that records a tool as belonging to this pack.
    """


@hookspec
def register_prompts(register: Register) -> None:
    """Register the pack's prompts (served as MCP ``prompts/list`` and ``prompts/get``).

    Called once per pack when a toolset that uses the pack is built. Call ``register`` with
    each ``toolpacks.Prompt`` (or a function, made one as ``@toolpacks.prompt`` would). An
    agent's ``prompts`` globs select among them by qualified name (``pack.prompt``). The
    return value is ignored.

    Args:
        register: The callback that records a prompt as belonging to this pack (with the
            pack's name and settings, as ``register_tools``' has).
    """


@hookspec
def register_resources(register: Register) -> None:
    """Register the pack's resources (MCP ``resources/*``): static, templated, subscribable.

    Called once per pack when a toolset that uses the pack is built. Call ``register`` with
    each ``toolpacks.Resource`` (``@toolpacks.resource(uri)`` makes one; a ``{param}`` in
    the URI makes it a template). Call ``resource.updated()`` later to notify subscribers.
    An agent's ``resources`` globs select among them by qualified name (``pack.name``). The
    return value is ignored.

    Args:
        register: The callback that records a resource as belonging to this pack.
    """


@hookspec
def before_invoke(tool: Tool, arguments: dict[str, Any], context: ToolContext | None) -> None:
    """Called before a tool runs, after its arguments validated and its own hooks ran.

    The return value is ignored; raise to stop the call (the exception propagates).

    Args:
        tool: The tool about to run.
        arguments: The validated keyword arguments (secrets redacted, no context).
        context: The call's context (agent id, call id).
    """


@hookspec
def after_invoke(tool: Tool, result: ToolResult, context: ToolContext | None) -> None:
    """Called after a tool returned successfully. The return value is ignored.

    Args:
        tool: The tool that ran.
        result: Its result (``result.value`` is the raw return value).
        context: The call's context.
    """


@hookspec
def on_error(tool: Tool, exc: BaseException, context: ToolContext | None) -> None:
    """Called when a tool raised; the call still returns an error result. Return ignored.

    Args:
        tool: The tool that failed.
        exc: The exception it raised.
        context: The call's context.
    """


@hookspec
def on_yield(tool: Tool, item: Any, context: ToolContext | None) -> None:
    """Called for each item a generator tool yields. The return value is ignored.

    Args:
        tool: The generator tool.
        item: The item just produced.
        context: The call's context.
    """


@hookspec(firstresult=True)
def authorize(
    tool: Tool, arguments: dict[str, Any], context: ToolContext | None
) -> Decision | None:
    """Decide whether a call may run; the first non-None answer wins.

    Return ``"allow"`` to let it run, ``"deny"`` to refuse it (the model gets an error result
    saying the call was not permitted), ``"ask"`` to pause it until the approval handler
    answers, or ``None`` to leave the decision to other implementations. ``"allow"`` ends the
    chain but does not waive approval the user configured: a tool that requires approval
    still waits for the approval handler.

    Args:
        tool: The tool to be called.
        arguments: The arguments after the gate and validation, as JSON values (defaults
            filled in, secret values masked); a call with invalid arguments never gets here.
        context: The call's context; ``context.agent_id`` names the agent.
    """


class Ranker(Protocol):
    """Ranks a toolset's tools for ``Toolset.search``: what ``toolpacks_ranker`` returns."""

    def rank(
        self, query: str, documents: Sequence[Any], limit: int
    ) -> Sequence[tuple[int, float]] | None:
        """The best ``limit`` documents for ``query``, best first, or None to decline.

        Args:
            query: The search text.
            documents: One ``SearchDocument`` per tool: ``.exposed``, ``.qualified``,
                ``.pack``, ``.description``, ``.tags``, ``.parameters`` (``(name,
                description)`` pairs) and ``.text`` (all of them as one text). A toolset
                passes the same sequence object on every search, so a ranker may cache what
                it computes from it (embeddings) keyed by it.
            limit: How many results are wanted (at least 1).

        Returns:
            ``(index into documents, score)`` pairs, best first; None lets the built-in
            BM25 ranking answer instead.
        """


@hookspec(firstresult=True)
def toolpacks_ranker() -> Ranker | None:
    """Supply the ranker ``Toolset.search`` uses instead of its built-in BM25.

    Called once when the pack loads: return quickly, and load heavy things (a model) on the
    first ``rank``. A toolset uses the ranker of the first of its packs that supplied one.
    The ranker serves the default search mode only (``mode="regex"`` stays a pattern match),
    so a semantic ranker can be added without the core depending on it. A pack that supplies
    one is imported whenever a toolset using it is built (its manifest does not replace it).
    """


class CredentialStore(Protocol):
    """Where per-user credential values live: what ``toolpacks_credential_store`` returns.

    Values are strings (an ``oauth2`` credential's is JSON with its tokens), kept per
    (credential name, subject). The default is an encrypted SQLite file in the state
    directory. Methods are called from worker threads, several at once.
    """

    def get(self, name: str, subject: str) -> str | None:
        """The value of ``name`` for ``subject``, or None when there is none."""

    def set(self, name: str, subject: str, value: str) -> None:
        """Store ``value`` (replacing any)."""

    def delete(self, name: str, subject: str) -> bool:
        """Remove it; whether there was one."""

    def list(self, subject: str | None = None) -> Sequence[Any]:
        """What is stored, never values, one subject's if given.

        Items with ``name``, ``subject`` and ``updated`` (seconds since the epoch).
        """


@hookspec(firstresult=True)
def toolpacks_credential_store() -> CredentialStore | None:
    """Supply the store of per-user credentials instead of the default encrypted SQLite file.

    A vault or a cloud secret manager, say. Asked when a toolset first resolves a credential;
    the first loaded pack that returns one serves every toolset of the host. The store never
    reaches a tool: tools get only their declared credentials, for the call's principal.
    """


def tagged(*tags: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Make an invocation hook fire only for tools with at least one of ``tags``."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.toolpacks_tags = frozenset(tags)  # type: ignore[attr-defined]
        return fn

    return mark
