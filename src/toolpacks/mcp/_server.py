"""Serving a ``Toolset`` as an MCP server (``toolpacks serve --agent NAME``).

The answers are ``_direct.ToolAnswers``': ``tools/list`` comes from
``toolset.definitions("mcp")`` and ``tools/call`` goes through ``toolset.call``, so validation,
permissions, approvals, hooks, locks and timeouts all apply. A tool that fails, or is called
with bad arguments, gives a result with ``isError`` (never a protocol error) whose text is the
masked ``ToolResult`` content; only an unknown tool name is a protocol error, as the MCP
specification asks. Whatever a tool raises (``SystemExit`` included) is an error result, and
structured content larger than the tool's ``max_content_chars`` is not sent.

``build_server`` wraps them in the official SDK's low-level ``Server`` (for in-process use
and the HTTP app). Over stdio nothing of the SDK is used or imported: the transport
(``_stdio``, lines decoded by ``_wire``) and the protocol (``_rpc``: ``initialize``,
``server/discover``, ``ping``, ``tools/list``, ``tools/call``) are our own. The transport
answers malformed lines and ``tools/call`` arguments with duplicate keys itself, and ends the
session at end of input or on SIGTERM/SIGINT after a grace period for the calls in flight.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolpacks.core._credentials import ConnectRequired
from toolpacks.host._approval import ApprovalHandler
from toolpacks.host._toolset import Toolset
from toolpacks.mcp._direct import ToolAnswers, UnknownTool, policy_toolset

if TYPE_CHECKING:
    import mcp_types
    from mcp.server import Server
    from mcp.server.context import ServerRequestContext

    from toolpacks.core._principal import Principal
    from toolpacks.mcp._stdio import ServeOutcome

__all__ = ["build_server", "serve", "serve_agent", "serve_stdio"]

logger = logging.getLogger("toolpacks.mcp")

STUCK_EXIT_CODE = 3
"""``toolpacks serve``'s exit code when calls were still running after the grace period."""

_policy_toolset = policy_toolset


class _ToolsetServer(ToolAnswers):
    """The SDK's ``tools/list`` and ``tools/call`` handlers over ``ToolAnswers``' JSON."""

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        """The SDK's ``tools/list`` handler (the result is built once per change of the list)."""
        import mcp_types

        found = len(self.found.listed())
        cached = self.__dict__.get("_sdk_listing")
        if cached is None or cached[0] != found:
            cached = (found, mcp_types.ListToolsResult.model_validate({"tools": self.tools()}))
            self.__dict__["_sdk_listing"] = cached
        result: mcp_types.ListToolsResult = cached[1]
        return result

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        """The SDK's ``tools/call`` handler."""
        import mcp_types
        from mcp import MCPError

        async def notify() -> None:
            await ctx.session.send_tool_list_changed()

        from toolpacks.mcp._sdk_channel import SdkChannel, input_channel

        channel = input_channel(ctx, params)  # 2026-07-28: asking by input-required rounds
        try:
            answer = await self.call(
                params.name, params.arguments, ctx.request_id, notify, channel or SdkChannel(ctx)
            )
        except UnknownTool as exc:
            raise MCPError(code=mcp_types.INVALID_PARAMS, message=str(exc)) from None
        except ConnectRequired as exc:  # the user connects a credential first (-32042)
            from toolpacks.mcp.http._connect import url_elicitation_error

            raise url_elicitation_error(exc) from None
        if answer.get("resultType") == "input_required":
            return mcp_types.InputRequiredResult.model_validate(answer)  # type: ignore[return-value]
        return mcp_types.CallToolResult.model_validate(answer)


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
    from toolpacks.mcp._offered_sdk import accept_log_level, offered_handlers

    policy = _policy_toolset(toolset, expose_errors, approval)
    handlers = _ToolsetServer(policy, expose_errors, announce=announce)
    server = Server(
        name,
        version=__version__,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        **offered_handlers(policy.catalog, expose_errors),
    )
    accept_log_level(server)
    return server, handlers


async def _serve(
    toolset: Toolset, expose_errors: bool, approval: ApprovalHandler | None, name: str
) -> ServeOutcome:
    """Serve over stdio with our own transport and protocol session (no MCP SDK)."""
    from toolpacks.mcp._rpc import Session
    from toolpacks.mcp._stdio import serve_session

    answers = ToolAnswers(
        policy_toolset(toolset, expose_errors, approval), expose_errors, announce=True
    )
    protocol = Session(answers, name, list_changed=bool(toolset.deferred))
    return await serve_session(
        protocol, answer_duplicate=answers.duplicate_key, running=answers.running_names
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
    principal: Principal | None = None,
) -> None:
    """Build ``Host(config).toolset(agent)`` and serve it over stdio (``toolpacks serve``).

    The client acts for ``principal`` (``--principal``): it sees and may call only the tools
    that principal's scopes reach, and every call carries it. Without one, tools needing a
    scope are neither listed nor callable (``Toolset.for_principal(None)``).

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
        toolset = host.toolset(agent).for_principal(principal)
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
