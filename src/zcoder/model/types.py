"""What the client yields while a reply streams, and the message dicts it sends.

Messages are plain dicts in Ollama's wire format, so a session can store them as JSON
and send them back unchanged. The builders here are the one place that knows the shape
of an assistant message with tool calls and of a tool result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

__all__ = [
    "AssistantReply",
    "ChatEvent",
    "ContentDelta",
    "Done",
    "Message",
    "ReasoningDelta",
    "ToolCall",
    "ToolCallsReceived",
    "assistant_message",
    "system_message",
    "tool_result_message",
    "user_message",
]

Message: TypeAlias = dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """One tool call of an assistant reply.

    ``id`` is the id Ollama sent, or a generated ``call_<n>`` (n counts the calls of the
    reply from 0) when it sent none. When the arguments could not be read as a JSON
    object, ``arguments`` is empty, ``arguments_error`` says why (a text meant for the
    model, so it can correct itself) and ``raw_arguments`` holds what was received; the
    history then carries ``{}`` for it, since Ollama accepts only an object there.
    """

    id: str
    name: str
    arguments: dict[str, Any]
    arguments_error: str | None = None
    raw_arguments: str | None = None
    index: int | None = None

    def to_wire(self) -> dict[str, Any]:
        """The call as it goes back to Ollama inside an assistant message."""
        function: dict[str, Any] = {"name": self.name, "arguments": dict(self.arguments)}
        if self.index is not None:
            function["index"] = self.index
        return {"id": self.id, "function": function}


@dataclass(frozen=True)
class ContentDelta:
    """A piece of the assistant's visible reply."""

    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the model's reasoning (sent when thinking is on). Named apart from the
    agent's ThinkingDelta event (zcoder.agent.events), which shows such a piece."""

    text: str


@dataclass(frozen=True)
class ToolCallsReceived:
    """Tool calls from one streamed record; a reply may bring several such events."""

    calls: list[ToolCall]


@dataclass(frozen=True)
class Done:
    """The final record: why generation stopped and the token counts and timings.

    Durations are in nanoseconds, as Ollama reports them; any field Ollama left out is
    ``None``. ``done_reason`` is ``"stop"`` normally and ``"length"`` when ``num_predict``
    cut the reply short.
    """

    done_reason: str | None = None
    prompt_eval_count: int | None = None
    eval_count: int | None = None
    total_duration: int | None = None
    load_duration: int | None = None
    prompt_eval_duration: int | None = None
    eval_duration: int | None = None


ChatEvent: TypeAlias = ContentDelta | ReasoningDelta | ToolCallsReceived | Done


def system_message(content: str) -> Message:
    return {"role": "system", "content": content}


def user_message(content: str) -> Message:
    return {"role": "user", "content": content}


def assistant_message(
    content: str, tool_calls: Sequence[ToolCall] = (), *, thinking: str | None = None
) -> Message:
    """An assistant message for the history, with its tool calls and their ids."""
    message: Message = {"role": "assistant", "content": content}
    if thinking:
        message["thinking"] = thinking
    if tool_calls:
        message["tool_calls"] = [call.to_wire() for call in tool_calls]
    return message


def tool_result_message(call: ToolCall, content: str) -> Message:
    """The result of ``call``, tied to it by ``tool_call_id`` (and ``tool_name``)."""
    return {
        "role": "tool",
        "content": content,
        "tool_call_id": call.id,
        "tool_name": call.name,
    }


@dataclass
class AssistantReply:
    """Collects the events of one streamed reply; ``to_message()`` gives its history entry."""

    content: str = ""
    thinking: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    done: Done | None = None
    stopped: str = ""
    """Why zcoder cut the reply short while it streamed (zcoder.model.repeats); "": it did not."""

    def add(self, event: ChatEvent) -> None:
        match event:
            case ContentDelta(text=text):
                self.content += text
            case ReasoningDelta(text=text):
                self.thinking += text
            case ToolCallsReceived(calls=calls):
                self.tool_calls.extend(calls)
            case Done():
                self.done = event

    def to_message(self) -> Message:
        return assistant_message(self.content, self.tool_calls, thinking=self.thinking or None)
