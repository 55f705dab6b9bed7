"""``Toolset``: the tools one agent may use, under the names its model sees."""

from __future__ import annotations

import inspect
import itertools
import logging
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from toolpacks.core._context import ToolContext
from toolpacks.core._tool import Tool
from toolpacks.core.call._options import DEFAULT_OPTIONS, CallOptions
from toolpacks.core.define._names import safe_name
from toolpacks.exceptions import PackError, ToolConflictError, ToolNotFoundError
from toolpacks.host._approval import ApprovalHandler, ApprovalRequest, Approver
from toolpacks.host._call_shapes import normalize_call, renamed_error
from toolpacks.host._offerings import Offerings
from toolpacks.host.identity._view import ScopedToolset

if TYPE_CHECKING:
    from toolpacks.core._channel import Channel
    from toolpacks.core._result import ToolResult  # results are imported by the first call
    from toolpacks.hookspecs import Decision, Ranker
    from toolpacks.host.credentials._vault import CredentialVault
    from toolpacks.host.search._index import SearchHit, SearchIndex

__all__ = ["Authorizer", "ToolEntry", "Toolset"]

Authorizer = Callable[..., "Decision | Awaitable[Decision | None] | None"]
"""``authorize(tool=, arguments=, context=)`` returning allow / deny / ask / None."""

_call_ids = itertools.count(1)
_DECISIONS = ("allow", "deny", "ask")
logger = logging.getLogger("toolpacks")


@dataclass(frozen=True, slots=True)
class ToolEntry:
    """One tool of a toolset."""

    exposed: str
    """The name the model sees (provider-safe, unique in the toolset)."""
    qualified: str
    """The tool's qualified name, ``<pack>.<tool>``."""
    pack: str
    """The pack it came from."""
    tool: Tool
    """The tool."""
    options: CallOptions = DEFAULT_OPTIONS
    """How it is run (its global hooks, limits, error exposure)."""
    require_approval: bool = False
    """Whether a call waits for approval (the tool's or the agent's setting)."""
    deferred: bool = False
    """Left out of what is sent up front; the model finds it by searching (still callable)."""


