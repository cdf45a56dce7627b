"""The ``openai`` backend: llama.cpp's ``llama-server``, LM Studio and vLLM.

All three speak the OpenAI chat-completions API: ``POST {base}/chat/completions``
streamed as server-sent events (``data: {chunk}`` records, ``data: [DONE]`` last) and
``GET {base}/models``. ``OpenAIClient`` has the Ollama client's interface and yields the
same events (zcoder.model.types), so the agent, the app and ``--prompt`` never know which
backend they talk to:

* ``delta.content`` → ``ContentDelta``; ``delta.reasoning_content`` (llama.cpp, older
  vLLM) or ``delta.reasoning`` (newer vLLM) → ``ReasoningDelta``;
* ``delta.tool_calls`` arrive split across chunks: the first piece of a call carries its
  ``index``, ``id`` and ``function.name``, later pieces the same ``index`` and more of
  ``function.arguments``. They are joined by index and yielded as one
  ``ToolCallsReceived`` when the choice finishes, with the server's ids kept;
* ``finish_reason`` becomes ``Done.done_reason``: ``"length"`` stays ``"length"`` (the
  reply was cut off by ``max_tokens``), ``"stop"`` and ``"tool_calls"`` become ``"stop"``;
* ``usage`` (asked for with ``stream_options.include_usage``; it comes in a last chunk
  with no choices) gives ``Done.prompt_eval_count`` and ``Done.eval_count``.

The history stays in Ollama's form (what sessions store); ``to_openai_messages`` converts
it at send time. ``num_predict`` is sent as ``max_tokens``; ``num_ctx`` and ``keep_alive``
are accepted and ignored: the server fixed its window when it loaded the model
(``context_length()`` reports it) and manages its own model lifetime. ``think`` is sent as
``chat_template_kwargs.enable_thinking``, which the chat templates of thinking models
(Qwen3 and others) read on llama.cpp and vLLM.

The warm-up: a chat with no user message (zcoder's model load, as on Ollama) cannot be
sent as it is, since these servers need something to answer. It is sent with a one-dot
user message and ``max_tokens: 1``: the server loads the model (LM Studio and a
llama-server in router mode load on first use) and caches the evaluated prefix, the
system prompt and tool schemas, so the first turn reuses it. Only the ``Done`` is yielded,
with ``done_reason="load"`` as Ollama reports for a load; the token is discarded.

The API key (``ZCODER_API_KEY``) goes only into the ``Authorization`` header. No message
this module produces contains it, and server error text is scrubbed of it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Final, Self
from urllib.parse import quote

import httpx

from zcoder import __version__
from zcoder.model.client import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_LIST_TIMEOUT,
    DEFAULT_READ_TIMEOUT,
    DEFAULT_WRITE_TIMEOUT,
    LazyHttpClient,
)
from zcoder.model.errors import (
    ModelAuthError,
    ModelConnectionError,
    ModelError,
    ModelHTTPError,
    ModelNotServed,
    ModelStreamError,
    ModelTimeout,
    ServerUnreachable,
    ToolsUnsupported,
)
from zcoder.model.host import DEFAULT_BASE_URL, normalize_base_url
from zcoder.model.scrub import scrub_server_text, server_error_summary
from zcoder.model.stream import parse_tool_call
from zcoder.model.types import ChatEvent, ContentDelta, Done, ReasoningDelta, ToolCallsReceived

__all__ = [
    "DEFAULT_BASE_URL",
    "TOOLS_TEMPLATE_WARNING",
    "WARM_UP_PROMPT",
    "OpenAIClient",
    "OpenAIStreamParser",
    "build_openai_request",
    "normalize_base_url",
    "to_openai_messages",
]

"""llama.cpp's ``llama-server`` on its default port."""
WARM_UP_PROMPT: Final = "."
"""The stand-in user message of a warm-up request (see the module docstring)."""

