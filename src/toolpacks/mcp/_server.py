"""Serving a ``Toolset`` as an MCP server (``toolpacks serve --agent NAME``).

Built on the official SDK's low-level ``Server``: ``tools/list`` comes from
``toolset.definitions("mcp")`` and ``tools/call`` goes through ``toolset.call``, so validation,
permissions, approvals, hooks, locks and timeouts all apply. A tool that fails, or is called
with bad arguments, gives a result with ``isError`` (never a protocol error) whose text is the
masked ``ToolResult`` content; only an unknown tool name is a protocol error, as the MCP
specification asks. Whatever a tool raises (``SystemExit`` included) is an error result, and
structured content larger than the tool's ``max_content_chars`` is not sent.

Over stdio the transport is our own (``_stdio``, lines decoded by ``_wire``): it answers
malformed lines and ``tools/call`` arguments with duplicate keys itself, and ends the session
at end of input or on SIGTERM/SIGINT after a grace period for the calls in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from toolpacks.core._result import ArgumentError, ToolResult
from toolpacks.core._secrets import scrub
from toolpacks.core.call._gate import invalid_arguments
from toolpacks.core.call._outcome import exception_text
from toolpacks.host._approval import ApprovalHandler
from toolpacks.host._toolset import Toolset
from toolpacks.mcp._search import Found as _Found

if TYPE_CHECKING:
    import mcp_types
    from mcp.server import Server
    from mcp.server.context import ServerRequestContext

    from toolpacks.mcp._stdio import ServeOutcome

__all__ = ["build_server", "serve", "serve_agent", "serve_stdio"]

logger = logging.getLogger("toolpacks.mcp")

STUCK_EXIT_CODE = 3
"""``toolpacks serve``'s exit code when calls were still running after the grace period."""


def _policy_toolset(
    toolset: Toolset, expose_errors: bool, approval: ApprovalHandler | None
) -> Toolset:
    """A copy of ``toolset`` with the server's error exposure and approval handler."""
    entries = [
        replace(e, options=replace(e.options, expose_errors=expose_errors))
        for e in toolset.entries()
    ]
    return Toolset(
        entries,
        agent=toolset.agent,
        approval=approval if approval is not None else toolset.approver.handler,
        authorizers=toolset.authorizers,
        max_concurrency=toolset.max_concurrency,
    )


