"""What the rest of zcoder depends on of a model client, whichever wire format it speaks.

The agent, the app and ``--prompt`` hold a client through these Protocols, never through
a concrete class, so a new backend is one more class that satisfies them (see
zcoder.model.backends for the choice, zcoder.model.http for the shared HTTP core).

* ``ChatClient``: one streamed reply. All the agent's turns and compaction need.
* ``ModelClient``: a whole backend as the front ends use it: ``chat``, the served models,
  the explicit warm-up (load the model as the first turn will use it), closing.
* ``ToolsTemplateProbe`` (optional): a server whose chat template may drop tools says so.

What a client can tell about a model's context window is optional too and lives with the
window logic (zcoder.model.context: ``WindowProbe`` for Ollama, ``ServerWindow`` for an
OpenAI-compatible server), since the two servers answer different questions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable

from zcoder.model.types import ChatEvent, Message

__all__ = ["ChatClient", "ModelClient", "ToolsTemplateProbe"]


class ChatClient(Protocol):
    """A client that streams one reply: deltas, tool calls, then exactly one ``Done``.

    Raises a ``ModelError`` subclass on failure, before or during the stream; closing the
    iterator (or cancelling the task iterating it) stops the request.
    """

    def chat(
        self,
        model: str,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        think: bool | None = None,
        num_predict: int | None = None,
        num_ctx: int | None = None,
        keep_alive: str | int | None = None,
    ) -> AsyncIterator[ChatEvent]: ...


class ModelClient(ChatClient, Protocol):
    """A whole backend as the app and ``--prompt`` use it."""

    @property
    def host(self) -> str:
        """Where the server is, as messages and the header show it."""
        ...

    async def list_models(self) -> list[str]:
        """The models the server can answer with."""
        ...

    async def warm_up(
        self,
        model: str,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        think: bool | None = None,
        num_ctx: int | None = None,
        keep_alive: str | int | None = None,
    ) -> None:
        """Load ``model`` exactly as a turn starting with ``messages`` (the system message)
        and ``tools`` will use it, so the first turn neither reloads it nor evaluates the
        prefix again. Nothing of the reply is kept."""
        ...

    async def aclose(self) -> None: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


@runtime_checkable
class ToolsTemplateProbe(Protocol):
    """A client that can tell when the server's chat template drops tools (the
    OpenAI-compatible client, from llama-server's /props)."""

    async def tools_template_warning(self, model: str) -> str | None: ...
