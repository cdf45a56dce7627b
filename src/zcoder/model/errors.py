"""The one family of errors the Ollama client raises.

Every message is meant to be shown to the user as it is: it says what went wrong and
what to do, and never carries a traceback. ``retryable_before_response`` marks the
transport failures that happened before Ollama sent any response, which the agent may
retry once; everything else reached the server, so retrying would repeat work or fail
the same way. A read timeout is not retryable either: the server may still be working
on the request.
"""

from __future__ import annotations

__all__ = [
    "ModelConnectionError",
    "ModelError",
    "ModelHTTPError",
    "ModelNotFound",
    "ModelStreamError",
    "ModelTimeout",
    "OllamaUnreachable",
    "ToolsUnsupported",
]


class ModelError(Exception):
    """Base class: talking to the model failed; ``str(error)`` is the user-facing message."""

    retryable_before_response: bool = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class OllamaUnreachable(ModelError):
    """Nothing answered at the host: connection refused, unknown name or connect timeout."""

    retryable_before_response = True

    def __init__(self, host: str, detail: str = "") -> None:
        message = f"Ollama is not reachable at {host}; start it with `ollama serve`"
        if detail:
            message += f" ({detail})"
        super().__init__(message)
        self.host = host
        self.detail = detail


class ModelConnectionError(ModelError):
    """The connection broke; retryable only if it broke before any response arrived."""

    def __init__(self, message: str, *, before_response: bool) -> None:
        super().__init__(message)
        self.retryable_before_response = before_response


class ModelNotFound(ModelError):
    """Ollama does not have the model (HTTP 404 or an error saying 'not found')."""

    def __init__(self, model: str) -> None:
        super().__init__(f"model '{model}' not found; run `ollama pull {model}`")
        self.model = model


class ToolsUnsupported(ModelError):
    """The model's template has no tool support, so Ollama refuses a request with tools."""

    def __init__(self, model: str) -> None:
        super().__init__(
            f"model '{model}' does not support tools; choose a model that supports tool calling"
        )
        self.model = model


class ModelHTTPError(ModelError):
    """Any other HTTP error status, with the server's own error text."""

    def __init__(self, status: int, server_message: str, *, url: str = "") -> None:
        where = f" for {url}" if url else ""
        text = server_message or "no error text"
        message = f"Ollama returned HTTP {status}{where}: {text}"
        if status == 503:
            message += " (the server is busy or still starting; try again shortly)"
        elif status >= 500:
            message += " (see the Ollama server log for details)"
        super().__init__(message)
        self.status = status
        self.server_message = server_message


class ModelStreamError(ModelError):
    """The response started but then failed: an ``{"error": ...}`` line or malformed NDJSON."""


class ModelTimeout(ModelError):
    """No data arrived within the read timeout (a stalled model or server)."""

    def __init__(self, host: str, seconds: float | None) -> None:
        limit = f"{seconds:g} seconds" if seconds is not None else "the time limit"
        super().__init__(
            f"Ollama at {host} sent nothing for {limit}; the model may be stuck or still "
            "loading — try again, or check `ollama ps` and the server log"
        )
        self.host = host
        self.seconds = seconds
