"""Choosing the model client: Ollama's native API or an OpenAI-compatible server.

``make_client(config)`` is the one place that decides; the app, ``--prompt`` and
everything behind them (the relay's turns, the model picker, the warm-up) use what it
returns, a ``ModelClient`` (zcoder.model.protocol), and never look at the backend again.
"""

from __future__ import annotations

from typing import Final, Protocol

from zcoder.model.protocol import ModelClient

__all__ = ["BACKENDS", "BackendSettings", "ModelClient", "make_client", "server_label"]

BACKENDS: Final = ("ollama", "openai")


class BackendSettings(Protocol):
    """The settings make_client reads (zcoder.config.Config has them)."""

    @property
    def backend(self) -> str: ...
    @property
    def host(self) -> str: ...
    @property
    def base_url(self) -> str: ...
    @property
    def api_key(self) -> str | None: ...
    @property
    def max_line_bytes(self) -> int: ...
    @property
    def max_reply_bytes(self) -> int: ...


def make_client(settings: BackendSettings) -> ModelClient:
    """The client for the configured backend (``ollama`` unless ``openai`` was chosen),
    with the configured caps on a reply's size (zcoder.model.body)."""
    line, reply = settings.max_line_bytes, settings.max_reply_bytes
    if settings.backend == "openai":
        from zcoder.model.openai import OpenAIClient

        return OpenAIClient(
            settings.base_url, api_key=settings.api_key, max_line_bytes=line, max_reply_bytes=reply
        )
    from zcoder.model.ollama import OllamaClient

    return OllamaClient(settings.host, max_line_bytes=line, max_reply_bytes=reply)


def server_label(settings: BackendSettings) -> str:
    """Where the model runs, for the header's ``model@...``: the Ollama host or the base
    URL, without ``http://``. Never the API key (the base URL cannot hold credentials)."""
    address = settings.base_url if settings.backend == "openai" else settings.host
    return address.removeprefix("http://")
