"""The one family of errors the model clients (Ollama and OpenAI-compatible) raise.

Every message is meant to be shown to the user as it is: it says what went wrong and
what to do, and never carries a traceback. ``retryable_before_response`` marks the
transport failures that happened before Ollama sent any response, which the agent may
retry once; everything else reached the server, so retrying would repeat work or fail
the same way. A read timeout is not retryable either: the server may still be working
on the request.
"""

from __future__ import annotations

from zcoder.base.errors import ZcoderError

__all__ = [
    "ModelAuthError",
    "ModelConnectionError",
    "ModelError",
    "ModelHTTPError",
    "ModelNotFound",
    "ModelNotServed",
    "ModelStreamError",
    "ModelTimeout",
    "NotOllama",
    "OllamaUnreachable",
    "ServerUnreachable",
    "ToolsUnsupported",
    "first_clause",
]

# How to start each OpenAI-compatible server zcoder knows, for the "not running" message.
START_OPENAI_SERVER = (
    "start one: llama.cpp `llama-server -m MODEL.gguf --jinja --port 8080`, "
    "LM Studio `lms server start` (then --base-url http://127.0.0.1:1234/v1), "
    "or vLLM `vllm serve MODEL` (then --base-url http://127.0.0.1:8000/v1)"
)

# After "start it with `ollama serve`": the other ways to a model, for a user with none yet.
OTHER_WAYS_TO_A_MODEL = (
    ", point --base-url at an OpenAI-compatible server, or run a GGUF model file "
    "with --gguf FILE (`make demo` runs a small one from the package index)"
)


class ModelError(ZcoderError):
    """Base class: talking to the model failed; ``str(error)`` is the user-facing message."""

    retryable_before_response: bool = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    @property
    def brief(self) -> str:
        """What went wrong without what to do about it (``first_clause``): for saying it
        again, after the whole message was shown once."""
        return first_clause(self.message)


def first_clause(message: str) -> str:
    """A message's first clause, up to its first ``; `` (the messages here say what went
    wrong first, then what to do): ``Ollama is not reachable at URL``."""
    return message.split("; ", 1)[0]


class _Unreachable(ModelError):
    """Nothing answered at the server's address; ``detail`` says how the connection failed."""

    retryable_before_response = True

    def __init__(self, message: str, detail: str) -> None:
        super().__init__(f"{message} ({detail})" if detail else message)
        self.detail = detail


class OllamaUnreachable(_Unreachable):
    """Nothing answered at the host: connection refused, unknown name or connect timeout."""

    def __init__(self, host: str, detail: str = "") -> None:
        super().__init__(
            f"Ollama is not reachable at {host}; start it with `ollama serve`"
            + OTHER_WAYS_TO_A_MODEL,
            detail,
        )
        self.host = host


class ServerUnreachable(_Unreachable):
    """Nothing answered at an OpenAI-compatible base URL (the ``openai`` backend)."""

    def __init__(self, base_url: str, detail: str = "") -> None:
        super().__init__(
            f"no OpenAI-compatible server is answering at {base_url}; {START_OPENAI_SERVER}",
            detail,
        )
        self.base_url = base_url


class ModelAuthError(ModelError):
    """HTTP 401 or 403: the server wants another API key. The key itself is never shown."""

    def __init__(self, base_url: str, status: int, *, key_set: bool) -> None:
        if key_set:
            message = (
                f"the server at {base_url} refused the API key (HTTP {status}); "
                "check ZCODER_API_KEY"
            )
        else:
            message = (
                f"the server at {base_url} requires an API key (HTTP {status}); "
                "set ZCODER_API_KEY to the key it was started with"
            )
        super().__init__(message)
        self.base_url = base_url
        self.status = status


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


class NotOllama(ModelError):
    """The Ollama backend got a 404 that is not Ollama's: another kind of server answers
    there, most likely an OpenAI-compatible one (llama-server, LM Studio, vLLM)."""

    def __init__(self, host: str, path: str, server_message: str = "") -> None:
        said = f" ({server_message})" if server_message else ""
        root = host.rstrip("/")
        super().__init__(
            f"the server at {host} answered HTTP 404 for {path}{said}, which is not how "
            "Ollama answers: this looks like an OpenAI-compatible server (llama-server, "
            f"LM Studio, vLLM). Use --backend openai --base-url {root}/v1 "
            "(or set ZCODER_BACKEND=openai and ZCODER_BASE_URL)"
        )
        self.host = host
        self.path = path
        self.server_message = server_message


class ModelNotServed(ModelNotFound):
    """An OpenAI-compatible server does not serve the model (the ``openai`` backend)."""

    def __init__(self, model: str, base_url: str, served: list[str] | None = None) -> None:
        message = f"model '{model}' is not served at {base_url}"
        if served:
            names = ", ".join(served[:10]) + (", …" if len(served) > 10 else "")
            message += f"; it serves {names}: choose one with -m NAME or /model"
        else:
            message += (
                f"; load it on the server (LM Studio `lms load {model}`, vLLM `vllm serve "
                f"{model}`, llama-server `-m FILE`) or choose another with -m NAME"
            )
        ModelError.__init__(self, message)
        self.model = model
        self.base_url = base_url
        self.served = list(served or [])


class ToolsUnsupported(ModelError):
    """The model's template has no tool support, so the server refuses a request with tools."""

    def __init__(self, model: str, *, fix: str = "") -> None:
        super().__init__(
            f"model '{model}' does not support tools; "
            + (fix or "choose a model that supports tool calling")
        )
        self.model = model


class ModelHTTPError(ModelError):
    """Any other HTTP error status, with the server's own error text."""

    def __init__(
        self,
        status: int,
        server_message: str,
        *,
        url: str = "",
        server: str = "Ollama",
        hint: str = "",
    ) -> None:
        where = f" for {url}" if url else ""
        text = server_message or "no error text"
        message = f"{server} returned HTTP {status}{where}: {text}"
        if hint:
            message += f" ({hint})"
        elif status == 503:
            message += " (the server is busy or still starting; try again shortly)"
        elif status >= 500:
            log = "the Ollama server log" if server == "Ollama" else "the server's log"
            message += f" (see {log} for details)"
        super().__init__(message)
        self.status = status
        self.server_message = server_message


class ModelStreamError(ModelError):
    """The response started but then failed: an ``{"error": ...}`` line or malformed NDJSON."""


class ModelTimeout(ModelError):
    """No data arrived within the read timeout (a stalled model or server)."""

    def __init__(self, host: str, seconds: float | None, *, server: str = "Ollama") -> None:
        limit = f"{seconds:g} seconds" if seconds is not None else "the time limit"
        check = "`ollama ps` and the server log" if server == "Ollama" else "the server's log"
        super().__init__(
            f"{server} at {host} sent nothing for {limit}; the model may be stuck or still "
            f"loading — try again, or check {check}"
        )
        self.host = host
        self.seconds = seconds
