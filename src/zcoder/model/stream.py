"""Reading Ollama's streamed ``/api/chat`` NDJSON records into typed events.

Kept apart from the HTTP code so the rules (argument parsing, id generation, what counts
as malformed) can be tested record by record.
"""

from __future__ import annotations

import json
from typing import Any

from zcoder.model.errors import ModelStreamError
from zcoder.model.scrub import quote_server_text, server_error_summary
from zcoder.model.types import (
    ChatEvent,
    ContentDelta,
    Done,
    ReasoningDelta,
    ToolCall,
    ToolCallsReceived,
)

__all__ = ["ChatStreamParser", "optional_int", "parse_tool_call", "text_events", "tool_call_list"]


class ChatStreamParser:
    """Turns the records of one reply into events; use a new parser per request."""

    def __init__(self) -> None:
        self._calls_seen = 0
        self.done = False

    def feed_line(self, line: str) -> list[ChatEvent]:
        text = line.strip()
        if not text:
            return []
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ModelStreamError(
                f"malformed response from Ollama ({exc.msg}): {quote_server_text(text)}"
            ) from None
        if not isinstance(record, dict):
            raise ModelStreamError(
                f"malformed response from Ollama (not an object): {quote_server_text(text)}"
            )
        return self.feed_record(record)

    def finish(self) -> list[ChatEvent]:
        """The body ended: nothing more if the reply was done, else an error."""
        if self.done:
            return []
        raise ModelStreamError("Ollama closed the stream before the reply was done; try again")

    def feed_record(self, record: dict[str, Any]) -> list[ChatEvent]:
        if "error" in record:
            raise ModelStreamError(
                f"Ollama reported an error mid-stream: {server_error_summary(record)}"
            )
        events: list[ChatEvent] = []
        message = record.get("message")
        if message is not None and not isinstance(message, dict):
            raise ModelStreamError("malformed response from Ollama: 'message' is not an object")
        if message:
            events += text_events(message.get("thinking"), message.get("content"))
            if raw_calls := tool_call_list(message.get("tool_calls"), "Ollama"):
                calls = []
                for raw in raw_calls:
                    calls.append(parse_tool_call(raw, ordinal=self._calls_seen))
                    self._calls_seen += 1
                events.append(ToolCallsReceived(calls))
        if record.get("done") is True:
            self.done = True
            events.append(
                Done(
                    done_reason=_opt_str(record.get("done_reason")),
                    prompt_eval_count=optional_int(record.get("prompt_eval_count")),
                    eval_count=optional_int(record.get("eval_count")),
                    total_duration=optional_int(record.get("total_duration")),
                    load_duration=optional_int(record.get("load_duration")),
                    prompt_eval_duration=optional_int(record.get("prompt_eval_duration")),
                    eval_duration=optional_int(record.get("eval_duration")),
                )
            )
        return events


def text_events(thinking: object, content: object) -> list[ChatEvent]:
    """A record's reasoning and reply text as events, in that order; a piece that is not
    a non-empty string is left out."""
    events: list[ChatEvent] = []
    if isinstance(thinking, str) and thinking:
        events.append(ReasoningDelta(thinking))
    if isinstance(content, str) and content:
        events.append(ContentDelta(content))
    return events


def tool_call_list(raw_calls: object, server: str) -> list[Any]:
    """A record's ``tool_calls`` (empty when it has none); anything but a list is malformed."""
    if not raw_calls:
        return []
    if not isinstance(raw_calls, list):
        raise ModelStreamError(f"malformed response from {server}: 'tool_calls' is not a list")
    return raw_calls


def parse_tool_call(raw: object, *, ordinal: int) -> ToolCall:
    """Read one wire tool call; ``ordinal`` numbers the generated id when none was sent."""
    if not isinstance(raw, dict):
        raise ModelStreamError("malformed response from Ollama: a tool call is not an object")
    function = raw.get("function")
    if not isinstance(function, dict):
        raise ModelStreamError("malformed response from Ollama: a tool call has no 'function'")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise ModelStreamError("malformed response from Ollama: a tool call has no name")
    raw_id = raw.get("id")
    call_id = raw_id if isinstance(raw_id, str) and raw_id else f"call_{ordinal}"
    index = function.get("index")
    index = index if isinstance(index, int) and not isinstance(index, bool) else None
    arguments, error, raw_text = _parse_arguments(name, function.get("arguments"))
    return ToolCall(
        id=call_id,
        name=name,
        arguments=arguments,
        arguments_error=error,
        raw_arguments=raw_text,
        index=index,
    )


def _parse_arguments(name: str, value: object) -> tuple[dict[str, Any], str | None, str | None]:
    if value is None:
        return {}, None, None
    if isinstance(value, dict):
        return value, None, None
    if isinstance(value, str):
        if not value.strip():
            return {}, None, None
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as exc:
            return (
                {},
                f"the arguments of {name} are not valid JSON ({exc.msg} at position "
                f"{exc.pos}): {quote_server_text(value)}; send them as a JSON object",
                value,
            )
        if isinstance(parsed, dict):
            return parsed, None, None
        return (
            {},
            f"the arguments of {name} must be a JSON object, got {type(parsed).__name__}: "
            f"{quote_server_text(value)}",
            value,
        )
    text = json.dumps(value)
    return (
        {},
        f"the arguments of {name} must be a JSON object, got {type(value).__name__}: "
        f"{quote_server_text(text)}",
        text,
    )


def optional_int(value: object) -> int | None:
    """A count from the wire: an int (or a whole float), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) else None
