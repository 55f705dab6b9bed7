"""The ``search_tools`` tool for frameworks whose tool list is fixed up front.

openai-agents and langchain take a list of tools; a toolset with deferred tools gives them
its tools (deferred ones too, so each stays callable by name) and this tool, whose result is
``{"tools": [...]}``: the found deferred tools' neutral definitions.
"""

from __future__ import annotations

from typing import Any

from toolpacks.core._tool import Tool
from toolpacks.export._deferred import SEARCH_SCHEMA, Listed, search_tool
from toolpacks.host._toolset import Toolset
from toolpacks.host.search._tools import find, found_definitions

__all__ = ["search_toolset"]


def search_toolset(toolset: Toolset) -> Toolset | None:
    """A toolset of one tool, ``search_tools``, searching ``toolset``; None without deferral."""
    if not toolset.deferred:
        return None
    listed = [Listed(e.exposed, e.pack, e.tool, e.deferred) for e in toolset.entries()]
    meta = search_tool(listed)

    def search(query: str, limit: int = 5) -> dict[str, Any]:
        return found_definitions(find(toolset, query, max(1, min(limit, 20))), "neutral")

    made = Tool(
        name=meta.name,
        func=search,
        description=meta.description,
        parameters=dict(SEARCH_SCHEMA),
        read_only=True,
    )
    return Toolset([made], agent=toolset.agent)
