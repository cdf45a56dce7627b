"""Reading the server-sent events of an OpenAI-compatible chat stream into events.

Kept apart from the client (zcoder.model.openai) so the rules can be tested chunk by
chunk: ``delta.content`` is a ``ContentDelta``; ``delta.reasoning_content`` (llama.cpp,
older vLLM) or ``delta.reasoning`` (newer vLLM) a ``ReasoningDelta``; the pieces of
``delta.tool_calls`` are joined by index into one ``ToolCallsReceived`` when the choice
finishes, with the server's ids kept; ``finish_reason`` becomes ``Done.done_reason``
(``"length"`` stays, ``"stop"`` and ``"tool_calls"`` become ``"stop"``); the ``usage`` of
the last chunk gives the token counts. Server text quoted in an error is scrubbed of the
API key (``secrets``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from zcoder.model.errors import ModelStreamError
from zcoder.model.scrub import quote_server_text, server_error_summary
from zcoder.model.stream import optional_int, parse_tool_call, text_events, tool_call_list
from zcoder.model.types import ChatEvent, Done, ToolCallsReceived

__all__ = ["OpenAIStreamParser"]


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
                f"{quote_server_text(text, self.secrets)}"
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
                f"malformed response from {self.server} ({exc.msg}): "
                f"{quote_server_text(data, self.secrets)}"
            ) from None
        if not isinstance(record, dict):
            raise ModelStreamError(
                f"malformed response from {self.server} (not an object): "
                f"{quote_server_text(data, self.secrets)}"
            )
        return self.feed_record(record)

    def _read_delta(self, delta: Mapping[str, Any]) -> list[ChatEvent]:
        # llama.cpp and older vLLM send ``reasoning_content``, newer vLLM ``reasoning``.
        thinking = delta.get("reasoning_content")
        if not (isinstance(thinking, str) and thinking):
            thinking = delta.get("reasoning")
        for raw in tool_call_list(delta.get("tool_calls"), self.server):
            self._add_piece(raw)
        return text_events(thinking, delta.get("content"))

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
                prompt_eval_count=optional_int(usage.get("prompt_tokens")),
                eval_count=optional_int(usage.get("completion_tokens")),
            )
        )
        return events


def _done_reason(finish_reason: str | None) -> str | None:
    if finish_reason in ("stop", "tool_calls", "function_call", "eos"):
        return "stop"
    return finish_reason  # "length" stays "length"; anything else as the server said
