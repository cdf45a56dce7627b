"""Bounds on one streamed reply that the HTTP timeouts cannot give.

A read timeout ends a reply only when the server falls silent. A server that sends
keep-alives (SSE ``: ping`` comments, blank lines, Ollama's whitespace) is never silent,
and one that streams content without end never stops either. :func:`watched` wraps a
client's ``chat()`` stream and ends it, closing the response, when

* no progress arrives for ``idle_seconds`` (progress is a new piece of content, reasoning
  or a tool call; keep-alives are dropped by the parsers and never count, and neither do
  the bytes of a line that has not ended): :class:`ModelStalled`, which says what did
  arrive when the stream is a ``ReplyStream`` (zcoder.model.body) that knows;
* the reply's content and reasoning pass ``max_chars`` characters:
  :class:`ReplyTooLong`.

The size of the body itself (a line without end, keep-alives without end) is bounded
where it is read, by zcoder.model.body. The agent applies this to every turn's request,
so the TUI and ``--prompt`` share it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator

from zcoder.model.body import BodyReader, ReplyStream
from zcoder.model.errors import ModelError
from zcoder.model.limits import (
    DEFAULT_IDLE_SECONDS,
    DEFAULT_MAX_REPLY_CHARS,
    IDLE_SETTING,
    MAX_REPLY_SETTING,
)
from zcoder.model.types import ChatEvent, ContentDelta, ReasoningDelta

__all__ = [
    "ModelStalled",
    "ReplyTooLong",
    "watched",
]


class ModelStalled(ModelError):
    """No new content, reasoning or tool call for the idle deadline. ``arrived`` says what
    the server sent meanwhile, when known: ``nothing``, ``keep-alives`` (lines without
    output) or ``unfinished line`` (``unfinished`` bytes of a line it never ended)."""

    def __init__(self, seconds: float, arrived: str | None = None, unfinished: int = 0) -> None:
        sent = {
            None: "only keep-alives, or nothing",
            "nothing": "nothing at all",
            "keep-alives": "only keep-alives or records without output",
            "unfinished line": f"{unfinished:,} bytes of a line it never ended",
        }[arrived]
        super().__init__(
            f"the server sent no new output for {seconds:g} seconds ({sent}); the reply "
            "was stopped. The model may be stuck: try again, or set "
            f"{IDLE_SETTING} to wait longer"
        )
        self.seconds = seconds
        self.arrived = arrived


class ReplyTooLong(ModelError):
    """The reply passed the output cap without ending."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"the reply passed {limit:,} characters without ending (the server did not stop "
            f"it at the output limit); it was stopped. Set {MAX_REPLY_SETTING} higher if a "
            "reply should be this long"
        )
        self.limit = limit


async def watched(
    stream: AsyncIterator[ChatEvent],
    *,
    idle_seconds: float | None = DEFAULT_IDLE_SECONDS,
    max_chars: int | None = DEFAULT_MAX_REPLY_CHARS,
) -> AsyncGenerator[ChatEvent, None]:
    """``stream``'s events, ended by ModelStalled or ReplyTooLong (see the module
    docstring); ``None`` turns a bound off. The stream is closed on every path."""
    chars = 0
    body = stream.body if isinstance(stream, ReplyStream) else None
    read_at_event = 0  # the body's bytes when the last event came
    async with contextlib.AsyncExitStack() as stack:
        if isinstance(stream, AsyncGenerator | ReplyStream):
            stack.push_async_callback(stream.aclose)
        while True:
            deadline = asyncio.timeout(idle_seconds)
            try:
                async with deadline:
                    event = await anext(stream)
            except StopAsyncIteration:
                return
            except TimeoutError:
                if deadline.expired():
                    raise _stalled(idle_seconds or 0.0, body, read_at_event) from None
                raise
            if body is not None:
                read_at_event = body.bytes_read
            if isinstance(event, ContentDelta | ReasoningDelta):
                chars += len(event.text)
                if max_chars is not None and chars > max_chars:
                    raise ReplyTooLong(max_chars)
            yield event


def _stalled(seconds: float, body: BodyReader | None, read_at_event: int) -> ModelStalled:
    """The stall, saying what arrived since the last event when the body is known."""
    if body is None:
        return ModelStalled(seconds)
    if body.unfinished:
        return ModelStalled(seconds, "unfinished line", body.unfinished)
    return ModelStalled(seconds, "keep-alives" if body.bytes_read > read_at_event else "nothing")
