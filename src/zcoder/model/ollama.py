"""The Ollama wire format: ``/api/chat`` streamed as NDJSON, ``/api/tags``, and the model
facts the context window is sized from (``/api/show`` and ``/api/ps``).

The HTTP itself (the client, timeouts, streaming, transport errors) is the shared core's
(zcoder.model.http); here are only Ollama's request body, its parser
(zcoder.model.stream), its error statuses and its window probes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Unpack

import httpx

from zcoder.model.context import loaded_context_length, trained_context_length
from zcoder.model.errors import (
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
from zcoder.model.http import HttpModelClient, HttpOptions, StreamParser
from zcoder.model.protocol import ChatParams
from zcoder.model.scrub import SCAN_LIMIT, server_error_summary
from zcoder.model.stream import ChatStreamParser

__all__ = ["OllamaClient", "build_chat_request"]


def build_chat_request(
    model: str, messages: Sequence[Mapping[str, Any]], **params: Unpack[ChatParams]
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
    if tools := params.get("tools"):
        body["tools"] = [dict(tool) for tool in tools]
    if (think := params.get("think")) is not None:
        body["think"] = think
    merged = dict(params.get("options") or {})
    if (num_predict := params.get("num_predict")) is not None:
        merged["num_predict"] = num_predict
    if (num_ctx := params.get("num_ctx")) is not None:
        merged["num_ctx"] = num_ctx
    if merged:
        body["options"] = merged
    if (keep_alive := params.get("keep_alive")) is not None:
        body["keep_alive"] = keep_alive
    return body


class OllamaClient(HttpModelClient):
    """An async client for one Ollama server (see zcoder.model.http for ``chat()``)."""

    chat_path: ClassVar[str] = "/api/chat"

    def __init__(self, host: str = DEFAULT_HOST, **options: Unpack[HttpOptions]) -> None:
        super().__init__(normalize_host(host), **options)

    @property
    def server(self) -> str:
        return f"Ollama at {self.host}"

    @property
    def _source(self) -> str:
        return "Ollama"

    def _chat_body(
        self, model: str, messages: Sequence[Mapping[str, Any]], params: ChatParams
    ) -> dict[str, Any]:
        return build_chat_request(model, messages, **params)

    def _stream_parser(self) -> StreamParser:
        return ChatStreamParser()

    async def _http_error(self, response: httpx.Response, *, model: str | None) -> ModelError:
        return _http_error(response, model=model, host=self.host)

    def _unreachable(self) -> ModelError:
        return OllamaUnreachable(self.host)

    def _timed_out(self) -> ModelError:
        return ModelTimeout(self.host, self.read_timeout)

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

    async def vision_support(self, model: str) -> bool | None:
        """Whether ``model`` takes images: ``/api/show`` lists its ``capabilities``
        (``"vision"`` among them when it does); None from an Ollama too old to list them."""
        capabilities = (await self.show_model(model)).get("capabilities")
        if not isinstance(capabilities, list):
            return None
        return "vision" in capabilities

    async def running_models(self) -> list[dict[str, Any]]:
        """``GET /api/ps``: the models loaded now, each with its ``context_length``."""
        return await self._model_list("/api/ps")

    async def trained_context_length(self, model: str) -> int | None:
        """The context length the model was trained for (``<arch>.context_length``)."""
        return trained_context_length(await self.show_model(model))

    async def loaded_context_length(self, model: str) -> int | None:
        """The window Ollama allocated for ``model`` if it is loaded now, else None."""
        return loaded_context_length(await self.running_models(), model)


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
