"""Which HTTP requests are answered as a stream (SSE): calls whose tool may talk back.

The HTTP endpoint answers in JSON, stateless: one request, one reply. A ``tools/call`` from
a client that accepts ``text/event-stream`` goes to a second, streaming SDK transport when
the tool may send notifications the client listens for, so its progress and log messages
travel on the reply's stream before the result:

- its ``_meta`` carries a progress token, or (2026-07-28) opts in to log messages;
- on the 2025 revisions (no envelope in ``_meta``), the tool takes a ``ToolContext`` or is a
  generator (the only tools that can report progress or log), since there log messages are
  sent whatever the request says.

Every other call keeps the JSON reply (and the direct route).
"""

from __future__ import annotations

from collections.abc import Coroutine, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.types import Receive

    from toolpacks.host._toolset import Toolset

__all__ = ["StreamChooser", "unless_gone"]

_LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


class StreamChooser:
    """Decides, per request, whether a call is answered on an SSE stream."""

    def __init__(self, toolset: Toolset) -> None:
        self._toolset = toolset
        self._talks: dict[str, bool] = {}

    def wants_stream(self, body: bytes, headers: Iterable[tuple[bytes, bytes]]) -> bool:
        """Whether ``body`` is a ``tools/call`` to answer on an SSE reply."""
        if b"tools/call" not in body:
            return False
        if not any(k == b"accept" and b"text/event-stream" in v for k, v in headers):
            return False
        from pydantic_core import from_json

        try:
            value: Any = from_json(body)
        except ValueError:
            return False
        if not isinstance(value, dict) or value.get("method") != "tools/call":
            return False
        params = value.get("params")
        if not isinstance(params, dict):
            return False
        meta = params.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        if "progressToken" in meta or _LOG_LEVEL_KEY in meta:
            return True
        name = params.get("name")
        return _VERSION_KEY not in meta and isinstance(name, str) and self._talks_back(name)

    def _talks_back(self, name: str) -> bool:
        """Whether the tool exposed as ``name`` takes a ``ToolContext`` or is a generator."""
        known = self._talks.get(name)
        if known is None:
            from toolpacks.core.call._plan import plan_of

            try:
                tool = self._toolset.entry(name).tool
            except LookupError:
                return False
            known = tool.is_generator or plan_of(tool).context_param is not None
            if len(self._talks) < 100_000:
                self._talks[name] = known
        return known


async def unless_gone(answer: Coroutine[Any, Any, None], receive: Receive) -> None:
    """Run ``answer``; cancel it when the client closes the connection first.

    On 2026-07-28 a client cancels a call by closing its reply's stream; the direct route
    answers in the request's own task, so it watches ``receive`` for the disconnect.
    """
    import asyncio

    task = asyncio.ensure_future(answer)

    async def gone() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    watch = asyncio.ensure_future(gone())
    try:
        await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not task.done():
            task.cancel()
    if task.done() and not task.cancelled():
        task.result()  # its exception, if any