class Toolset(Offerings, ScopedToolset):
    """The tools one agent may use: definitions for its model, and safe execution.

    Build one with ``Host.toolset(...)`` or directly from tools: ``Toolset([t1, t2])``;
    ``defer=[...]`` (patterns or ``"auto"``) defers tools as an agent's ``defer`` does.
    """

    tracer: Callable[..., Awaitable[ToolResult]] | None = None
    """``tracer(toolset, name, context, run)`` wraps every ``call`` (``await run()`` makes it);
    set by ``toolpacks.integrations.otel.instrument``. None: calls are not traced."""
    credentials: CredentialVault | None = None
    """Resolves the per-user credentials tools declare, for each call's principal (set by
    ``Host.toolset`` from ``[credentials]``). None: such tools are refused."""
    handlers: Channel | None = None
    """What tools ask of their caller (progress, logs, elicitation, sampling) goes here when
    a call's context has no channel of its own: ``toolset.handlers = CallHandlers(...)``."""

    def __init__(
        self,
        tools: Iterable[Tool | ToolEntry] = (),
        *,
        agent: str | None = None,
        approval: ApprovalHandler | None = None,
        authorizers: Sequence[Authorizer] = (),
        max_concurrency: int = 8,
        options: CallOptions = DEFAULT_OPTIONS,
        ranker: Ranker | None = None,
        defer: Sequence[str] | str | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        entries: dict[str, ToolEntry] = {}
        for item in tools:
            if isinstance(item, Tool):
                for t in item.walk():
                    name = t.scoped_name
                    qualified = f"{t.pack}.{name}" if t.pack else name
                    item_entry = ToolEntry(
                        safe_name(name), qualified, t.pack or "", t, options, t.require_approval
                    )
                    self._add(entries, item_entry)
            elif isinstance(item, ToolEntry):
                self._add(entries, item)
            else:
                raise TypeError(f"Expected Tool object, got {type(item).__name__}: {item!r}")
        if defer is not None:  # "auto" or patterns, as an agent's `defer` (large-toolsets.md)
            from toolpacks.host._defer import apply_defer
            deferred = apply_defer([*entries.values()], defer, scope="Toolset(defer=...)")
            entries = {e.exposed: e for e in deferred}
        self._entries = dict(sorted(entries.items()))
        self._by_qualified = {e.qualified: e for e in self._entries.values()}
        self.agent = agent
        """The agent this toolset belongs to (its id goes into every call's context)."""
        self.approver = Approver(approval)
        """Asks the approval handler and remembers "always" answers."""
        self.authorizers = tuple(authorizers)
        """``authorize`` hooks consulted before each call (first non-None answer wins)."""
        self.max_concurrency = max_concurrency
        """Default cap of concurrent calls in ``call_many``."""
        self.ranker = ranker
        """Ranks ``search`` results instead of BM25 (a pack's ``toolpacks_ranker``), or None."""
        self._search_index: SearchIndex | None = None

    @staticmethod
    def _add(entries: dict[str, ToolEntry], entry: ToolEntry) -> None:
        if entry.exposed in entries:
            raise ToolConflictError(
                f"two tools would be exposed as {entry.exposed!r}: "
                f"{entries[entry.exposed].qualified!r} and {entry.qualified!r}; rename one"
            )
        entries[entry.exposed] = entry

    # -- lookup -----------------------------------------------------------------------------

    def names(self) -> list[str]:
        """The names the model sees, sorted."""
        return list(self._entries)

    def entries(self) -> list[ToolEntry]:
        """Every entry, sorted by exposed name."""
        return list(self._entries.values())

    def entry(self, name: str) -> ToolEntry:
        """The entry for an exposed or qualified name.

        Raises:
            ToolNotFoundError: No such tool; the message lists the available names.
        """
        found = self._entries.get(name) or self._by_qualified.get(name)
        if found is None:
            available = tuple(self._entries)
            raise ToolNotFoundError(
                f"no tool named {name!r} in this toolset; available: "
                f"{', '.join(available) or 'none'}",
                name=name,
                available=available,
            )
        return found

    def get(self, name: str) -> Tool:
        """The tool for an exposed or qualified name (raises ``ToolNotFoundError``)."""
        return self.entry(name).tool

    def qualified_name(self, exposed: str) -> str:
        """The qualified name behind an exposed name."""
        return self.entry(exposed).qualified

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._entries or name in self._by_qualified)

    def __iter__(self) -> Iterator[Tool]:
        return iter([e.tool for e in self._entries.values()])

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def deferred(self) -> frozenset[str]:
        """Exposed names of the deferred tools: callable, but not sent up front."""
        return frozenset(e.exposed for e in self._entries.values() if e.deferred)

    def __repr__(self) -> str:
        return f"<Toolset agent={self.agent!r} tools={self.names()!r}>"

    def search(self, query: str, *, limit: int = 5, mode: str = "bm25") -> list[SearchHit]:
        """The tools that best match ``query``, best first (no pack is imported to search).

        Searches exposed names (split at ``_ . -`` and camelCase), qualified names, packs,
        descriptions, tags, and parameter names and descriptions. The index is built on the
        first search and reused.

        Args:
            query: Words to look for (``"bm25"``), or a pattern (``"regex"``).
            limit: The most hits to return (at least 1).
            mode: ``"bm25"``: ranked by relevance (by ``self.ranker`` when a pack supplied
                one); ``"regex"``: tools with a field the pattern matches, case ignored.

        Raises:
            ValueError: Unknown mode, ``limit`` below 1, or a pattern that is invalid,
                longer than 200 characters, or beyond RE2 (lookarounds, backreferences).
        """
        from toolpacks.host.search._index import build_index, run_search

        if self._view_of is not None:  # for_principal: the parent's index, filtered
            return self._view_search(query, limit, mode)
        if self._search_index is None:
            self._search_index = build_index(self._entries.values())
        return run_search(self._search_index, self._entries, query, limit, mode, self.ranker)

    def definitions(
        self, format: str = "neutral", *, defer: bool = True, **options: Any
    ) -> list[dict[str, Any]]:
        """Model-facing definitions of the tools sent up front, in ``format``.

        Deferred tools are left out or marked as the format allows, with a search tool
        (``export._deferred.deferred_definitions``, whose options apply).

        Args:
            format: ``neutral``, ``openai``, ``openai-responses``, ``anthropic``, ``gemini``,
                ``bedrock`` or ``mcp``.
            defer: ``False`` exports every tool as if none were deferred.
            **options: ``strict=True`` (or ``"best_effort"``) for openai, openai-responses,
                anthropic and bedrock; ``include_instructions``; ``tool_search``, ``loaded``.
        """
        from toolpacks.export._deferred import exported
        from toolpacks.host._gcpause import paused_gc  # copies many schemas

        return paused_gc(exported)(self.entries(), format, defer and bool(self.deferred), options)

    def _context(self, context: ToolContext | None, call_id: str | None) -> ToolContext:
        if context is None:
            return ToolContext(
                call_id=call_id or f"tscall_{next(_call_ids)}",
                agent_id=self.agent,
                channel=self.handlers,
            )
        changes: dict[str, Any] = {}
        if context.channel is None and self.handlers is not None:
            changes["channel"] = self.handlers
        if call_id:
            changes["call_id"] = call_id
        elif not context.call_id:
            changes["call_id"] = f"tscall_{next(_call_ids)}"
        if context.agent_id is None and self.agent is not None:
            changes["agent_id"] = self.agent
        return replace(context, **changes) if changes else context

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | str | bytes | None = None,
        context: ToolContext | None = None,
        *,
        call_id: str | None = None,
    ) -> ToolResult:
        """Run the tool exposed as ``name`` (or a qualified name) and return its result.

        Before the tool runs: ``allowed_agents`` is checked against the context's agent;
        the ``authorize`` hooks are asked in order and the first non-None answer wins
        (``"deny"`` refuses, ``"ask"`` sends the call to the approval handler, ``"allow"``
        ends the consultation); a tool that requires approval always goes to the handler,
        whatever the hooks said. Without a handler, such a call is denied.

        Never raises for an unknown tool, bad arguments, a denied call or a failing tool:
        the result says what went wrong. Hook exceptions and cancellation propagate.

        Args:
            name: The exposed or qualified tool name.
            arguments: A mapping, or a JSON object text as a model sent it.
            context: Who is calling; its agent id defaults to this toolset's agent.
            call_id: The call's id (the provider's tool-call id); wins over the context's.
        """
        ctx = self._context(context, call_id)
        if self.tracer is not None:  # ``toolpacks.integrations.otel.instrument``
            return await self.tracer(
                self, name, ctx, lambda: self._checked_call(name, arguments, ctx)
            )
        return await self._checked_call(name, arguments, ctx)

    async def _call(
        self, name: str, arguments: Mapping[str, Any] | str | bytes | None, ctx: ToolContext
    ) -> ToolResult:
        """``call`` once the context is set: lookup, permissions, approval, the run."""
        from toolpacks.core._result import ToolResult, error_result

        entry = self._entries.get(name) or self._by_qualified.get(name)
        if entry is None:
            message = self.unknown_message(name, self._entries)
            return error_result("not_found", message, tool_name=name, call_id=ctx.call_id)
        tool = entry.tool
        agent = ctx.agent_id
        if tool.allowed_agents is not None and agent not in tool.allowed_agents:
            return error_result(
                "denied",
                f"Tool '{name}' is not available to agent '{agent}'.",
                tool_name=name,
                call_id=ctx.call_id,
            )
        if tool.deferred:  # listed from its pack's manifest: the pack is imported now, once
            try:
                tool = self._undefer(entry)
            except PackError as exc:
                message = str(exc).replace(f"'{tool.name}'", f"'{name}'", 1)
                return error_result("tool_error", message, tool_name=name, call_id=ctx.call_id)
        if tool.credentials:  # the principal's own, resolved before the run (host/credentials)
            from toolpacks.host.credentials._vault import attach

            got = await attach(self.credentials, name, tool, ctx)
            if isinstance(got, ToolResult):
                return got
            ctx = got
        if entry.require_approval or self.authorizers:
            from toolpacks.core.call._invoke import invoke

            async def gatekeeper(
                checked: dict[str, Any], _: ToolContext | None
            ) -> ToolResult | None:
                return await self._authorize(name, entry, checked, ctx)

            result = await invoke(tool, arguments, ctx, entry.options, gatekeeper)
        else:
            result = await tool.invoke(arguments, ctx, options=entry.options)
        if result.tool_name != name:
            result.tool_name = name
            if result.error is not None:
                # The message names the tool; name it as the model called it (a renamed or
                # prefixed tool), while hooks and logs keep the tool's own name.
                result = renamed_error(result, tool.name, name)
        return result

    def call_sync(
        self,
        name: str,
        arguments: Mapping[str, Any] | str | bytes | None = None,
        context: ToolContext | None = None,
        *,
        call_id: str | None = None,
    ) -> ToolResult:
        """``call`` for synchronous code; safe inside a running event loop too.

        The call runs on toolpacks' private event loop thread while this thread waits, so
        permissions, approvals, hooks, locks and timeouts behave as in ``await call(...)``.
        Interrupting the wait cancels the call. A call with no async needs (a plain sync tool
        without timeout, lock or hooks; no ``authorize`` hook, approval or tracer) runs on
        this thread instead, with the same result (``core.call._sync``).
        """
        from toolpacks.core.call import _sync  # loaded by the first synchronous call

        coro = self.call(name, arguments, context, call_id=call_id)
        entry = self._entries.get(name) or self._by_qualified.get(name)
        if (
            entry is not None
            and self.tracer is None
            and not self.authorizers
            and not entry.require_approval
            and not entry.tool.credentials  # resolving them may refresh a token (async)
            and _sync.runs_here(entry.tool, entry.options)
        ):
            return _sync.run_here(coro)
        return _sync.run_sync(coro)

    def _undefer(self, entry: ToolEntry) -> Tool:
        """The real tool behind a placeholder listed from a manifest; kept in its place.

        Raises:
            PackError: The pack failed to load, or defines the tool otherwise than listed.
        """
        from toolpacks.packs.entrypoints._manifest import ManifestTool

        assert isinstance(entry.tool, ManifestTool)
        tool = entry.tool.resolve()
        kept = replace(entry, tool=tool)
        self._entries[entry.exposed] = kept
        self._by_qualified[entry.qualified] = kept
        return tool

    async def _authorize(
        self,
        name: str,
        entry: ToolEntry,
        arguments: dict[str, Any],
        ctx: ToolContext,
    ) -> ToolResult | None:
        """Ask the authorize hooks, then the approver; an error result refuses the call.

        ``arguments`` have passed the gate and validation; secret values are masked. They
        are given as JSON values (models and dates as the model would send them).
        """
        from pydantic_core import to_jsonable_python

        from toolpacks.core._result import error_result

        args_view = to_jsonable_python(arguments, fallback=repr)
        decision: object = None
        for authorizer in self.authorizers:
            answer = authorizer(tool=entry.tool, arguments=dict(args_view), context=ctx)
            if inspect.isawaitable(answer):
                answer = await answer
            if answer is not None:
                decision = answer
                break
        if decision is not None and decision not in _DECISIONS:
            logger.error(
                "authorize hook %r answered %r for tool %r; expected one of %s or None; "
                "the call is denied",
                authorizer,
                decision,
                entry.qualified,
                ", ".join(_DECISIONS),
            )
            decision = "deny"
        if decision == "deny":
            return error_result(
                "denied",
                f"Tool '{name}' call was not permitted by policy. Do not retry it.",
                tool_name=name,
                call_id=ctx.call_id,
            )
        if decision == "ask" or entry.require_approval:
            request = ApprovalRequest(
                name,
                entry.qualified,
                dict(args_view),
                ctx.agent_id,
                ctx.call_id,
                "an authorize hook asked for approval"
                if decision == "ask"
                else "the tool requires approval",
            )
            if not await self.approver.ask(request, entry.exposed):
                return error_result(
                    "denied",
                    f"Tool '{name}' requires approval and the call was not approved. "
                    "Tell the user what you wanted to do, or choose another approach.",
                    tool_name=name,
                    call_id=ctx.call_id,
                )
        return None

    async def call_many(
        self,
        calls: Iterable[Any],
        context: ToolContext | None = None,
        *,
        max_concurrency: int | None = None,
    ) -> list[ToolResult]:
        """Run a batch of calls concurrently; results come back in input order.

        Each call is a ``(name, arguments)`` pair, a mapping with ``name``, ``arguments`` and
        optionally ``id``, or a parsed provider ``ToolCall``. At most ``max_concurrency``
        run at once; per-tool locks still apply; one failure never cancels the others (an
        exception escaping a hook becomes that call's error result).
        """
        normalized = [normalize_call(c) for c in calls]
        cap = self.max_concurrency if max_concurrency is None else max_concurrency
        if cap < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {cap}")
        import asyncio  # here, not at the top: ``from toolpacks import Host`` stays light

        from toolpacks.core._result import error_result

        limit = asyncio.Semaphore(cap)
        if context is not None and context.call_id:
            # One context for the batch: every call still gets an id of its own.
            normalized = [
                (n, a, i or f"{context.call_id}.{index}")
                for index, (n, a, i) in enumerate(normalized)
            ]

        async def run(name: str, arguments: Any, call_id: str | None) -> ToolResult:
            async with limit:
                try:
                    return await self.call(name, arguments, context, call_id=call_id)
                except asyncio.CancelledError:
                    raise
                except BaseException as exc:  # pack code: SystemExit and the like included
                    logger.error("call of %r failed in a hook", name, exc_info=exc)
                    return error_result(
                        "tool_error",
                        f"Tool '{name}' failed in a hook: {type(exc).__qualname__}.",
                        tool_name=name,
                        call_id=call_id or "",
                        exception_type=type(exc).__qualname__,
                    )

        return list(await asyncio.gather(*(run(*c) for c in normalized)))

    async def execute(self, payload: Any, format: str) -> list[dict[str, Any]]:
        """Run the tool calls in a provider payload and render each result for that provider.

        Args:
            payload: An OpenAI message or ``tool_calls`` list, Responses output items, an
                Anthropic message or content blocks, or a Bedrock Converse response.
            format: The provider format the payload and the results use.

        With deferred tools, the model's tool searches are answered too: Responses
        ``tool_search_call`` items, and calls of the ``search_tools`` tool.
        """
        from toolpacks.host.search._tools import execute

        return await execute(self, payload, format)
