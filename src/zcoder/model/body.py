"""Reading a streamed reply's body as lines, within bounds on its size.

httpx's ``aiter_lines`` holds everything up to the next newline, so a server that streams
one line without end fills memory without bound (2.7 GB in 14 s was measured). The HTTP
core (zcoder.model.http) reads a chat's body through a :class:`BodyReader` instead: it
splits the bytes into lines itself and stops the reply with :class:`ReplyTooLarge` when

* one line passes ``max_line_bytes`` before its newline (the reader never holds more of
  a line than that), or
* the whole body passes ``max_reply_bytes``.

Both bounds are far above what a real reply sends. One line is one event: a token or a
few (about 100 to 400 bytes with its JSON framing), or a whole tool call, or, from a
server that does not stream, the whole reply; a 32,000-token reply (about 128 KB of text)
quoted as JSON takes at most some 800 KB even if every character is escaped. The whole
body of such a reply streamed token by token is 4 to 13 MB (Ollama's NDJSON records are
about 120 bytes each, an OpenAI-compatible server's chunks up to about 400).

The reader also tells the idle watchdog (zcoder.model.watch) what arrived, so that a stall
is reported as what it was: nothing, keep-alives, or part of a line that never ended.
:class:`ReplyStream` is a chat's events with its reader attached.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Final, Literal, Self

from zcoder.base.plural import byte_size
from zcoder.model.errors import ModelError
from zcoder.model.limits import (
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_REPLY_BYTES,
    MAX_LINE_SETTING,
    MAX_REPLY_BYTES_SETTING,
)
from zcoder.model.types import ChatEvent

__all__ = [
    "BodyReader",
    "ReplyStream",
    "ReplyTooLarge",
]

_LINE_END: Final = re.compile(rb"\r\n|\r|\n")


_size = byte_size


class ReplyTooLarge(ModelError):
    """The server sent a line, or a whole reply, past its cap; the reply was stopped.

    ``kind`` says which cap (``line`` or ``reply``), ``limit`` its size in bytes and
    ``bytes_read`` how much of the body had been read when the reply was stopped. Not
    asked again: the same server would most likely send the same again."""

    def __init__(
        self, kind: Literal["line", "reply"], limit: int, bytes_read: int, server: str
    ) -> None:
        if kind == "line":
            what = f"{server} sent a line longer than {_size(limit)} without ending it"
            setting = MAX_LINE_SETTING
        else:
            what = f"{server} sent more than {_size(limit)} in one reply"
            setting = MAX_REPLY_BYTES_SETTING
        super().__init__(
            f"{what}; the reply was stopped after {_size(bytes_read)} (no model server "
            f"sends this much: check the server, or set {setting} higher)"
        )
        self.kind = kind
        self.limit = limit
        self.bytes_read = bytes_read


class BodyReader:
    """Splits one reply's body into lines (ended by ``\\n``, ``\\r\\n`` or ``\\r``, as
    httpx does), within the caps; a new reader per request.

    ``bytes_read`` counts the body so far and ``unfinished`` the bytes of the line that is
    still waiting for its end (never more than ``max_line_bytes``)."""

    def __init__(
        self,
        server: str,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ) -> None:
        self.server = server
        self.max_line_bytes = max_line_bytes
        self.max_reply_bytes = max_reply_bytes
        self.bytes_read = 0
        self._held = bytearray()
        self._after_cr = False  # the last chunk ended in \r: a \n next belongs to it

    @property
    def unfinished(self) -> int:
        return len(self._held)

    def feed(self, chunk: bytes) -> list[str]:
        """The lines ``chunk`` completes."""
        self._count(len(chunk))
        if self._after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._after_cr = chunk.endswith(b"\r")
        lines: list[str] = []
        start = 0
        for end in _LINE_END.finditer(chunk):
            self._hold(chunk, start, end.start())
            lines.append(self._take())
            start = end.end()
        self._hold(chunk, start, len(chunk))
        return lines

    def finish(self) -> list[str]:
        """The body ended: its last line, if it had no line end."""
        return [self._take()] if self._held else []

    async def lines(self, chunks: AsyncIterator[bytes]) -> AsyncGenerator[str, None]:
        """Every line of the body ``chunks`` brings."""
        async for chunk in chunks:
            for line in self.feed(chunk):
                yield line
        for line in self.finish():
            yield line

    async def read_all(self, chunks: AsyncIterator[bytes]) -> bytes:
        """The whole body (a reply a server sent as one JSON document), within the reply
        cap only: such a body is one line by nature."""
        body = bytearray()
        async for chunk in chunks:
            self._count(len(chunk))
            body += chunk
        return bytes(body)

    def _count(self, size: int) -> None:
        self.bytes_read += size
        if self.bytes_read > self.max_reply_bytes:
            raise ReplyTooLarge("reply", self.max_reply_bytes, self.bytes_read, self.server)

    def _hold(self, chunk: bytes, start: int, end: int) -> None:
        if len(self._held) + end - start > self.max_line_bytes:
            self._held.clear()
            raise ReplyTooLarge("line", self.max_line_bytes, self.bytes_read, self.server)
        self._held += chunk[start:end]

    def _take(self) -> str:
        line = self._held.decode("utf-8", "replace")
        self._held.clear()
        return line


class ReplyStream(AsyncIterator[ChatEvent]):
    """A chat's events (``events``, an async generator) with the reader of its body, for
    the idle watchdog; closing it closes the request."""

    def __init__(self, events: AsyncGenerator[ChatEvent, None], body: BodyReader) -> None:
        self._events = events
        self.body = body

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> ChatEvent:
        return await anext(self._events)

    async def aclose(self) -> None:
        await self._events.aclose()
