"""Deferred tools over MCP: ``tools/list`` shows the others plus ``search_tools``.

A deferred tool answers ``tools/call`` by name all the same. ``search_tools`` answers with
the found tools' MCP definitions (``{"tools": [...]}`` as text and structured content). On a
session that can be told (stdio: one client per server), the tools a search found join
``tools/list`` from then on and the client gets ``notifications/tools/list_changed``; over
stateless HTTP nothing changes between requests.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolpacks.export._api import definition
from toolpacks.export._deferred import Listed, meta_name, search_tool
from toolpacks.export._mcp import wraps_output
from toolpacks.host.search._tools import find, search_arguments
from toolpacks.mcp._wire import dump

if TYPE_CHECKING:
    from toolpacks.host._toolset import Toolset

__all__ = ["Found", "Listing", "listing"]

logger = logging.getLogger("toolpacks.mcp")


@dataclass(frozen=True, slots=True)
class Listing:
    """What ``tools/list`` shows, as one JSON text built once, and what the server needs.

    Kept as text, not as dicts: a definition is a dozen small dicts, and a server of 10^5
    tools would hold them all for nothing (it sends the text). Each definition is encoded
    as it is made and dropped; a search makes the definitions of what it found again.
    """

    shown: bytes
    """The JSON array ``tools/list`` shows: the tools not deferred and, when some are, the
    search tool."""
    meta: str | None
    """The search tool's name (None: no tool is deferred)."""
    structured: set[str] = field(default_factory=set)
    """Tools with an output schema (their results carry ``structuredContent``)."""
    wrapped: set[str] = field(default_factory=set)
    """Tools whose non-object output is sent as ``{"result": value}``."""


def listing(toolset: Toolset) -> Listing:
    """The MCP listing of ``toolset`` (each definition as ``toolset.definitions("mcp")``)."""
    from toolpacks.host._gcpause import paused_gc  # makes many objects

    return paused_gc(_listing)(toolset)


def _listing(toolset: Toolset) -> Listing:
    shown: list[bytes] = []
    structured: set[str] = set()
    wrapped: set[str] = set()
    deferred = toolset.deferred
    for entry in toolset.entries():
        name = entry.exposed
        if entry.tool.output_schema is not None:
            structured.add(name)
            if wraps_output(entry.tool.output_schema):
                wrapped.add(name)
        if name not in deferred:
            shown.append(dump(definition(entry.tool, "mcp", name=name)))
    meta = None
    if deferred:
        listed = [Listed(e.exposed, e.pack, e.tool, e.deferred) for e in toolset.entries()]
        shown.append(dump(definition(search_tool(listed), "mcp")))
        meta = meta_name(toolset.names())
    text = b"[" + b",".join(shown) + b"]"
    return Listing(text, meta, structured, wrapped)


class Found:
    """The deferred tools searches found in this session, in the order they were found."""

    def __init__(self, definition_of: Callable[[str], dict[str, Any]], announce: bool) -> None:
        self._definition_of = definition_of
        self.announce = announce
        """Add found tools to ``tools/list`` and tell the client (stdio sessions)."""
        self._found: dict[str, dict[str, Any]] = {}

    def listed(self) -> list[dict[str, Any]]:
        """The definitions of the tools found so far (empty unless ``announce``)."""
        return list(self._found.values())

    async def search(
        self,
        notify: Callable[[], Awaitable[None]] | None,
        toolset: Toolset,
        arguments: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        """Answer a ``search_tools`` call (a ``CallToolResult`` as a dict).

        Newly found tools are announced, with ``notify``, when asked to.
        """
        try:
            query, limit = search_arguments(dict(arguments or {}))
        except ValueError as exc:
            text = f"Tool search failed: {exc}."
            return {"content": [{"type": "text", "text": text}], "isError": True}
        found = [self._definition_of(e.exposed) for e in find(toolset, query, limit)]
        value = {"tools": found}
        text = json.dumps(value, ensure_ascii=False) if found else f"No tool matched {query!r}."
        new = [d for d in found if d["name"] not in self._found]
        if self.announce and new:
            self._found.update((d["name"], d) for d in new)
            if notify is not None:
                try:
                    await notify()
                except Exception:  # the client went away: the answer below says it all
                    logger.info("could not send tools/list_changed", exc_info=True)
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": value,
            "isError": False,
        }
