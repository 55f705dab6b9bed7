"""Definitions of a toolset with deferred tools: what is sent up front, per provider.

- ``openai-responses``: one ``namespace`` tool per pack, deferred functions marked
  ``defer_loading: true``, and a ``tool_search`` tool (``execution: "client"`` by default,
  answered by toolpacks; ``"server"`` lets OpenAI search the deferred functions itself);
- ``anthropic``: deferred tools marked ``defer_loading: true``, and a tool search tool: by
  default a client-side ``search_tools`` tool answered with ``tool_reference`` blocks, or
  Anthropic's hosted ``tool_search_tool_bm25_20251119`` / ``_regex_20251119``;
- every other format: the tools not deferred, and a ``search_tools`` tool whose result
  carries the found tools' definitions in that format.

Everything here is a pure function of what it is given, like the rest of ``export``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolpacks.exceptions import ExportError
from toolpacks.export._api import definition
from toolpacks.export._formats import ExportFormat, StrictMode, check_format
from toolpacks.export._protocol import ExportableTool

__all__ = [
    "SEARCH_TOOLS",
    "Listed",
    "SearchTool",
    "ToolSearchMode",
    "deferred_definitions",
    "exported",
    "meta_name",
    "namespaces",
    "search_tool",
]

SEARCH_TOOLS = "search_tools"
"""The name of the search meta tool (``toolpacks_search_tools`` if a real tool has it)."""

ToolSearchMode = Literal["client", "server", "bm25", "regex"]
"""How the model searches: ``client`` (toolpacks answers, the default), ``server`` (OpenAI's
hosted search; for Anthropic, its hosted BM25 search), ``bm25`` or ``regex`` (Anthropic's
hosted tool search tools)."""

_ANTHROPIC_HOSTED = {
    "bm25": ("tool_search_tool_bm25_20251119", "tool_search_tool_bm25"),
    "server": ("tool_search_tool_bm25_20251119", "tool_search_tool_bm25"),
    "regex": ("tool_search_tool_regex_20251119", "tool_search_tool_regex"),
}

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "What the tool you need does, in a few words (or part of its name).",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 20,
            "default": 5,
            "description": "How many tools to return at most.",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}
"""The search tool's arguments: a query, and how many tools to return."""


@dataclass(frozen=True, slots=True)
class _Hints:
    read_only: bool | None = True
    destructive: bool | None = False
    idempotent: bool | None = True
    open_world: bool | None = False


@dataclass(frozen=True, slots=True)
class SearchTool:
    """The search meta tool as the exporters see it (an ``ExportableTool``)."""

    name: str
    description: str
    input_schema: dict[str, Any] = field(default_factory=lambda: SEARCH_SCHEMA)
    output_schema: dict[str, Any] | None = None
    title: str | None = "Search tools"
    instructions: str | None = None
    hints: _Hints = field(default_factory=_Hints)


@dataclass(frozen=True, slots=True)
class Listed:
    """One tool of a toolset as the deferred export needs it."""

    exposed: str
    """The name the model sees."""
    pack: str
    """Its pack ("" for a tool of no pack)."""
    tool: ExportableTool
    """The tool."""
    deferred: bool
    """Sent only once a search finds it."""


def exported(
    entries: Sequence[Any], format: str, defer: bool, options: dict[str, Any]
) -> list[dict[str, Any]]:
    """A toolset's definitions of its entries (``ToolEntry``).

    With ``defer``, as ``deferred_definitions``; else every tool, as ``definitions``.
    """
    if defer:
        listed = [Listed(e.exposed, e.pack, e.tool, e.deferred) for e in entries]
        return deferred_definitions(listed, format, **options)
    from toolpacks.export._api import definitions

    plain = {k: v for k, v in options.items() if k not in ("tool_search", "loaded")}
    pairs = ((e.exposed, e.tool) for e in entries)
    return definitions(pairs, format, **plain)  # type: ignore[arg-type]


def meta_name(names: Collection[str]) -> str:
    """``search_tools``, unless a real tool of the toolset is named so."""
    return SEARCH_TOOLS if SEARCH_TOOLS not in names else f"toolpacks_{SEARCH_TOOLS}"


