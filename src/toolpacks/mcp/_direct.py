"""Answering MCP ``tools/list`` and ``tools/call`` as plain JSON, without the MCP SDK.

``ToolAnswers`` holds what one served toolset answers: the listing, built once (and its JSON
text, encoded once), and ``call``, which runs a tool through ``Toolset.call`` (the argument
gate, permissions, approvals, hooks, locks, timeouts) and gives the ``CallToolResult`` as a
dict. A tool that fails, or is called with bad arguments, is an error result (``isError``);
only an unknown tool name is a protocol error (``UnknownTool``), as the MCP specification
asks. Whatever a tool raises (``SystemExit`` included) is an error result, and structured
content larger than the tool's ``max_content_chars`` is not sent.

The SDK's server (``_server``) wraps these answers in its models; the HTTP app answers
stateless ``tools/list`` and ``tools/call`` requests from them directly (``http._direct``),
so a request is parsed once and runs without the SDK's per-request machinery; and
``_bare`` serves stdio from them where the SDK is not installed. Nothing here imports the SDK.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from pydantic_core import from_json, to_json

from toolpacks.core._channel import Channel
from toolpacks.core._content import BadContent, has_content, mcp_blocks, resolve
from toolpacks.core._context import ToolContext
from toolpacks.core._credentials import ConnectRequired
from toolpacks.core._principal import Principal
from toolpacks.core._result import ArgumentError, ToolResult, render_value
from toolpacks.core._secrets import scrub
from toolpacks.core.call._gate import invalid_arguments
from toolpacks.core.call._outcome import exception_text
from toolpacks.export._api import definition
from toolpacks.host._approval import ApprovalHandler
from toolpacks.host._toolset import Toolset
from toolpacks.mcp._search import Found, listing
from toolpacks.mcp._wire import dump

__all__ = [
    "INVALID_PARAMS",
    "SERVED_PRINCIPAL",
    "Notify",
    "ToolAnswers",
    "UnknownTool",
    "dump",
    "policy_toolset",
]

logger = logging.getLogger("toolpacks.mcp")

INVALID_PARAMS = -32602
"""The JSON-RPC error code of an unknown tool name (and of other bad parameters)."""

Notify = Callable[[], Awaitable[None]]
"""Tells the client its tool list changed (``notifications/tools/list_changed``)."""


SERVED_PRINCIPAL: contextvars.ContextVar[Principal | None] = contextvars.ContextVar(
    "toolpacks_served_principal", default=None
)
"""Who the request being answered is for (set by the HTTP app from a verified token)."""


class UnknownTool(Exception):
    """A ``tools/call`` of a name the toolset does not expose (a JSON-RPC -32602 error)."""


def policy_toolset(
    toolset: Toolset, expose_errors: bool, approval: ApprovalHandler | None
) -> Toolset:
    """``toolset`` with the server's error exposure and approval handler (a copy if they differ).

    Most servers change neither: then the toolset itself is served, rather than a copy of
    each of its entries (which a server of 10^4 tools would feel at every start).
    """
    current = toolset.entries()
    if approval is None and all(e.options.expose_errors is expose_errors for e in current):
        return toolset
    entries = [
        e
        if e.options.expose_errors is expose_errors
        else replace(e, options=replace(e.options, expose_errors=expose_errors))
        for e in current
    ]
    served = Toolset(
        entries,
        agent=toolset.agent,
        approval=approval if approval is not None else toolset.approver.handler,
        authorizers=toolset.authorizers,
        max_concurrency=toolset.max_concurrency,
    )
    served.catalog = toolset.catalog  # its prompts and resources
    served.credentials = toolset.credentials  # its users' credentials
    return served


def error_text(text: str) -> dict[str, Any]:
    """An error ``CallToolResult`` with one text block."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


