"""The ``openai`` backend: llama.cpp's ``llama-server``, LM Studio and vLLM.

All three speak the OpenAI chat-completions API: ``POST {base}/chat/completions``
streamed as server-sent events (``data: {chunk}`` records, ``data: [DONE]`` last) and
``GET {base}/models``. ``OpenAIClient`` has the Ollama client's interface and yields the
same events (zcoder.model.types), so the agent, the app and ``--prompt`` never know which
backend they talk to. The rules that turn the stream into events are
zcoder.model.openai_stream's; the HTTP (client, timeouts, streaming, transport errors) is
the shared core's (zcoder.model.http). Here are the request body, the HTTP error
statuses, the warm-up's user message and the window probes.

The history stays in Ollama's form (what sessions store); ``to_openai_messages`` converts
it at send time. ``num_predict`` is sent as ``max_tokens``; ``num_ctx`` and ``keep_alive``
are accepted and ignored: the server fixed its window when it loaded the model
(``context_length()`` reports it) and manages its own model lifetime. ``think`` is sent as
``chat_template_kwargs.enable_thinking``, which the chat templates of thinking models
(Qwen3 and others) read on llama.cpp and vLLM.

The warm-up (``warm_up()``, zcoder's model load, as on Ollama): these servers need a user
message to answer, so the system message and tool schemas are sent with a one-dot user
message and ``max_tokens: 1``. The server loads the model (LM Studio and a llama-server
in router mode load on first use) and caches the evaluated prefix, so the first turn
reuses it; the token is discarded.

The API key (``ZCODER_API_KEY``) goes only into the ``Authorization`` header. No message
this module produces contains it, and server error text is scrubbed of it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final, Unpack
from urllib.parse import quote

import httpx

from zcoder.model.body import BodyReader
from zcoder.model.errors import (
    ModelAuthError,
    ModelError,
    ModelHTTPError,
    ModelNotServed,
    ModelStreamError,
    ModelTimeout,
    ServerUnreachable,
    ToolsUnsupported,
)
from zcoder.model.host import DEFAULT_BASE_URL, normalize_base_url
from zcoder.model.http import HttpModelClient, HttpOptions, StreamParser
from zcoder.model.openai_stream import OpenAIStreamParser
from zcoder.model.protocol import ChatParams
from zcoder.model.scrub import QUOTE_LIMIT, quote_server_text, server_error_summary
from zcoder.model.stream import optional_int
from zcoder.model.types import ChatEvent, Message

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
    model: str, messages: Sequence[Mapping[str, Any]], **params: Unpack[ChatParams]
) -> dict[str, Any]:
    """The JSON body of a streamed ``/chat/completions`` request.

    Ollama's ``num_ctx`` and ``keep_alive`` have no field here: the server fixed its window
    when it loaded the model and manages its own model lifetime.
    """
    body: dict[str, Any] = {
        "model": model,
        "messages": to_openai_messages(messages),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if tools := params.get("tools"):
        body["tools"] = [dict(tool) for tool in tools]  # Ollama's schema form is OpenAI's
    options = params.get("options") or {}
    for name in _PASSED_OPTIONS:
        if name in options:
            body[name] = options[name]
    num_predict = params.get("num_predict")
    if num_predict is None:
        num_predict = options.get("num_predict")
    if num_predict is not None and num_predict > 0:
        body["max_tokens"] = num_predict
    if (think := params.get("think")) is not None:
        body["chat_template_kwargs"] = {"enable_thinking": think}
    return body


# -- the client -------------------------------------------------------------------------


class OpenAIClient(HttpModelClient):
    """An async client for one OpenAI-compatible server; the Ollama client's interface.

    ``chat()`` is an async generator: close it (or cancel the task iterating it) to stop;
    closing it closes the HTTP response, so the server stops generating. Environment
    proxy settings are ignored (``trust_env=False``), as for Ollama.
    """

    backend: Final = "openai"
    chat_path: ClassVar[str] = "/chat/completions"

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        api_key: str | None = None,
        **options: Unpack[HttpOptions],
    ) -> None:
        self.base_url = normalize_base_url(base_url)
        super().__init__(self.base_url, api_key=api_key, **options)

    def __repr__(self) -> str:
        return f"OpenAIClient({self.base_url!r})"

    @property
    def server(self) -> str:
        """How messages name the server."""
        return f"the server at {self.base_url}"

    # -- the wire format ------------------------------------------------------------------

    def _chat_body(
        self, model: str, messages: Sequence[Mapping[str, Any]], params: ChatParams
    ) -> dict[str, Any]:
        return build_openai_request(model, messages, **params)

    def _stream_parser(self) -> StreamParser:
        return OpenAIStreamParser(self.server, secrets=(self._key,))

    async def _whole_reply(
        self, response: httpx.Response, parser: StreamParser, body: BodyReader
    ) -> list[ChatEvent] | None:
        """A server that ignored ``"stream"`` answers one JSON completion."""
        if "application/json" not in response.headers.get("content-type", ""):
            return None
        assert isinstance(parser, OpenAIStreamParser)
        content = await body.read_all(response.aiter_bytes())
        try:
            record = json.loads(content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ModelStreamError(
                f"malformed response from {self.server}: "
                f"{quote_server_text(content.decode('utf-8', 'replace'), (self._key,))}"
            ) from None
        if not isinstance(record, dict):
            raise ModelStreamError(f"malformed response from {self.server}")
        return parser.feed_record(record) + parser.finish()

    def _warm_up_messages(self, messages: Sequence[Message]) -> list[Message]:
        """These servers need a user message to answer: a one-dot one, after the system
        message and before nothing else (see the module docstring)."""
        if any(message.get("role") == "user" for message in messages):
            return list(messages)
        return [*messages, {"role": "user", "content": WARM_UP_PROMPT}]

    def _unreachable(self) -> ModelError:
        return ServerUnreachable(self.base_url)

    def _timed_out(self) -> ModelError:
        return ModelTimeout(self.base_url, self.read_timeout, server="the server")

    async def list_models(self) -> list[str]:
        """The ids ``{base}/models`` lists: the models the server serves."""
        return [str(entry["id"]) for entry in await self._model_entries()]

    async def tools_template_warning(self, model: str) -> str | None:
        """What to tell the user when the server's chat template cannot take tools, else
        None. llama-server reports it in ``/props`` (``chat_template_caps.supports_tools``)
        and otherwise accepts a request with tools silently: the model never sees them.
        Never raises: a server without ``/props`` (LM Studio, vLLM) is not warned about."""
        del model  # one template per llama-server (a router's /props is its default)
        props = await self._json_or_none(f"{_server_root(self.base_url)}/props")
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
        props = await self._json_or_none(f"{root}/props")
        if isinstance(props, dict):
            settings = props.get("default_generation_settings")
            if isinstance(settings, dict) and (found := _positive(settings.get("n_ctx"))):
                return found
            if found := _positive(props.get("n_ctx")):
                return found
        studio = await self._json_or_none(f"{root}/api/v0/models/{quote(model, safe='')}")
        if isinstance(studio, dict) and (found := _positive(studio.get("loaded_context_length"))):
            return found
        return None

    # -- helpers ------------------------------------------------------------------------

    async def _model_entries(self) -> list[dict[str, Any]]:
        payload = await self._json("GET", "/models")
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise ModelStreamError(f"malformed /models response from {self.server}: no 'data' list")
        return [
            entry
            for entry in data
            if isinstance(entry, dict) and isinstance(entry.get("id"), str) and entry["id"]
        ]

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
        return [self._scrub(name)[:QUOTE_LIMIT] for name in names]


def _positive(value: object) -> int | None:
    number = optional_int(value)
    return number if number is not None and number > 0 else None
