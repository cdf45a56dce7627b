"""Bounds on one streamed reply that the HTTP timeouts cannot give.

A read timeout ends a reply only when the server falls silent. A server that sends
keep-alives (SSE ``: ping`` comments, blank lines, Ollama's whitespace) is never silent,
and one that streams content without end never stops either. :func:`watched` wraps a
client's ``chat()`` stream and ends it, closing the response, when

* no progress arrives for ``idle_seconds`` (progress is a new piece of content, reasoning
  or a tool call; keep-alives are dropped by the parsers and never count):
  :class:`ModelStalled`;
* the reply's content and reasoning pass ``max_chars`` characters:
  :class:`ReplyTooLong`.

The agent applies it to every turn's request, so the TUI and ``--prompt`` share it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Final

from zcoder.model.errors import ModelError
from zcoder.model.types import ChatEvent, ContentDelta, ReasoningDelta

__all__ = [
    "DEFAULT_IDLE_SECONDS",
    "DEFAULT_MAX_REPLY_CHARS",
    "IDLE_SETTING",
    "MAX_REPLY_SETTING",
    "ModelStalled",
    "ReplyTooLong",
    "watched",
]

IDLE_SETTING: Final = "ZCODER_IDLE_TIMEOUT"
MAX_REPLY_SETTING: Final = "ZCODER_MAX_REPLY_CHARS"
DEFAULT_IDLE_SECONDS: Final = 300.0
"""As long as the read timeout: a large model may take minutes to load or read a prompt."""
DEFAULT_MAX_REPLY_CHARS: Final = 200_000
"""About 50,000 tokens: far past any max_tokens zcoder asks for, so only a server that
ignores max_tokens (or a model repeating itself for ever on one without it) reaches it."""


class ModelStalled(ModelError):
    """No new content, reasoning or tool call for the idle deadline."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"the server sent no new output for {seconds:g} seconds (only keep-alives, or "
            "nothing); the reply was stopped. The model may be stuck: try again, or set "
            f"{IDLE_SETTING} to wait longer"
        )
        self.seconds = seconds


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
    async with contextlib.AsyncExitStack() as stack:
        if isinstance(stream, AsyncGenerator):
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
                    raise ModelStalled(idle_seconds or 0.0) from None
                raise
            if isinstance(event, ContentDelta | ReasoningDelta):
                chars += len(event.text)
                if max_chars is not None and chars > max_chars:
                    raise ReplyTooLong(max_chars)
            yield event