class ToolAnswers:
    """The ``tools/list`` and ``tools/call`` answers of one served toolset, as plain JSON."""

    def __init__(self, toolset: Toolset, expose_errors: bool, *, announce: bool = False) -> None:
        self.toolset = toolset
        self.expose_errors = expose_errors
        self.names = frozenset(toolset.names())
        """The exposed names (the only names a client may call; deferred ones too)."""
        built = listing(toolset)
        self._shown = built.shown
        self.meta = built.meta
        """The search tool's name, when some tools are deferred (None otherwise)."""
        self.found = Found(self.definition_of, announce)
        """Deferred tools a search found, listed from then on (stdio sessions only)."""
        self.structured = built.structured
        """Tools with an output schema (their results carry ``structuredContent``)."""
        self.wrapped = built.wrapped
        """Tools whose non-object output is sent as ``{"result": value}``."""
        self.running: dict[int, str] = {}
        """The tool calls in flight, by a call number: the names of the tools running now."""
        self._numbers = itertools.count()
        self._listing: tuple[int, bytes] | None = None
        self._definitions: list[dict[str, Any]] | None = None

    def running_names(self) -> list[str]:
        """The names of the tools running now, one per call, in the order they started."""
        return list(self.running.values())

    # -- tools/list

    @property
    def definitions(self) -> list[dict[str, Any]]:
        """What ``tools/list`` shows before any search (parsed from the listing, once)."""
        if self._definitions is None:
            self._definitions = from_json(self._shown)
        return self._definitions

    def definition_of(self, name: str) -> dict[str, Any]:
        """The MCP definition of the tool exposed as ``name`` (made anew)."""
        return definition(self.toolset.entry(name).tool, "mcp", name=name)

    def tools(self) -> list[dict[str, Any]]:
        """The tools ``tools/list`` shows now (with those searches found, when announced)."""
        return [*self.definitions, *self.found.listed()]

    def tools_json(self) -> bytes:
        """The JSON text of ``tools()`` (a JSON array), joined once per change of the list."""
        found = self.found.listed()
        if not found:
            return self._shown
        if self._listing is None or self._listing[0] != len(found):
            more = b",".join(dump(d) for d in found)
            self._listing = (len(found), b"".join([self._shown[:-1], b",", more, b"]"]))
        return self._listing[1]

    def list_reply(self, request_id: str | int, extra: dict[str, Any] | None = None) -> list[bytes]:
        """The JSON-RPC response to ``tools/list`` as JSON text in parts, ``extra`` in its result.

        The listing's text is one of the parts, neither copied nor encoded again (a listing
        of 10^5 tools is tens of megabytes); the parts are written one after the other.
        """
        more = b"," + dump(extra)[1:-1] if extra else b""
        head = b'{"jsonrpc":"2.0","id":' + dump(request_id) + b',"result":{"tools":'
        return [head, self.tools_json(), more + b"}}"]

    # -- tools/call

    def unknown(self, name: str) -> str:
        """The message of the -32602 error for a call of ``name``, which is not exposed."""
        # The SDK's own wording ("Unknown tool: NAME"), then why and what there is.
        message = self.toolset.unknown_message(name, self.toolset.names())
        return message.replace(f"Unknown tool '{name}'.", f"Unknown tool: {name}.", 1)

    def duplicate_key(self, name: str, key: str) -> dict[str, Any]:
        """The answer to a ``tools/call`` of ``name`` whose arguments repeat ``key``.

        The transport sees duplicate keys in the received text (a parsed dict cannot show
        them) and answers with this instead of calling the tool, in the gate's wording: an
        error result, or the -32602 error (``code`` and ``message``) when ``name`` is unknown.
        """
        if name not in self.names:
            return {"code": INVALID_PARAMS, "message": self.unknown(name)}
        detail = ArgumentError("", f"duplicate key {key!r} in arguments; send each key once")
        refused = invalid_arguments(self.toolset.entry(name).tool, [detail], "", 0.0)
        # Named as the client called it, as ``Toolset.call`` names its errors.
        return error_text(refused.content.replace(f"'{refused.tool_name}'", f"'{name}'", 1))

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        request_id: str | int | None,
        notify: Notify | None = None,
        channel: Channel | None = None,
    ) -> dict[str, Any]:
        """Run ``name`` with ``arguments``; the ``CallToolResult`` as a dict.

        Args:
            name: The tool's exposed name (or the search tool's).
            arguments: The call's arguments (``None``: none).
            request_id: The JSON-RPC request's id (the call id is ``mcp_<id>``).
            notify: Tells the client its tool list changed (when a search finds tools).
            channel: The call's way back to the client (progress, logs, asking), if any.

        Raises:
            UnknownTool: ``name`` is not exposed (or, ``RequestStateRefused``, the call's
                ``requestState`` does not verify).
        """
        if name == self.meta:
            return await self.found.search(notify, self.toolset, arguments)
        if name not in self.names:
            if self.toolset.hides(name):  # for_principal: the toolset refuses it, audited
                return self.render(name, await self.toolset.call(name, arguments or {}))
            raise UnknownTool(self.unknown(name))
        entry = self.toolset.entry(name)
        bind = getattr(channel, "bind", None)  # 2026-07-28: the requestState must be this call's
        if bind is not None:
            bind(arguments or {}, SERVED_PRINCIPAL.get())  # or RequestStateRefused (-32602)
        if entry.require_approval and self.toolset.approver.handler is None:
            return error_text(
                f"Tool '{name}' requires approval, and this MCP server has no approval policy, "
                "so the call was refused. Do not retry it; tell the user what you wanted to do "
                "so they can do it themselves or allow it."
            )
        call_id = f"mcp_{request_id}" if request_id is not None else None
        number = next(self._numbers)
        self.running[number] = name
        try:
            principal = SERVED_PRINCIPAL.get()
            context = (
                None
                if channel is None and principal is None
                else ToolContext(channel=channel, principal=principal)
            )
            result = await self.toolset.call(name, arguments or {}, context, call_id=call_id)
        except (asyncio.CancelledError, ConnectRequired):  # the latter: a URL elicitation
            raise
        except Exception as exc:  # a hook raised: report it without its text
            logger.exception("tool %r: a hook raised during an MCP call", name)
            text = scrub(exception_text(exc), entry.options.redact) if self.expose_errors else ""
            detail = f": {text}" if text else ""
            return error_text(f"Tool '{name}' failed in a hook: {type(exc).__qualname__}{detail}.")
        except BaseException as exc:  # SystemExit and the like: the server goes on
            logger.error("tool %r raised %s during an MCP call", name, type(exc).__qualname__)
            return error_text(f"Tool '{name}' failed with {type(exc).__qualname__}.")
        finally:
            del self.running[number]
        if channel is not None:
            await channel.drain()  # a sync tool's last progress report goes before its result
            if getattr(channel, "needed", None):  # 2026-07-28: it asked; the client answers
                return channel.input_required()  # type: ignore[attr-defined,no-any-return]
        return self.render(name, result)

    def render(self, name: str, result: ToolResult) -> dict[str, Any]:
        """The result with its text, and ``structuredContent`` when the tool declares output.

        Structured content is held to the tool's ``max_content_chars`` as its serialized
        JSON: a larger value is an error result with the (truncated) text, since clients check
        ``structuredContent`` against the output schema only on success.
        """
        if not result.is_error and has_content(result.value):
            return content_result(name, result)
        text = result.content
        if result.is_error or name not in self.structured:
            return {"content": [{"type": "text", "text": text}], "isError": result.is_error}
        structured = self._structured(name, result)
        if isinstance(structured, str):
            return error_text(structured)
        extra, raw = structured
        limit = self.toolset.entry(name).options.max_content_chars
        if limit and len(raw) + extra > limit and _json_chars(raw) + extra > limit:
            return error_text(
                f"{text}\n\nThe result was larger than this server's limit of {limit} "
                "characters, so its structured form was omitted."
            )
        value = from_json(raw)
        content = {"result": value} if name in self.wrapped else value
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": content,
            "isError": False,
        }

    def _structured(self, name: str, result: ToolResult) -> tuple[int, bytes] | str:
        """The value as JSON (with the wrapper's extra length), or why it cannot be sent."""
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


def content_result(name: str, result: ToolResult) -> dict[str, Any]:
    """A result holding images, audio or resources: one content block each.

    Text parts are held to the call's ``max_content_chars`` together; content in a shape
    that cannot be sent is an error result naming the problem.
    """
    try:
        blocks = mcp_blocks(resolve(result.value, render_value))
    except BadContent as exc:
        return error_text(f"Tool '{name}' {exc}.")
    limit = result._max_chars
    texts = sum(len(b["text"]) for b in blocks if b["type"] == "text")
    if limit and texts > limit:
        return error_text(
            f"Tool '{name}' returned {texts} characters of text, more than this server's "
            f"limit of {limit} characters."
        )
    return {"content": blocks, "isError": False}


def _json_chars(raw: bytes) -> int:
    """The length in characters of UTF-8 JSON text (its byte count when that is all ASCII)."""
    return len(raw) if raw.isascii() else len(raw.decode("utf-8"))