class _ToolsetServer:
    """The ``tools/list`` and ``tools/call`` handlers for one toolset."""

    def __init__(self, toolset: Toolset, expose_errors: bool, *, announce: bool = False) -> None:
        from toolpacks.export._mcp import wraps_output
        from toolpacks.mcp._search import up_front

        self.toolset = toolset
        self.expose_errors = expose_errors
        self.names = frozenset(toolset.names())
        """The exposed names (the only names a client may call; deferred ones too)."""
        every, self.definitions, self.meta = up_front(toolset)
        """What ``tools/list`` answers: ``toolset.definitions("mcp")``, that is the tools not
        deferred and, when some are, the ``search_tools`` tool named by ``meta``."""
        self.found = _Found(every, announce)
        """Deferred tools a search found, listed from then on (stdio sessions only)."""
        self.structured: set[str] = {d["name"] for d in every if "outputSchema" in d}
        """Tools with an output schema (their results carry ``structuredContent``)."""
        self.wrapped: set[str] = {
            e.exposed
            for e in toolset.entries()
            if e.exposed in self.structured and wraps_output(e.tool.output_schema)
        }
        """Tools whose non-object output is sent as ``{"result": value}``."""
        self.running: dict[int, str] = {}
        """The tool calls in flight, by a call number: the names of the tools running now."""
        self._numbers = itertools.count()

    def running_names(self) -> list[str]:
        """The names of the tools running now, one per call, in the order they started."""
        return list(self.running.values())

    def duplicate_key(self, name: str, key: str) -> mcp_types.CallToolResult | mcp_types.ErrorData:
        """The answer to a ``tools/call`` of ``name`` whose arguments repeat ``key``.

        The transport sees duplicate keys in the received text (a parsed dict cannot show
        them) and answers with this instead of calling the tool, in the gate's wording.
        """
        import mcp_types

        if name not in self.names:
            return mcp_types.ErrorData(code=mcp_types.INVALID_PARAMS, message=self._unknown(name))
        detail = ArgumentError("", f"duplicate key {key!r} in arguments; send each key once")
        refused = invalid_arguments(self.toolset.entry(name).tool, [detail], "", 0.0)
        # Named as the client called it, as ``Toolset.call`` names its errors.
        return self._error(refused.content.replace(f"'{refused.tool_name}'", f"'{name}'", 1))

    def _unknown(self, name: str) -> str:
        available = ", ".join(self.toolset.names()) or "none"
        return f"Unknown tool: {name}. Available tools: {available}."

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        import mcp_types

        tools = [*self.definitions, *self.found.listed()]
        return mcp_types.ListToolsResult.model_validate({"tools": tools})

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        from mcp import MCPError
        from mcp_types import INVALID_PARAMS

        name = params.name
        if name == self.meta:
            return await self.found.search(ctx, self.toolset, params.arguments)
        if name not in self.names:
            raise MCPError(code=INVALID_PARAMS, message=self._unknown(name))
        entry = self.toolset.entry(name)
        if entry.require_approval and self.toolset.approver.handler is None:
            return self._error(
                f"Tool '{name}' requires approval, and this MCP server has no approval policy, "
                "so the call was refused. Do not retry it; tell the user what you wanted to do "
                "so they can do it themselves or allow it."
            )
        request_id = ctx.request_id
        call_id = f"mcp_{request_id}" if request_id is not None else None
        number = next(self._numbers)
        self.running[number] = name
        try:
            result = await self.toolset.call(name, params.arguments or {}, call_id=call_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a hook raised: report it without its text
            logger.exception("tool %r: a hook raised during an MCP call", name)
            text = scrub(exception_text(exc), entry.options.redact) if self.expose_errors else ""
            detail = f": {text}" if text else ""
            return self._error(f"Tool '{name}' failed in a hook: {type(exc).__qualname__}{detail}.")
        except BaseException as exc:  # SystemExit and the like: the server goes on
            logger.error("tool %r raised %s during an MCP call", name, type(exc).__qualname__)
            return self._error(f"Tool '{name}' failed with {type(exc).__qualname__}.")
        finally:
            del self.running[number]
        return self._render(name, result)

    def _error(self, text: str) -> mcp_types.CallToolResult:
        import mcp_types

        return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=text)], is_error=True)

    def _render(self, name: str, result: ToolResult) -> mcp_types.CallToolResult:
        """The result with its text, and ``structuredContent`` when the tool declares output.

        Structured content is held to the tool's ``max_content_chars`` as its serialized
        JSON: a larger value is an error result with the (truncated) text, since clients check
        ``structuredContent`` against the output schema only on success.
        """
        import mcp_types

        text = result.content
        if result.is_error or name not in self.structured:
            return mcp_types.CallToolResult(
                content=[mcp_types.TextContent(text=text)], is_error=result.is_error
            )
        from pydantic_core import from_json

        structured = self._structured(name, result)
        if isinstance(structured, str):
            return self._error(structured)
        extra, raw = structured
        limit = self.toolset.entry(name).options.max_content_chars
        if limit and len(raw) + extra > limit and _json_chars(raw) + extra > limit:
            return self._error(
                f"{text}\n\nThe result was larger than this server's limit of {limit} "
                "characters, so its structured form was omitted."
            )
        value = from_json(raw)
        content = {"result": value} if name in self.wrapped else value
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(text=text)], structured_content=content
        )

    def _structured(self, name: str, result: ToolResult) -> tuple[int, bytes] | str:
        """The value as JSON (with the wrapper's extra length), or why it cannot be sent."""
        from pydantic_core import to_json

        try:
            raw = to_json(result.value, inf_nan_mode="null")
        except Exception:
            logger.exception("tool %r returned a value that is not JSON", name)
            return f"Tool '{name}' returned a value that cannot be sent as JSON."
        if name in self.wrapped:
            return len('{"result":}'), raw
        if not raw.startswith(b"{"):
            return (
                f"Tool '{name}' returned {type(result.value).__name__}, which does not match "
                "its declared output schema (an object)."
            )
        return 0, raw


def _json_chars(raw: bytes) -> int:
    """The length in characters of UTF-8 JSON text (its byte count when that is all ASCII)."""
    return len(raw) if raw.isascii() else len(raw.decode("utf-8"))


def build_server(
    toolset: Toolset,
    *,
    expose_errors: bool = False,
    approval: ApprovalHandler | None = None,
    name: str = "toolpacks",
) -> Server[Any]:
    """An MCP ``Server`` (low-level SDK API) serving ``toolset``'s tools.

    Args:
        toolset: The tools to serve, under their exposed names.
        expose_errors: Send a failing tool's exception text to the client (trusted
            development only); by default it sees the tool name and exception type.
        approval: Decides calls to tools that require approval; without it (and without one
            on the toolset), such calls are refused with an explanatory error result.
        name: The server name reported to clients.
    """
    return _build(toolset, expose_errors, approval, name)[0]


