"""Serving a ``Toolset`` as an MCP server (``toolpacks serve --agent NAME``).

Built on the official SDK's low-level ``Server``: ``tools/list`` comes from
``toolset.definitions("mcp")`` and ``tools/call`` goes through ``toolset.call``, so validation,
permissions, approvals, hooks, locks and timeouts all apply. A tool that fails, or is called
with bad arguments, gives a result with ``isError`` (never a protocol error) whose text is the
masked ``ToolResult`` content; only an unknown tool name is a protocol error, as the MCP
specification asks.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Iterator, Mapping
from dataclasses import replace
from types import FrameType
from typing import TYPE_CHECKING, Any

from toolpacks.core._result import ToolResult
from toolpacks.core._secrets import scrub
from toolpacks.export import render_result
from toolpacks.host._approval import ApprovalHandler
from toolpacks.host._toolset import Toolset

if TYPE_CHECKING:
    import mcp_types
    from mcp.server import Server
    from mcp.server.context import ServerRequestContext

__all__ = ["build_server", "serve", "serve_agent", "serve_stdio"]

logger = logging.getLogger("toolpacks.mcp")


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


def _wrap_output_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``{"result": <schema>}`` as an object schema, with ``$defs`` kept at the root."""
    inner = dict(schema)
    defs = inner.pop("$defs", None)
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"result": inner},
        "required": ["result"],
    }
    if defs is not None:
        wrapped["$defs"] = defs
    return wrapped


def _is_object_schema(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "object"


class _ToolsetServer:
    """The ``tools/list`` and ``tools/call`` handlers for one toolset."""

    def __init__(self, toolset: Toolset, expose_errors: bool) -> None:
        self.toolset = toolset
        self.expose_errors = expose_errors
        self.names = frozenset(toolset.names())
        """The exposed names (the only names a client may call)."""
        self.wrapped: set[str] = set()
        """Tools whose non-object output is sent as ``{"result": value}``."""
        self.structured: set[str] = set()
        """Tools with an output schema (their results carry ``structuredContent``)."""
        definitions = toolset.definitions("mcp")
        by_name = {d["name"]: d for d in definitions}
        for entry in toolset.entries():
            definition = by_name.get(entry.exposed)
            schema = entry.tool.output_schema
            if definition is None:
                continue
            if schema is None:
                # No declared output: no outputSchema, so clients expect no structuredContent.
                definition.pop("outputSchema", None)
                continue
            self.structured.add(entry.exposed)
            if _is_object_schema(schema):
                continue
            self.wrapped.add(entry.exposed)
            exported = definition.get("outputSchema")
            if exported is None or not _is_object_schema(exported):
                definition["outputSchema"] = _wrap_output_schema(exported or schema)
        self.definitions = definitions

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        import mcp_types

        return mcp_types.ListToolsResult.model_validate({"tools": self.definitions})

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        from mcp import MCPError
        from mcp_types import INVALID_PARAMS

        name = params.name
        if name not in self.names:
            available = ", ".join(self.toolset.names()) or "none"
            raise MCPError(
                code=INVALID_PARAMS, message=f"Unknown tool: {name}. Available tools: {available}."
            )
        entry = self.toolset.entry(name)
        if entry.require_approval and self.toolset.approver.handler is None:
            return self._error(
                f"Tool '{name}' requires approval, and this MCP server has no approval policy, "
                "so the call was refused. Do not retry it; tell the user what you wanted to do "
                "so they can do it themselves or allow it."
            )
        request_id = ctx.request_id
        call_id = f"mcp_{request_id}" if request_id is not None else None
        try:
            result = await self.toolset.call(name, params.arguments or {}, call_id=call_id)
        except Exception as exc:  # a hook raised: report it without its text
            logger.exception("tool %r: a hook raised during an MCP call", name)
            text = scrub(str(exc), entry.options.redact) if self.expose_errors else ""
            detail = f": {text}" if text else ""
            return self._error(f"Tool '{name}' failed in a hook: {type(exc).__qualname__}{detail}.")
        return self._render(name, result)

    def _error(self, text: str) -> mcp_types.CallToolResult:
        import mcp_types

        return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=text)], is_error=True)

    def _render(self, name: str, result: ToolResult) -> mcp_types.CallToolResult:
        import mcp_types
        from pydantic_core import to_jsonable_python

        payload = dict(render_result(result, "mcp"))
        payload.pop("structuredContent", None)
        payload.pop("structured_content", None)
        if not result.is_error and name in self.structured:
            try:
                value = to_jsonable_python(result.value)
            except Exception:
                logger.exception("tool %r returned a value that is not JSON", name)
                return self._error(f"Tool '{name}' returned a value that cannot be sent as JSON.")
            if name in self.wrapped:
                payload["structuredContent"] = {"result": value}
            elif isinstance(value, dict):
                payload["structuredContent"] = value
            else:
                return self._error(
                    f"Tool '{name}' returned {type(result.value).__name__}, which does not match "
                    "its declared output schema (an object)."
                )
        payload["isError"] = result.is_error
        return mcp_types.CallToolResult.model_validate(payload)


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
    from mcp.server import Server

    from toolpacks._version import __version__

    handlers = _ToolsetServer(_policy_toolset(toolset, expose_errors, approval), expose_errors)
    return Server(
        name,
        version=__version__,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
    )


async def serve(
    toolset: Toolset,
    *,
    expose_errors: bool = False,
    approval: ApprovalHandler | None = None,
    name: str = "toolpacks",
) -> None:
    """Serve ``toolset`` over this process's stdin and stdout until the client disconnects.

    While serving, anything written to stdout goes to stderr instead, so a tool that prints
    cannot corrupt the protocol. Arguments as for ``build_server``.
    """
    from mcp.server.stdio import stdio_server

    server = build_server(toolset, expose_errors=expose_errors, approval=approval, name=name)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_stdio(
    toolset: Toolset,
    *,
    expose_errors: bool = False,
    approval: ApprovalHandler | None = None,
    name: str = "toolpacks",
) -> None:
    """Blocking form of ``serve``: run an event loop and serve ``toolset`` over stdio."""
    import anyio

    async def main() -> None:
        await serve(toolset, expose_errors=expose_errors, approval=approval, name=name)

    anyio.run(main)


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

    Raises:
        ConfigError: The configuration is invalid or names no such agent.
    """
    from toolpacks.host._host import Host

    with _exit_on_sigterm(), Host(config, approval=approval) as host:
        toolset = host.toolset(agent)
        expose = expose_errors or host.config.config.settings.expose_errors
        name = f"toolpacks:{agent}" if agent else "toolpacks"
        serve_stdio(toolset, expose_errors=expose, name=name)


@contextlib.contextmanager
def _exit_on_sigterm() -> Iterator[None]:
    """Turn SIGTERM into ``SystemExit`` while serving.

    Clients usually stop a server with SIGTERM; exiting normally lets ``Host.close`` stop the
    MCP servers this one started instead of leaving them behind.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM"):
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
