"""What the rest of zcoder depends on of a model client, whichever wire format it speaks.

The agent, the app and ``--prompt`` hold a client through these Protocols, never through
a concrete class, so a new backend is one more class that satisfies them (see
zcoder.model.backends for the choice, zcoder.model.http for the shared HTTP core).

* ``ChatClient``: one streamed reply. All the agent's turns and compaction need.
* ``ModelClient``: a whole backend as the front ends use it: ``chat``, the served models,
  the explicit warm-up (load the model as the first turn will use it), closing.
* ``ToolsTemplateProbe`` (optional): a server whose chat template may drop tools says so.
* ``VisionProbe`` (optional): whether the server says a model takes images.
* ``ChatParams`` and ``LoadParams``: the keywords of a chat and of a warm-up, defined once
  for these Protocols, the clients and the request builders.

What a client can tell about a model's context window is optional too and lives with the
window logic (zcoder.model.context: ``WindowProbe`` for Ollama, ``ServerWindow`` for an
OpenAI-compatible server), since the two servers answer different questions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Protocol, Self, TypedDict, Unpack, runtime_checkable

from zcoder.model.types import ChatEvent, Message

__all__ = [
    "ChatClient",
    "ChatParams",
    "LoadParams",
    "ModelClient",
    "SlotsProbe",
    "ToolsTemplateProbe",
    "VisionProbe",
]


class LoadParams(TypedDict, total=False):
    """What decides how the server loads the model for a chat: the tools and thinking of
    the prompt, and Ollama's window (``num_ctx``) and lifetime (``keep_alive``)."""

    tools: Sequence[Mapping[str, Any]] | None
    think: bool | None
    num_ctx: int | None
    keep_alive: str | int | float | None


class ChatParams(LoadParams, total=False):
    """A chat's parameters besides the model and the messages."""

    num_predict: int | None
    options: Mapping[str, Any] | None


class ChatClient(Protocol):
    """A client that streams one reply: deltas, tool calls, then exactly one ``Done``.

    Raises a ``ModelError`` subclass on failure, before or during the stream; closing the
    iterator (or cancelling the task iterating it) stops the request.
    """

    def chat(
        self, model: str, messages: Sequence[Message], **params: Unpack[ChatParams]
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
        self, model: str, messages: Sequence[Message], **params: Unpack[LoadParams]
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


@runtime_checkable
class VisionProbe(Protocol):
    """A client that can ask its server whether a model takes images: Ollama's
    ``/api/show`` capabilities, llama.cpp's ``/props`` modalities. True or False when the
    server says, None when it does not; ``ModelError`` when it cannot be asked."""

    async def vision_support(self, model: str) -> bool | None: ...


@runtime_checkable
class SlotsProbe(Protocol):
    """A client that can tell how many requests its server answers at once (the
    OpenAI-compatible client, from llama-server's /props ``total_slots``); None: unknown."""

    async def parallel_slots(self) -> int | None: ...
