"""The HTTP client for streamable-HTTP MCP servers, bounded like the stdio transport.

The SDK bounds each server-sent event (``max_sse_event_size``) but reads a plain JSON
response whole. A server answering one call with 100 MB of JSON would have it all kept,
then parsed. This client's transport counts the bytes of every response that is not an
event stream and stops reading past ``limit``: the SDK then answers the call with a
JSON-RPC error carrying the reason (an ``httpx2.StreamError``, which it reports so), and
nothing more of that response is kept. Event streams are left to the SDK's own per-event
bound, since one stream carries many events for as long as the session lives.

Timeouts are the SDK's own defaults (``create_mcp_http_client``): 30 s to connect, write
and get a connection, 300 s between reads of a stream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping

import httpx2
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

__all__ = ["ResponseTooLarge", "bounded_http_client"]


class ResponseTooLarge(httpx2.StreamError):
    """A response longer than the limit; its message is what the user and model read."""


class _BoundedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        total = 0
        async for chunk in self._inner:
            total += len(chunk)
            if total > self._limit:
                raise ResponseTooLarge(
                    f"the server's response passed zcoder's limit of {self._limit} bytes; "
                    "it was dropped"
                )
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class _BoundedTransport(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        kind = response.headers.get("content-type", "").lower()
        if not kind.startswith("text/event-stream"):
            stream = response.stream
            assert isinstance(stream, httpx2.AsyncByteStream)
            response.stream = _BoundedStream(stream, self._limit)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def bounded_http_client(headers: Mapping[str, str], limit: int) -> httpx2.AsyncClient:
    """An AsyncClient for ``streamable_http_client`` that keeps at most ``limit`` bytes of
    any one non-streamed response."""
    return httpx2.AsyncClient(
        headers=dict(headers),
        timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
        transport=_BoundedTransport(httpx2.AsyncHTTPTransport(), limit),
    )
