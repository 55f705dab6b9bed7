"""Answering the model's tool searches, on every road, with what ``Toolset.search`` finds.

- OpenAI Responses: a ``tool_search_call`` item (client execution) gets a
  ``tool_search_output`` item carrying the found functions, grouped by pack in namespaces;
- Anthropic: a call of the client-side ``search_tools`` tool gets a ``tool_result`` whose
  content is ``tool_reference`` blocks (the API then loads those deferred tools);
- every other format (and MCP, and the adapters): a call of ``search_tools`` gets a result
  whose JSON text is ``{"tools": [definitions in that format]}``.

A search returns deferred tools only: the others are already in front of the model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from toolpacks.export._api import definition, parse_tool_calls, render_result
from toolpacks.export._calls import ToolCall, as_list, as_mapping, plain
from toolpacks.export._deferred import Listed, meta_name, namespaces
from toolpacks.export._formats import ExportFormat, check_format

if TYPE_CHECKING:
    from toolpacks.core._result import ToolResult
    from toolpacks.export._protocol import ExportableTool


class ToolEntry(Protocol):
    """What a search reads of a toolset's entry (``host._toolset.ToolEntry``)."""

    @property
    def exposed(self) -> str: ...
    @property
    def pack(self) -> str: ...
    @property
    def tool(self) -> ExportableTool: ...


class Toolset(Protocol):
    """What answering searches needs of a toolset (``host._toolset.Toolset``).

    That module imports this one: a protocol here keeps the two out of an import cycle.
    """

    @property
    def deferred(self) -> frozenset[str]: ...
    def __len__(self) -> int: ...
    def names(self) -> list[str]: ...
    def entry(self, name: str) -> ToolEntry: ...
    def search(self, query: str, *, limit: int = ..., mode: str = ...) -> list[Any]: ...
    async def call_many(self, calls: Any) -> list[ToolResult]: ...


__all__ = ["FoundResult", "execute", "find", "found_definitions", "search_arguments"]

MAX_LIMIT = 20
"""The most tools one search returns."""


@dataclass(frozen=True, slots=True)
class FoundResult:
    """A search's answer as the renderers see it (an ``ExportableResult``)."""

    value: Any
    content: str
    call_id: str | None
    tool_name: str
    is_error: bool = False

    @property
    def structured(self) -> dict[str, Any] | None:
        """The value when it is a JSON object."""
        return self.value if isinstance(self.value, dict) else None


def search_arguments(arguments: Any) -> tuple[str, int]:
    """The query and limit of a search call (a mapping, or JSON object text).

    Raises:
        ValueError: No non-empty string ``query``, or a ``limit`` that is not an integer.
    """
    data = plain(arguments)
    if isinstance(data, str | bytes):
        data = json.loads(data or "{}")
    if not isinstance(data, Mapping):
        raise ValueError("the search arguments must be an object with a 'query'")
    query = data.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ValueError("the search needs a non-empty string 'query'")
    limit = data.get("limit", 5)
    if limit is None:
        limit = 5
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise ValueError("'limit' must be an integer")
    return query, max(1, min(limit, MAX_LIMIT))


def find(toolset: Toolset, query: str, limit: int = 5) -> list[ToolEntry]:
    """The deferred tools that best match ``query``, best first (at most ``limit``)."""
    deferred = toolset.deferred
    if not deferred:
        return []
    shown = len(toolset) - len(deferred)
    hits = toolset.search(query, limit=limit + shown)
    return [toolset.entry(h.exposed) for h in hits if h.exposed in deferred][:limit]


def found_definitions(entries: Sequence[ToolEntry], format: str) -> dict[str, Any]:
    """``{"tools": [...]}``: the found tools' definitions in ``format``."""
    fmt = check_format(format)
    return {"tools": [definition(e.tool, fmt, name=e.exposed) for e in entries]}


def _answer(toolset: Toolset, call: ToolCall, fmt: ExportFormat) -> dict[str, Any]:
    """The answer to a call of the ``search_tools`` meta tool, in ``fmt``."""
    try:
        query, limit = search_arguments(call.arguments)
    except ValueError as exc:
        failed = FoundResult(None, f"Tool search failed: {exc}.", call.id, call.name, True)
        return render_result(failed, fmt, call=call)
    found = find(toolset, query, limit)
    if fmt == "anthropic" and found:
        refs = [{"type": "tool_reference", "tool_name": e.exposed} for e in found]
        return {"type": "tool_result", "tool_use_id": call.id, "content": refs}
    if not found:
        text = f"No tool matched {query!r}; try other words."
        return render_result(FoundResult({"tools": []}, text, call.id, call.name), fmt, call=call)
    value = found_definitions(found, fmt)
    text = json.dumps(value, ensure_ascii=False)
    return render_result(FoundResult(value, text, call.id, call.name), fmt, call=call)


def _responses_output(toolset: Toolset, item: Mapping[str, Any]) -> dict[str, Any]:
    """The ``tool_search_output`` item answering a client ``tool_search_call`` item."""
    try:
        query, limit = search_arguments(item.get("arguments"))
        found = find(toolset, query, limit)
    except ValueError:
        found = []
    listed = [Listed(e.exposed, e.pack, e.tool, False) for e in found]
    out: dict[str, Any] = {
        "type": "tool_search_output",
        "execution": "client",
        "status": "completed",
        "tools": namespaces(listed, "openai-responses", False),
    }
    if item.get("call_id"):
        out["call_id"] = item["call_id"]
    return out


async def execute(toolset: Toolset, payload: Any, format: str) -> list[dict[str, Any]]:
    """``Toolset.execute``: run the calls of ``payload``, answering tool searches here.

    Results come back in the order of the calls (for Responses, of the output items).
    """
    fmt = check_format(format)
    calls = parse_tool_calls(payload, fmt)
    meta = meta_name(toolset.names()) if toolset.deferred else None
    run = [c for c in calls if c.name != meta]
    results = await toolset.call_many(run)
    rendered = iter([render_result(r, fmt, call=c) for r, c in zip(results, run, strict=True)])
    answers = [_answer(toolset, c, fmt) if c.name == meta else next(rendered) for c in calls]
    if fmt != "openai-responses" or not toolset.deferred:
        return answers
    return _in_item_order(toolset, payload, answers)


def _in_item_order(
    toolset: Toolset, payload: Any, answers: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Responses answers in the order of the output items, tool searches answered too."""
    data = plain(payload)
    if isinstance(data, Mapping):
        data = data.get("output", [data])
    pending = iter(answers)
    out: list[dict[str, Any]] = []
    for raw in as_list(data, "the output items", "openai-responses"):
        item = as_mapping(raw, "an output item", "openai-responses")
        kind = item.get("type")
        if kind == "function_call":
            out.append(next(pending))
        elif kind == "tool_search_call" and item.get("execution", "client") == "client":
            out.append(_responses_output(toolset, item))
    return out
