"""The async Ollama HTTP client: ``/api/chat`` streamed as NDJSON, ``/api/tags``, and the
model facts the context window is sized from (``/api/show`` and ``/api/ps``)."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping, Sequence
from types import TracebackType
from typing import Any, Self

import httpx

from zcoder import __version__
from zcoder.model.context import loaded_context_length, trained_context_length
from zcoder.model.errors import (
    ModelConnectionError,
    ModelError,
    ModelHTTPError,
    ModelNotFound,
    ModelStreamError,
    ModelTimeout,
    NotOllama,
    OllamaUnreachable,
    ToolsUnsupported,
)
from zcoder.model.host import DEFAULT_HOST, normalize_host
from zcoder.model.scrub import SCAN_LIMIT, scrub_server_text, server_error_summary
from zcoder.model.stream import ChatStreamParser
from zcoder.model.types import ChatEvent

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_LIST_TIMEOUT",
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_WRITE_TIMEOUT",
    "LazyHttpClient",
    "OllamaClient",
    "build_chat_request",
]

# Ollama runs locally: a connect that takes longer than this is not going to succeed.
DEFAULT_CONNECT_TIMEOUT = 5.0
# The longest silence tolerated inside a reply. Loading a large model before the first
# token can take minutes; the user can always stop a turn sooner.
DEFAULT_READ_TIMEOUT = 300.0
DEFAULT_WRITE_TIMEOUT = 30.0
# /api/tags answers from disk; it must not hang the model picker.
DEFAULT_LIST_TIMEOUT = 10.0


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


def build_chat_request(
    model: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    think: bool | None = None,
    num_predict: int | None = None,
    options: Mapping[str, Any] | None = None,
    num_ctx: int | None = None,
    keep_alive: str | int | None = None,
) -> dict[str, Any]:
    """The JSON body of a streamed ``/api/chat`` request.

    ``num_ctx`` goes into ``options`` (the context window Ollama allocates when it loads
    the model); ``keep_alive`` is a top-level field (how long the model stays loaded after
    the request: a duration such as ``"30m"``, seconds, or negative for ever).
    """
    body: dict[str, Any] = {
        "model": model,
        "messages": [dict(message) for message in messages],
        "stream": True,
    }
    if tools:
        body["tools"] = [dict(tool) for tool in tools]
    if think is not None:
        body["think"] = think
    merged = dict(options or {})
    if num_predict is not None:
        merged["num_predict"] = num_predict
    if num_ctx is not None:
        merged["num_ctx"] = num_ctx
    if merged:
        body["options"] = merged
    if keep_alive is not None:
        body["keep_alive"] = keep_alive
    return body


class OllamaClient:
    """An async client for one Ollama server.

    ``chat()`` is an async generator: iterate it for events and close it (or cancel the
    task iterating it) to stop; closing it closes the HTTP response, so Ollama stops
    generating. Use ``contextlib.aclosing`` when breaking out of the loop early.
    Environment proxy settings are ignored (``trust_env=False``): Ollama is normally on
    loopback, and a stray ``HTTP_PROXY`` must not reroute it.
    """

    def __init__(
        self,
        host: str = DEFAULT_HOST,
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        read_timeout: float | None = DEFAULT_READ_TIMEOUT,
        write_timeout: float = DEFAULT_WRITE_TIMEOUT,
        list_timeout: float = DEFAULT_LIST_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.host = normalize_host(host)
        self.read_timeout = read_timeout
        self._list_timeout = httpx.Timeout(list_timeout, connect=connect_timeout)
        self._lazy_http = LazyHttpClient(
            base_url=self.host,
            timeout=httpx.Timeout(
                connect=connect_timeout,
                read=read_timeout,
                write=write_timeout,
                pool=connect_timeout,
            ),
            headers={"User-Agent": f"zcoder/{__version__}"},
            transport=transport,
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

    async def chat(
        self,
        model: str,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        think: bool | None = None,
        num_predict: int | None = None,
        options: Mapping[str, Any] | None = None,
        num_ctx: int | None = None,
        keep_alive: str | int | None = None,
    ) -> AsyncGenerator[ChatEvent, None]:
        """Stream one reply: deltas, tool calls, then exactly one ``Done`` last.

        Raises a ``ModelError`` subclass on failure, before or during the stream.
        """
        body = build_chat_request(
            model,
            messages,
            tools=tools,
            think=think,
            num_predict=num_predict,
            options=options,
            num_ctx=num_ctx,
            keep_alive=keep_alive,
        )
        got_response = False
        try:
            async with self._http.stream("POST", "/api/chat", json=body) as response:
                got_response = True
                if response.status_code >= 400:
                    await response.aread()
                    raise _http_error(response, model=model, host=self.host)
                parser = ChatStreamParser()
                async for line in response.aiter_lines():
                    for event in parser.feed_line(line):
                        yield event
                    if parser.done:
                        return
                raise ModelStreamError(
                    "Ollama closed the stream before the reply was done; try again"
                )
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, before_response=not got_response) from None

    async def _json(
        self, method: str, path: str, *, model: str | None = None, body: Any = None
    ) -> Any:
        """One small JSON request (the model list, details, what is loaded), decoded."""
        try:
            response = await self._http.request(method, path, json=body, timeout=self._list_timeout)
            if response.status_code >= 400:
                raise _http_error(response, model=model, host=self.host)
            return response.json()
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, before_response=True) from None
        except json.JSONDecodeError:
            raise ModelStreamError(f"malformed {path} response from Ollama") from None

    async def _model_list(self, path: str) -> list[dict[str, Any]]:
        payload = await self._json("GET", path)
        models = payload.get("models") if isinstance(payload, dict) else None
        if not isinstance(models, list):
            raise ModelStreamError(f"malformed {path} response from Ollama: no 'models' list")
        return [entry for entry in models if isinstance(entry, dict)]

    async def list_models(self) -> list[str]:
        """Names of the locally available models, as ``/api/tags`` lists them."""
        names: list[str] = []
        for entry in await self._model_list("/api/tags"):
            name = entry.get("name") or entry.get("model")
            if isinstance(name, str) and name:
                names.append(name)
        return names

    async def show_model(self, model: str) -> dict[str, Any]:
        """``POST /api/show``: the model's details, ``model_info`` among them."""
        payload = await self._json("POST", "/api/show", model=model, body={"model": model})
        if not isinstance(payload, dict):
            raise ModelStreamError("malformed /api/show response from Ollama: not an object")
        return payload

    async def running_models(self) -> list[dict[str, Any]]:
        """``GET /api/ps``: the models loaded now, each with its ``context_length``."""
        return await self._model_list("/api/ps")

    async def trained_context_length(self, model: str) -> int | None:
        """The context length the model was trained for (``<arch>.context_length``)."""
        return trained_context_length(await self.show_model(model))

    async def loaded_context_length(self, model: str) -> int | None:
        """The window Ollama allocated for ``model`` if it is loaded now, else None."""
        return loaded_context_length(await self.running_models(), model)

    def _transport_error(self, exc: httpx.HTTPError, *, before_response: bool) -> ModelError:
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
            return OllamaUnreachable(self.host)
        if isinstance(exc, httpx.TimeoutException):
            return ModelTimeout(self.host, self.read_timeout)
        if isinstance(exc, httpx.TransportError):
            when = "before it answered" if before_response else "during the reply"
            return ModelConnectionError(
                f"the connection to Ollama at {self.host} broke {when} ({_describe(exc)}); "
                "try again",
                before_response=before_response,
            )
        return ModelConnectionError(
            f"request to Ollama at {self.host} failed: {_describe(exc)}",
            before_response=False,
        )


def _describe(exc: BaseException) -> str:
    text = scrub_server_text(str(exc)).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _is_ollama_error(response: httpx.Response) -> bool:
    """Whether an error body has Ollama's form: a JSON object whose ``error`` is a string.

    llama-server, LM Studio and vLLM answer ``{"error": {"message": ...}}`` or plain text.
    """
    try:
        payload = json.loads(response.content[:SCAN_LIMIT])
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return False
    return isinstance(payload, dict) and isinstance(payload.get("error"), str)


def _http_error(response: httpx.Response, *, model: str | None, host: str = "") -> ModelError:
    status = response.status_code
    text = server_error_summary(response.content)
    lowered = text.lower()
    path = response.request.url.path
    if status == 404 and not _is_ollama_error(response):
        # Ollama always has /api/chat, /api/show...: a 404 in another shape is not Ollama.
        return NotOllama(host or str(response.request.url.copy_with(path="/")), path, text)
    if model is not None:
        if "does not support tools" in lowered:
            return ToolsUnsupported(model)
        # Ollama says 'model "x" not found, try pulling it first', usually with 404.
        if status == 404 or ("not found" in lowered and "model" in lowered):
            return ModelNotFound(model)
    return ModelHTTPError(status, text, url=path)
