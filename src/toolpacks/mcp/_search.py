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
from typing import TYPE_CHECKING, Any

from toolpacks.export._api import definition
from toolpacks.export._deferred import Listed, meta_name, search_tool
from toolpacks.host._search_tools import find, search_arguments

if TYPE_CHECKING:
    from toolpacks.host._toolset import Toolset

__all__ = ["Found", "up_front"]

logger = logging.getLogger("toolpacks.mcp")


def up_front(toolset: Toolset) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str | None]:
    """Every tool's MCP definition, what ``tools/list`` shows, and the search tool's name.

    Without deferred tools the list is every definition and there is no search tool.
    """
    every = toolset.definitions("mcp", defer=False)
    deferred = toolset.deferred
    if not deferred:
        return every, every, None
    listed = [Listed(e.exposed, e.pack, e.tool, e.deferred) for e in toolset.entries()]
    shown = [d for d in every if d["name"] not in deferred]
    return every, [*shown, definition(search_tool(listed), "mcp")], meta_name(toolset.names())


class Found:
    """The deferred tools searches found in this session, in the order they were found."""

    def __init__(self, every: list[dict[str, Any]], announce: bool) -> None:
        self._every = {d["name"]: d for d in every}
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
        found = [self._every[e.exposed] for e in find(toolset, query, limit)]
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