def search_tool(listed: Sequence[Listed]) -> SearchTool:
    """The search meta tool for ``listed``, its description naming what can be found."""
    hidden = [t for t in listed if t.deferred]
    packs = sorted({t.pack for t in hidden if t.pack})
    where = f" (packs: {', '.join(packs)})" if packs else ""
    return SearchTool(
        meta_name({t.exposed for t in listed}),
        f"Search {len(hidden)} more tools that are not loaded yet{where}, by what they do. "
        "Returns the best matches; call a found tool by its name.",
    )


def _check_mode(fmt: ExportFormat, mode: object) -> ToolSearchMode:
    allowed: tuple[str, ...] = ("client",)
    if fmt == "openai-responses":
        allowed = ("client", "server")
    elif fmt == "anthropic":
        allowed = ("client", "server", "bm25", "regex")
    if mode not in allowed:
        raise ExportError(
            f"tool_search={mode!r} is not available for {fmt}; use one of {', '.join(allowed)}"
        )
    return mode  # type: ignore[return-value]


def deferred_definitions(
    listed: Sequence[Listed],
    format: str,
    *,
    tool_search: ToolSearchMode = "client",
    loaded: Iterable[str] = (),
    strict: StrictMode = False,
    include_instructions: bool = True,
) -> list[dict[str, Any]]:
    """What to send up front for a toolset with deferred tools (see the module docstring).

    Args:
        listed: Every tool of the toolset, deferred or not, in the order to send them.
        format: The provider format.
        tool_search: How the model searches (``ToolSearchMode``); ``client`` by default.
        loaded: Exposed names of deferred tools to send as if not deferred (found by an
            earlier search), for the formats whose search result is a list of definitions.
        strict: Strict mode, as for ``definitions``.
        include_instructions: Append each tool's instructions to its description.

    Raises:
        ExportError: As ``definitions``, or a ``tool_search`` the format has not.
    """
    fmt = check_format(format)
    mode = _check_mode(fmt, tool_search)
    opts: dict[str, Any] = {"strict": strict, "include_instructions": include_instructions}
    if fmt == "openai-responses":
        return [*namespaces(listed, fmt, True, **opts), _responses_search(listed, mode)]
    if fmt == "anthropic":
        out = [_marked(definition(t.tool, fmt, name=t.exposed, **opts), t) for t in listed]
        if mode == "client":
            return [*out, definition(search_tool(listed), fmt)]
        kind, name = _ANTHROPIC_HOSTED[mode]
        return [*out, {"type": kind, "name": name}]
    shown = set(loaded)
    out = [
        definition(t.tool, fmt, name=t.exposed, **opts)
        for t in listed
        if not t.deferred or t.exposed in shown
    ]
    return [*out, definition(search_tool(listed), fmt)]


def _marked(d: dict[str, Any], t: Listed) -> dict[str, Any]:
    if t.deferred:
        d["defer_loading"] = True
    return d


def namespaces(
    listed: Sequence[Listed], fmt: ExportFormat, mark: bool, **opts: Any
) -> list[dict[str, Any]]:
    """Responses tools grouped in one ``namespace`` per pack (tools of no pack stay alone).

    With ``mark``, deferred functions carry ``defer_loading: true``; without it (a search
    result loading them) they do not.
    """
    groups: dict[str, list[dict[str, Any]]] = {}
    alone: list[dict[str, Any]] = []
    for t in listed:
        d = definition(t.tool, fmt, name=t.exposed, **opts)
        if mark:
            _marked(d, t)
        (groups.setdefault(t.pack, []) if t.pack else alone).append(d)
    spaces = [
        {"type": "namespace", "name": pack, "description": _pack_text(pack), "tools": tools}
        for pack, tools in groups.items()
    ]
    return [*spaces, *alone]


def _pack_text(pack: str) -> str:
    return f"Tools of the {pack!r} pack."


def _responses_search(listed: Sequence[Listed], mode: ToolSearchMode) -> dict[str, Any]:
    if mode == "server":
        return {"type": "tool_search", "execution": "server"}
    meta = search_tool(listed)
    return {
        "type": "tool_search",
        "execution": "client",
        "description": meta.description,
        "parameters": dict(SEARCH_SCHEMA),
    }