# Ollama options with the same meaning and name in the OpenAI request body. Others
# (num_ctx, num_gpu, ...) are the server's business and are left out.
_PASSED_OPTIONS: Final = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "seed",
    "stop",
    "presence_penalty",
    "frequency_penalty",
)
_QUOTE_LIMIT: Final = 200
TOOLS_TEMPLATE_WARNING: Final = (
    "{server} uses a chat template that cannot take tools (its /props says "
    "chat_template_caps.supports_tools is false): it accepts zcoder's tools and the model "
    "never sees them, so it cannot read, search or change files. Restart llama-server "
    "with a template that supports tools: --jinja --chat-template-file FILE.jinja (the "
    "model's own tool-calling template, e.g. from its Hugging Face repository; llama.cpp "
    "ships some in models/templates/)"
)
_NOT_SERVED_WORDS: Final = (
    "not found",
    "does not exist",
    "not loaded",
    "no such model",
    "model_not_found",
    "unknown model",
    "invalid model",
)


def _server_root(base_url: str) -> str:
    """The server's root URL, where llama.cpp's /props and LM Studio's /api/v0 live."""
    return base_url.removesuffix("/v1")


# -- the request ------------------------------------------------------------------------


def to_openai_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The history the agent keeps (Ollama's form) in the OpenAI chat-completions form.

    Assistant tool calls get ``type: "function"`` and their arguments as a JSON string
    (Ollama keeps an object); tool results keep their ``tool_call_id`` (one missing, from
    an old session, is taken from the calls of the assistant message before it, in
    order). Ollama-only fields (``thinking``, ``tool_name``, ``images``, a call's
    ``index``) are left out.
    """
    converted: list[dict[str, Any]] = []
    unanswered: list[str] = []
    for message in messages:
        role = str(message.get("role", ""))
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        if role == "assistant":
            calls: list[dict[str, Any]] = []
            for ordinal, raw in enumerate(message.get("tool_calls") or []):
                if not isinstance(raw, Mapping):
                    continue
                function = raw.get("function")
                function = function if isinstance(function, Mapping) else {}
                arguments = function.get("arguments")
                if isinstance(arguments, str):
                    encoded = arguments
                else:
                    encoded = json.dumps(arguments if arguments is not None else {})
                raw_id = raw.get("id")
                call_id = raw_id if isinstance(raw_id, str) and raw_id else f"call_{ordinal}"
                calls.append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": str(function.get("name", "")), "arguments": encoded},
                    }
                )
            entry: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                entry["tool_calls"] = calls
                if not text:
                    entry["content"] = None  # the OpenAI form of "no text, only calls"
            unanswered = [call["id"] for call in calls]
            converted.append(entry)
        elif role == "tool":
            answered = message.get("tool_call_id")
            if not (isinstance(answered, str) and answered):
                answered = unanswered[0] if unanswered else "call_0"
            if answered in unanswered:
                unanswered.remove(answered)
            converted.append({"role": "tool", "tool_call_id": answered, "content": text})
        else:
            converted.append({"role": role, "content": text})
    return converted


def build_openai_request(
    model: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    think: bool | None = None,
    num_predict: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON body of a streamed ``/chat/completions`` request."""
    body: dict[str, Any] = {
        "model": model,
        "messages": to_openai_messages(messages),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if tools:
        body["tools"] = [dict(tool) for tool in tools]  # Ollama's schema form is OpenAI's
    for name in _PASSED_OPTIONS:
        if options and name in options:
            body[name] = options[name]
    if options and "num_predict" in options and num_predict is None:
        num_predict = options["num_predict"]
    if num_predict is not None and num_predict > 0:
        body["max_tokens"] = num_predict
    if think is not None:
        body["chat_template_kwargs"] = {"enable_thinking": think}
    return body


# -- the stream -------------------------------------------------------------------------


def _quote(text: str, secrets: Sequence[str | None] = ()) -> str:
    """A bad piece of the server's reply, scrubbed and bounded, to quote in a message."""
    text = scrub_server_text(text[: _QUOTE_LIMIT * 4], secrets)
    if len(text) > _QUOTE_LIMIT:
        text = text[:_QUOTE_LIMIT] + "…"
    return repr(text)


@dataclass
class _PendingCall:
    """A tool call being assembled from its pieces."""

    index: int
    id: str | None = None
    name: str = ""
    pieces: list[str] = field(default_factory=list)
    whole: dict[str, Any] | None = None  # arguments a server sent as an object


class OpenAIStreamParser:
    """Turns the server-sent events of one reply into events; a new parser per request.

    Feed it the body line by line (``feed_line``) and call ``finish()`` when the body
    ends. ``done`` is set once ``data: [DONE]`` arrived (then ``Done`` was yielded).
    """

    def __init__(self, server: str = "the server", *, secrets: Sequence[str | None] = ()) -> None:
        self.server = server
        self.secrets = tuple(secrets)  # scrubbed from any server text quoted in an error
        self.done = False
        self._data: list[str] = []
        self._calls: dict[int, _PendingCall] = {}
        self._calls_sent = False
        self._finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None

    def feed_line(self, line: str) -> list[ChatEvent]:
        """One line of the body; an event is dispatched at the blank line that ends it."""
        if self.done:
            return []
        text = line.rstrip("\r\n")
        if not text.strip():
            return self._dispatch()
        if text.startswith(":"):
            return []  # an SSE comment (a keep-alive)
        name, _, value = text.partition(":")
        if name == "data":
            self._data.append(value.removeprefix(" "))
        elif name not in ("event", "id", "retry"):
            raise ModelStreamError(
                f"malformed response from {self.server} (not server-sent events): "
                f"{_quote(text, self.secrets)}"
            )
        return []

    def finish(self) -> list[ChatEvent]:
        """The body ended: the last events, or an error if the reply was not complete."""
        events = self._dispatch()
        if self.done:
            return events
        if self._finish_reason is not None:
            # No [DONE], but the reply itself was complete: accept it.
            return events + self._complete()
        raise ModelStreamError(
            f"{self.server} closed the stream before the reply was done; try again"
        )

    def feed_record(self, record: Mapping[str, Any]) -> list[ChatEvent]:
        """One decoded chunk (``chat.completion.chunk``)."""
        if self.done:
            return []
        if record.get("error"):
            raise ModelStreamError(
                f"{self.server} reported an error mid-stream: "
                f"{server_error_summary(record, self.secrets)}"
            )
        usage = record.get("usage")
        if isinstance(usage, dict):
            self._usage = usage
        choices = record.get("choices")
        if choices is None:
            return []
        if not isinstance(choices, list):
            raise ModelStreamError(
                f"malformed response from {self.server}: 'choices' is not a list"
            )
        events: list[ChatEvent] = []
        for choice in choices:
            if not isinstance(choice, dict):
                raise ModelStreamError(
                    f"malformed response from {self.server}: a choice is not an object"
                )
            if choice.get("index", 0) != 0:
                continue  # zcoder asks for one choice
            delta = choice.get("delta")
            if delta is None:
                delta = choice.get("message")  # a server that answered without streaming
            if delta is not None and not isinstance(delta, dict):
                raise ModelStreamError(
                    f"malformed response from {self.server}: 'delta' is not an object"
                )
            if delta:
                events += self._read_delta(delta)
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                self._finish_reason = reason
                events += self._send_calls()
        return events

    def _dispatch(self) -> list[ChatEvent]:
        if not self._data:
            return []
        data = "\n".join(self._data)
        self._data = []
        if data.strip() == "[DONE]":
            return self._complete()
        try:
            record = json.loads(data)
        except json.JSONDecodeError as exc:
            raise ModelStreamError(
                f"malformed response from {self.server} ({exc.msg}): {_quote(data, self.secrets)}"
            ) from None
        if not isinstance(record, dict):
            raise ModelStreamError(
                f"malformed response from {self.server} (not an object): "
                f"{_quote(data, self.secrets)}"
            )
        return self.feed_record(record)

    def _read_delta(self, delta: Mapping[str, Any]) -> list[ChatEvent]:
        events: list[ChatEvent] = []
        for key in ("reasoning_content", "reasoning"):
            thinking = delta.get(key)
            if isinstance(thinking, str) and thinking:
                events.append(ReasoningDelta(thinking))
                break
        content = delta.get("content")
        if isinstance(content, str) and content:
            events.append(ContentDelta(content))
        raw_calls = delta.get("tool_calls")
        if raw_calls:
            if not isinstance(raw_calls, list):
                raise ModelStreamError(
                    f"malformed response from {self.server}: 'tool_calls' is not a list"
                )
            for raw in raw_calls:
                self._add_piece(raw)
        return events

    def _add_piece(self, raw: object) -> None:
        if not isinstance(raw, dict):
            raise ModelStreamError(
                f"malformed response from {self.server}: a tool call is not an object"
            )
        raw_id = raw.get("id")
        call_id = raw_id if isinstance(raw_id, str) and raw_id else None
        index = raw.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            # No index (some servers send each call whole): a new id starts a new call.
            known = {pending.id for pending in self._calls.values()}
            if not self._calls or (call_id is not None and call_id not in known):
                index = len(self._calls)
            else:
                index = max(self._calls)
        pending = self._calls.get(index)
        if pending is None:
            pending = self._calls[index] = _PendingCall(index)
        if call_id is not None and pending.id is None:
            pending.id = call_id
        function = raw.get("function")
        if function is None:
            return
        if not isinstance(function, dict):
            raise ModelStreamError(
                f"malformed response from {self.server}: a tool call's 'function' is not an object"
            )
        name = function.get("name")
        if isinstance(name, str) and name and not pending.name:
            pending.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            pending.pieces.append(arguments)
        elif isinstance(arguments, dict):
            pending.whole = arguments

    def _send_calls(self) -> list[ChatEvent]:
        if self._calls_sent or not self._calls:
            return []
        self._calls_sent = True
        calls = []
        for ordinal, pending in enumerate(sorted(self._calls.values(), key=lambda p: p.index)):
            if not pending.name:
                raise ModelStreamError(
                    f"malformed response from {self.server}: a tool call has no name"
                )
            arguments: object = (
                pending.whole if pending.whole is not None else "".join(pending.pieces)
            )
            wire = {
                "id": pending.id,
                "function": {"name": pending.name, "arguments": arguments, "index": pending.index},
            }
            calls.append(parse_tool_call(wire, ordinal=ordinal))
        return [ToolCallsReceived(calls)]

    def _complete(self) -> list[ChatEvent]:
        events = self._send_calls()
        self.done = True
        usage = self._usage or {}
        events.append(
            Done(
                done_reason=_done_reason(self._finish_reason),
                prompt_eval_count=_opt_int(usage.get("prompt_tokens")),
                eval_count=_opt_int(usage.get("completion_tokens")),
            )
        )
        return events


def _done_reason(finish_reason: str | None) -> str | None:
    if finish_reason in ("stop", "tool_calls", "function_call", "eos"):
        return "stop"
    return finish_reason  # "length" stays "length"; anything else as the server said


def _opt_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


# -- the client -------------------------------------------------------------------------


class OpenAIClient:
    """An async client for one OpenAI-compatible server; the Ollama client's interface.

    ``chat()`` is an async generator: close it (or cancel the task iterating it) to stop;
    closing it closes the HTTP response, so the server stops generating. Environment
    proxy settings are ignored (``trust_env=False``), as for Ollama.
    """

    backend: Final = "openai"

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        api_key: str | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        read_timeout: float | None = DEFAULT_READ_TIMEOUT,
        write_timeout: float = DEFAULT_WRITE_TIMEOUT,
        list_timeout: float = DEFAULT_LIST_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = normalize_base_url(base_url)
        self.host = self.base_url  # what the header and messages show, as for Ollama
        self.read_timeout = read_timeout
        self._key = api_key or None
        self._list_timeout = httpx.Timeout(list_timeout, connect=connect_timeout)
        headers = {"User-Agent": f"zcoder/{__version__}"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        self._lazy_http = LazyHttpClient(
            base_url=self.base_url,
            timeout=httpx.Timeout(
                connect=connect_timeout,
                read=read_timeout,
                write=write_timeout,
                pool=connect_timeout,
            ),
            headers=headers,
            transport=transport,
            trust_env=False,
        )

    def __repr__(self) -> str:
        return f"OpenAIClient({self.base_url!r})"

    @property
    def server(self) -> str:
        """How messages name the server."""
        return f"the server at {self.base_url}"

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
        keep_alive: str | int | float | None = None,
    ) -> AsyncGenerator[ChatEvent, None]:
        """Stream one reply: deltas, tool calls, then exactly one ``Done`` last.

        ``num_ctx`` and ``keep_alive`` are Ollama's and ignored here (see the module
        docstring). Raises a ``ModelError`` subclass on failure, before or during the
        stream.
        """
        del num_ctx, keep_alive
        warm_up = not any(message.get("role") == "user" for message in messages)
        if warm_up:
            messages = [*messages, {"role": "user", "content": WARM_UP_PROMPT}]
            num_predict = 1
        body = build_openai_request(
            model, messages, tools=tools, think=think, num_predict=num_predict, options=options
        )
        got_response = False
        try:
            async with self._http.stream("POST", "/chat/completions", json=body) as response:
                got_response = True
                if response.status_code >= 400:
                    await response.aread()
                    raise await self._http_error(response, model=model)
                parser = OpenAIStreamParser(self.server, secrets=(self._key,))
                if "application/json" in response.headers.get("content-type", ""):
                    # A server that ignored "stream": one JSON completion.
                    await response.aread()
                    try:
                        record = response.json()
                    except (json.JSONDecodeError, UnicodeDecodeError):
                        raise ModelStreamError(
                            f"malformed response from {self.server}: "
                            f"{_quote(response.text, (self._key,))}"
                        ) from None
                    if not isinstance(record, dict):
                        raise ModelStreamError(f"malformed response from {self.server}")
                    events = parser.feed_record(record) + parser.finish()
                    for event in events:
                        if not warm_up or isinstance(event, Done):
                            yield _loaded(event) if warm_up else event
                    return
                async for line in response.aiter_lines():
                    for event in parser.feed_line(line):
                        if not warm_up or isinstance(event, Done):
                            yield _loaded(event) if warm_up else event
                    if parser.done:
                        return
                for event in parser.finish():
                    if not warm_up or isinstance(event, Done):
                        yield _loaded(event) if warm_up else event
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, before_response=not got_response) from None

    async def list_models(self) -> list[str]:
        """The ids ``{base}/models`` lists: the models the server serves."""
        return [str(entry["id"]) for entry in await self._model_entries()]

    async def tools_template_warning(self, model: str) -> str | None:
        """What to tell the user when the server's chat template cannot take tools, else
        None. llama-server reports it in ``/props`` (``chat_template_caps.supports_tools``)
        and otherwise accepts a request with tools silently: the model never sees them.
        Never raises: a server without ``/props`` (LM Studio, vLLM) is not warned about."""
        del model  # one template per llama-server (a router's /props is its default)
        props = await self._get_json(f"{_server_root(self.base_url)}/props")
        caps = props.get("chat_template_caps") if isinstance(props, dict) else None
        if not isinstance(caps, dict) or caps.get("supports_tools") is not False:
            return None
        return TOOLS_TEMPLATE_WARNING.format(server=self.server)

    async def context_length(self, model: str) -> int | None:
        """The context window the server gives ``model``, from its metadata; None if unknown.

        In order: vLLM's ``max_model_len`` in ``/v1/models``; llama.cpp's ``/props``
        (``default_generation_settings.n_ctx``, the window of one slot); LM Studio's
        ``/api/v0/models/{model}`` (``loaded_context_length``, once the model is loaded:
        its ``max_context_length`` is only the trained maximum, which LM Studio does not
        load by default, so it is not taken for the window). Never raises: an
        unreachable server or a missing endpoint just means unknown.
        """
        try:
            for entry in await self._model_entries():
                if entry["id"] == model:
                    found = _positive(entry.get("max_model_len"))
                    if found:
                        return found
        except ModelError:
            return None
        root = _server_root(self.base_url)
        props = await self._get_json(f"{root}/props")
        if isinstance(props, dict):
            settings = props.get("default_generation_settings")
            if isinstance(settings, dict) and (found := _positive(settings.get("n_ctx"))):
                return found
            if found := _positive(props.get("n_ctx")):
                return found
        studio = await self._get_json(f"{root}/api/v0/models/{quote(model, safe='')}")
        if isinstance(studio, dict) and (found := _positive(studio.get("loaded_context_length"))):
            return found
        return None

    # -- helpers ------------------------------------------------------------------------

    async def _model_entries(self) -> list[dict[str, Any]]:
        try:
            response = await self._http.get("/models", timeout=self._list_timeout)
            if response.status_code >= 400:
                raise await self._http_error(response, model=None)
            payload = response.json()
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, before_response=True) from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ModelStreamError(f"malformed /models response from {self.server}") from None
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise ModelStreamError(f"malformed /models response from {self.server}: no 'data' list")
        return [
            entry
            for entry in data
            if isinstance(entry, dict) and isinstance(entry.get("id"), str) and entry["id"]
        ]

    async def _get_json(self, url: str) -> object:
        """A GET of server metadata; None on any failure."""
        try:
            response = await self._http.get(url, timeout=self._list_timeout)
            if response.status_code != 200:
                return None
            return response.json()
        except (httpx.HTTPError, json.JSONDecodeError, UnicodeDecodeError):
            return None

    def _scrub(self, text: str) -> str:
        """Server text with the API key (in any form) and secret-like tokens removed."""
        return scrub_server_text(text, (self._key,))

    async def _http_error(self, response: httpx.Response, *, model: str | None) -> ModelError:
        status = response.status_code
        if status in (401, 403):
            return ModelAuthError(self.base_url, status, key_set=self._key is not None)
        text = server_error_summary(response.content, (self._key,))
        lowered = text.lower()
        path = response.request.url.path
        if model is not None:
            if "model" in lowered and any(words in lowered for words in _NOT_SERVED_WORDS):
                return ModelNotServed(model, self.base_url, await self._served())
            if "--jinja" in lowered or ("tool" in lowered and "not supported" in lowered):
                return ToolsUnsupported(
                    model,
                    fix="start llama-server with --jinja, or choose a model whose chat "
                    f"template supports tool calling (the server said: {text})",
                )
        hint = ""
        if status == 404:
            hint = (
                f"nothing answers {path} at this address; check --base-url "
                "(ZCODER_BASE_URL), which usually ends in /v1"
            )
        return ModelHTTPError(status, text, url=path, server=self.server, hint=hint)

    async def _served(self) -> list[str]:
        """The served model ids, scrubbed and bounded: they are quoted in a message."""
        try:
            names = await self.list_models()
        except ModelError:
            return []
        return [self._scrub(name)[:_QUOTE_LIMIT] for name in names]

    def _transport_error(self, exc: httpx.HTTPError, *, before_response: bool) -> ModelError:
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
            return ServerUnreachable(self.base_url)
        if isinstance(exc, httpx.TimeoutException):
            return ModelTimeout(self.base_url, self.read_timeout, server="the server")
        when = "before it answered" if before_response else "during the reply"
        detail = type(exc).__name__
        if text := self._scrub(str(exc)).strip():
            detail += f": {text}"
        if isinstance(exc, httpx.TransportError):
            return ModelConnectionError(
                f"the connection to {self.server} broke {when} ({detail}); try again",
                before_response=before_response,
            )
        return ModelConnectionError(
            f"request to {self.server} failed: {detail}", before_response=False
        )


def _loaded(event: ChatEvent) -> ChatEvent:
    """The warm-up's ``Done``, marked as a model load."""
    if isinstance(event, Done):
        return Done(
            done_reason="load",
            prompt_eval_count=event.prompt_eval_count,
            eval_count=event.eval_count,
        )
    return event


def _positive(value: object) -> int | None:
    number = _opt_int(value)
    return number if number is not None and number > 0 else None
