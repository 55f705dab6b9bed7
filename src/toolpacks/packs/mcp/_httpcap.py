"""Answers of a server reached over streamable HTTP, bounded by ``max_message_bytes``.

The SDK reads a plain JSON answer whole, whatever its size, and cuts an SSE event at its own
1 MiB. toolpacks applies one cap to both: the SSE limit is handed to the SDK, and a JSON
answer is read through a stream that stops at the cap. Stopping raises ``httpx2.StreamError``,
which the SDK turns into an error answer to that very request, so the call fails with a
message naming the cap and the connection goes on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx2

__all__ = ["capped_transport"]


def capped_transport(cap: int) -> httpx2.AsyncBaseTransport:
    """An ``httpx2`` transport whose non-SSE answers stop at ``cap`` bytes."""
    import httpx2

    class AnswerTooLarge(httpx2.StreamError):
        """The server's answer is over ``max_message_bytes``."""

    class CappedStream(httpx2.AsyncByteStream):
        def __init__(self, inner: httpx2.AsyncByteStream) -> None:
            self._inner = inner

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in self._inner:
                seen += len(chunk)
                if seen > cap:
                    raise AnswerTooLarge(
                        f"the server's answer is over max_message_bytes ({cap} bytes); "
                        "ask for less, or raise max_message_bytes for this server"
                    )
                yield chunk

        async def aclose(self) -> None:
            await self._inner.aclose()

    class CappedTransport(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self._inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            response = await self._inner.handle_async_request(request)
            kind = response.headers.get("content-type", "")
            if not kind.startswith("text/event-stream"):  # SSE: the SDK caps each event
                assert isinstance(response.stream, httpx2.AsyncByteStream)
                response.stream = CappedStream(response.stream)
            return response

        async def aclose(self) -> None:
            await self._inner.aclose()

    return CappedTransport()