def _build(
    toolset: Toolset,
    expose_errors: bool,
    approval: ApprovalHandler | None,
    name: str,
    announce: bool = False,
) -> tuple[Server[Any], _ToolsetServer]:
    from mcp.server import Server

    from toolpacks._version import __version__

    policy = _policy_toolset(toolset, expose_errors, approval)
    handlers = _ToolsetServer(policy, expose_errors, announce=announce)
    server = Server(
        name,
        version=__version__,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
    )
    return server, handlers


async def _serve(
    toolset: Toolset, expose_errors: bool, approval: ApprovalHandler | None, name: str
) -> ServeOutcome:
    """Serve over stdio with our transport; how the session ended."""
    from mcp.server import NotificationOptions

    from toolpacks.mcp._stdio import serve_session

    server, handlers = _build(toolset, expose_errors, approval, name, announce=True)
    changes = NotificationOptions(tools_changed=bool(toolset.deferred))

    async def run_server(read_stream: Any, write_stream: Any) -> None:
        await server.run(read_stream, write_stream, server.create_initialization_options(changes))

    return await serve_session(
        run_server, answer_duplicate=handlers.duplicate_key, running=handlers.running_names
    )


async def serve(
    toolset: Toolset,
    *,
    expose_errors: bool = False,
    approval: ApprovalHandler | None = None,
    name: str = "toolpacks",
) -> None:
    """Serve ``toolset`` over this process's stdin and stdout until the client is done.

    While serving, anything written to stdout goes to stderr instead, so a tool that prints
    cannot corrupt the protocol. A line that is not JSON-RPC gets the JSON-RPC error response
    and serving goes on. Returns at end of input, or on SIGTERM or SIGINT (in the main
    thread), once the calls in flight are answered or their grace period is over (2 s after
    end of input, 10 s after a signal, or ``TOOLPACKS_SERVE_GRACE`` seconds). A call still
    running then is cancelled; a sync tool's thread cannot be stopped, so it runs on in the
    background (and a normal interpreter exit waits for it). Arguments as for ``build_server``.
    """
    await _serve(toolset, expose_errors, approval, name)


def serve_stdio(
    toolset: Toolset,
    *,
    expose_errors: bool = False,
    approval: ApprovalHandler | None = None,
    name: str = "toolpacks",
) -> None:
    """Blocking form of ``serve``: run an event loop and serve ``toolset`` over stdio.

    Returns as ``serve`` does, also when a sync tool is stuck: its thread is left running.
    """
    _serve_blocking(toolset, expose_errors, approval, name)


def _serve_blocking(
    toolset: Toolset, expose_errors: bool, approval: ApprovalHandler | None, name: str
) -> ServeOutcome:
    from toolpacks.mcp._stdio import run_loop

    return run_loop(lambda: _serve(toolset, expose_errors, approval, name))


def serve_agent(
    config: str | os.PathLike[str] | Mapping[str, Any] | None,
    agent: str | None,
    *,
    expose_errors: bool = False,
    approval: ApprovalHandler | None = None,
) -> None:
    """Build ``Host(config).toolset(agent)`` and serve it over stdio (``toolpacks serve``).

    Error details are exposed when ``expose_errors`` is set or the configuration's
    ``[settings] expose_errors`` is true. MCP servers the host started are stopped on exit.
    When calls were still running after the grace period, the process cannot end normally
    (a stuck thread would keep it alive): the host is closed, one line names the calls, and
    the process exits at once with ``STUCK_EXIT_CODE``.

    Raises:
        ConfigError: The configuration is invalid or names no such agent.
    """
    from toolpacks.host._host import Host

    with Host(config, approval=approval) as host:
        toolset = host.toolset(agent)
        expose = expose_errors or host.config.config.settings.expose_errors
        name = f"toolpacks:{agent}" if agent else "toolpacks"
        outcome = _serve_blocking(toolset, expose, None, name)
        if outcome.abandoned or outcome.stuck_threads:
            host.close()
            _exit_abandoning(outcome)


def _exit_abandoning(outcome: ServeOutcome) -> None:
    """Log what was left running, flush, and end the process without waiting for it."""
    names = ", ".join(outcome.abandoned) or f"{outcome.stuck_threads} worker thread(s)"
    logger.error(
        "toolpacks serve: stopped (%s) with calls still running after the grace period, "
        "abandoned: %s",
        outcome.reason,
        names,
    )
    for handler in logging.getLogger().handlers + logger.handlers:
        handler.flush()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # nothing more can be done on the way out
            stream.flush()
    os._exit(STUCK_EXIT_CODE)
