"""The HTTP core every model client shares, whatever wire format it speaks.

One ``httpx.AsyncClient`` per client, made on first use; the timeouts; the async context
manager; the streamed chat (a POST whose body is read line by line into a wire format's
parser, closed when the generator is closed); the small JSON requests; the explicit
warm-up; and the mapping of transport failures to ``ModelError``s, with the API key and
secret-like tokens scrubbed from every text that quotes the server (zcoder.model.scrub).

A wire format (zcoder.model.ollama, zcoder.model.openai) adds only what is its own: the
request body, the stream parser, the HTTP error statuses, the messages that name the
server, and the window probes. Environment proxy settings are ignored
(``trust_env=False``): model servers are normally on loopback, and a stray
``HTTP_PROXY`` must not reroute them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from types import TracebackType
from typing import Any, ClassVar, Final, Protocol, Self, TypedDict, Unpack

import httpx

from zcoder import __version__
from zcoder.model.body import BodyReader, ReplyStream
from zcoder.model.errors import ModelConnectionError, ModelError, ModelStreamError
from zcoder.model.limits import DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_REPLY_BYTES
from zcoder.model.protocol import ChatParams, LoadParams
from zcoder.model.scrub import scrub_server_text
from zcoder.model.types import ChatEvent, Message

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_LIST_TIMEOUT",
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_WRITE_TIMEOUT",
    "WARM_UP_NUM_PREDICT",
    "HttpModelClient",
    "HttpOptions",
    "LazyHttpClient",
    "StreamParser",
]

# A model server runs locally: a connect that takes longer than this is not going to succeed.
DEFAULT_CONNECT_TIMEOUT = 5.0
# The longest silence tolerated inside a reply. Loading a large model before the first
# token can take minutes; the user can always stop a turn sooner.
DEFAULT_READ_TIMEOUT = 300.0
DEFAULT_WRITE_TIMEOUT = 30.0
# The model list answers from disk; it must not hang the model picker.
DEFAULT_LIST_TIMEOUT = 10.0
WARM_UP_NUM_PREDICT: Final = 1
"""Tokens a warm-up generates: num_predict is no reason for Ollama to reload a model."""


class LazyHttpClient:
    """An ``httpx.AsyncClient`` made on first use. Making one loads the CA bundle for TLS
    (about 35 ms), which the interactive app would otherwise pay before its first frame;
    its first request (the warm-up) comes after it."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._client: httpx.AsyncClient | None = None

    def get(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(**self._options)
        return self._client

    async def aclose(self) -> None:
        """Close the client, if one was made."""
        if self._client is not None:
            await self._client.aclose()


class HttpOptions(TypedDict, total=False):
    """How a client talks HTTP: its timeouts (seconds; a read timeout of None waits for
    ever), the caps on one streamed reply's size (zcoder.model.body) and, for tests, the
    transport."""

    connect_timeout: float
    read_timeout: float | None
    write_timeout: float
    list_timeout: float
    max_line_bytes: int
    max_reply_bytes: int
    transport: httpx.AsyncBaseTransport | None


class StreamParser(Protocol):
    """A wire format's reader of one streamed reply; a new parser per request."""

    done: bool

    def feed_line(self, line: str) -> list[ChatEvent]:
        """One line of the body: the events it completed."""
        ...

    def finish(self) -> list[ChatEvent]:
        """The body ended: the last events, or ``ModelStreamError`` if the reply was not
        complete."""
        ...


class HttpModelClient:
    """The shared core of a model client; a wire format subclasses it (see the module
    docstring for what it adds).

    ``chat()`` is an async generator: iterate it for events and close it (or cancel the
    task iterating it) to stop; closing it closes the HTTP response, so the server stops
    generating. Use ``contextlib.aclosing`` when breaking out of the loop early.
    """

    chat_path: ClassVar[str]
    """Where a chat request is POSTed, relative to the client's base URL."""

    def __init__(
        self, address: str, *, api_key: str | None = None, **options: Unpack[HttpOptions]
    ) -> None:
        connect_timeout = options.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT)
        read_timeout = options.get("read_timeout", DEFAULT_READ_TIMEOUT)
        write_timeout = options.get("write_timeout", DEFAULT_WRITE_TIMEOUT)
        list_timeout = options.get("list_timeout", DEFAULT_LIST_TIMEOUT)
        self.host = address  # what the header and messages show
        self.read_timeout = read_timeout
        self.max_line_bytes = options.get("max_line_bytes", DEFAULT_MAX_LINE_BYTES)
        self.max_reply_bytes = options.get("max_reply_bytes", DEFAULT_MAX_REPLY_BYTES)
        self._key = api_key or None  # only ever in the Authorization header
        self._list_timeout = httpx.Timeout(list_timeout, connect=connect_timeout)
        headers = {"User-Agent": f"zcoder/{__version__}"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        self._lazy_http = LazyHttpClient(
            base_url=address,
            timeout=httpx.Timeout(
                connect=connect_timeout,
                read=read_timeout,
                write=write_timeout,
                pool=connect_timeout,
            ),
            headers=headers,
            transport=options.get("transport"),
            trust_env=False,
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._lazy_http.aclose()

    @property
    def _http(self) -> httpx.AsyncClient:
        return self._lazy_http.get()

    @property
    def server(self) -> str:
        """How messages name the server (``Ollama at HOST``, ``the server at URL``)."""
        raise NotImplementedError

    # -- what a wire format adds -----------------------------------------------------------

    def _chat_body(
        self, model: str, messages: Sequence[Mapping[str, Any]], params: ChatParams
    ) -> dict[str, Any]:
        """The JSON body of a streamed chat request in this wire format."""
        raise NotImplementedError

    def _stream_parser(self) -> StreamParser:
        raise NotImplementedError

    async def _http_error(self, response: httpx.Response, *, model: str | None) -> ModelError:
        """The error for an HTTP error status (the body was read)."""
        raise NotImplementedError

    def _unreachable(self) -> ModelError:
        """Nothing answered at the address."""
        raise NotImplementedError

    def _timed_out(self) -> ModelError:
        """Nothing arrived within the read timeout."""
        raise NotImplementedError

    async def _whole_reply(
        self, response: httpx.Response, parser: StreamParser, body: BodyReader
    ) -> list[ChatEvent] | None:
        """The events of a reply the server sent whole instead of streamed (read through
        ``body``, within its cap), or None when it streams (as every server zcoder knows
        does, unless this says otherwise)."""
        del response, parser, body
        return None

    def _warm_up_messages(self, messages: Sequence[Message]) -> list[Message]:
        """What a warm-up sends for a turn that starts with ``messages``."""
        return list(messages)

    # -- the shared requests ---------------------------------------------------------------

    def chat(
        self, model: str, messages: Sequence[Mapping[str, Any]], **params: Unpack[ChatParams]
    ) -> ReplyStream:
        """Stream one reply: deltas, tool calls, then exactly one ``Done`` last.

        Raises a ``ModelError`` subclass on failure, before or during the stream; a body
        past its caps raises ``ReplyTooLarge`` (zcoder.model.body).
        """
        body = BodyReader(
            self.server, max_line_bytes=self.max_line_bytes, max_reply_bytes=self.max_reply_bytes
        )
        return ReplyStream(self._chat_events(model, messages, params, body), body)

    async def _chat_events(
        self,
        model: str,
        messages: Sequence[Mapping[str, Any]],
        params: ChatParams,
        body: BodyReader,
    ) -> AsyncGenerator[ChatEvent, None]:
        request = self._chat_body(model, messages, params)
        got_response = False
        try:
            # Asked for as it is, so no decompression can turn a small chunk into a huge one.
            async with self._http.stream(
                "POST", self.chat_path, json=request, headers={"Accept-Encoding": "identity"}
            ) as response:
                got_response = True
                if response.status_code >= 400:
                    await response.aread()
                    raise await self._http_error(response, model=model)
                parser = self._stream_parser()
                whole = await self._whole_reply(response, parser, body)
                if whole is not None:
                    for event in whole:
                        yield event
                    return
                async for line in body.lines(response.aiter_bytes()):
                    for event in parser.feed_line(line):
                        yield event
                    if parser.done:
                        return
                for event in parser.finish():
                    yield event
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, before_response=not got_response) from None

    async def warm_up(
        self, model: str, messages: Sequence[Message], **params: Unpack[LoadParams]
    ) -> None:
        """Load ``model`` as a turn that starts with ``messages`` and the same ``params``
        will use it: a chat of ``WARM_UP_NUM_PREDICT`` tokens, so the server keeps the
        model and the evaluated prefix for the first turn. The reply is discarded."""
        stream = self.chat(
            model,
            self._warm_up_messages(messages),
            num_predict=WARM_UP_NUM_PREDICT,
            **params,
        )
        async with aclosing(stream) as events:
            async for _event in events:
                pass

    async def _json(
        self, method: str, path: str, *, model: str | None = None, body: Any = None
    ) -> Any:
        """One small JSON request (a model list, model details), decoded; HTTP errors,
        transport failures and a body that is not JSON raise ``ModelError``."""
        try:
            response = await self._http.request(method, path, json=body, timeout=self._list_timeout)
            if response.status_code >= 400:
                raise await self._http_error(response, model=model)
            return response.json()
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, before_response=True) from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ModelStreamError(f"malformed {path} response from {self._source}") from None

    async def _json_or_none(self, url: str) -> object:
        """A GET of server metadata, decoded; None on any failure (an optional probe)."""
        try:
            response = await self._http.get(url, timeout=self._list_timeout)
            if response.status_code != 200:
                return None
            return response.json()
        except (httpx.HTTPError, json.JSONDecodeError, UnicodeDecodeError):
            return None

    @property
    def _source(self) -> str:
        """How a malformed-response message names the server."""
        return self.server

    def _scrub(self, text: str) -> str:
        """Server text with the API key (in any form) and secret-like tokens removed."""
        return scrub_server_text(text, (self._key,))

    def _transport_error(self, exc: httpx.HTTPError, *, before_response: bool) -> ModelError:
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
            return self._unreachable()
        if isinstance(exc, httpx.TimeoutException):
            return self._timed_out()
        detail = type(exc).__name__
        if text := self._scrub(str(exc)).strip():
            detail += f": {text}"
        if isinstance(exc, httpx.TransportError):
            when = "before it answered" if before_response else "during the reply"
            return ModelConnectionError(
                f"the connection to {self.server} broke {when} ({detail}); try again",
                before_response=before_response,
            )
        return ModelConnectionError(
            f"request to {self.server} failed: {detail}", before_response=False
        )
