"""What ``--prompt`` writes: the reply as it streams (``ReplyWriter``), and with
``--output-format json`` (``--json``) one JSON object on stdout for scripts.

The reply is text from a model (and through it from files and tools): on a terminal it is
shown as the TUI shows it (``zcoder.base.sanitize.screen_safe``: line breaks and tabs
kept, every other control, escape sequence, invisible and bidi character as its escape);
to a pipe or a file it is written exactly. The JSON object carries those characters as
``\\uXXXX`` escapes (``json_text``), the same value once parsed.

Nothing else goes to stdout; tool activity and notices still go to stderr. The object::

    {
      "reply": "the final answer (or the partial text of a failed turn)",
      "outcome": "complete" | "blocked" | "incomplete" | "loop_stopped" | "stopped"
                 | "error",
      "exit_code": 0,
      "error": null,
      "tool_calls": [{"id": "...", "name": "read_file", "arguments": {...},
                      "status": "completed", "output": "...", "output_truncated": false}],
      "usage": {"context_tokens": 1234, "context_window": 16384, "measured": true},
      "notices": ["..."],
      "model": "qwen3-coder",
      "session_id": "...",
      "plan": [{"text": "write tests", "status": "in_progress"}]
    }

``plan`` is the model's plan as the run left it (``update_plan``; a resumed session's
too): null when the session has none, ``[]`` when the model cleared it.

A run that fails before its turn starts (an unknown session, a session in use) still
prints the object, with ``outcome`` ``"error"`` and the message in ``error``.
"""

from __future__ import annotations

from typing import Any, Final, TextIO, assert_never

from zcoder.agent import (
    AgentEvent,
    AssistantMessage,
    ContextUsage,
    ErrorNotice,
    Notice,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from zcoder.agent import events as ev
from zcoder.base.sanitize import is_terminal, json_text, screen_safe

__all__ = ["JSON_TOOL_OUTPUT_LIMIT", "ErrorTee", "JsonReport", "ReplyWriter"]

JSON_TOOL_OUTPUT_LIMIT: Final = 8192
"""The most characters of one tool's output the object carries (head and tail)."""


class ReplyWriter:
    """The reply's pieces, written to ``out`` as they come: exactly to a pipe or a file; on
    a terminal each piece shown as ``screen_safe`` shows the whole reply (a CR LF split
    between two pieces is one line break, a presentation selector stays with the character
    before it), so nothing of it can drive the terminal."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.terminal = is_terminal(out)
        self._last = ""  # the last character written (on a terminal)
        self._cr = False  # a carriage return held back: a line feed may follow

    def write(self, text: str) -> None:
        if not self.terminal:
            self.out.write(text)
            return
        if self._cr:
            text, self._cr = "\r" + text, False
        if text.endswith("\r"):
            text, self._cr = text[:-1], True
        if text:
            self.out.write(screen_safe(self._last + text)[len(screen_safe(self._last)) :])
            self._last = text[-1]

    def end(self) -> None:
        """The reply ended: a carriage return held back is shown."""
        if self._cr:
            self._cr, self._last = False, "\r"
            self.out.write(screen_safe("\r"))

    def flush(self) -> None:
        self.out.flush()


class ErrorTee:
    """stderr, remembering the last ``zcoder: ...`` error line written to it."""

    def __init__(self, err: TextIO) -> None:
        self.err = err
        self.last_error = ""

    def write(self, text: str) -> int:
        for line in text.splitlines():
            if line.startswith("zcoder: "):
                self.last_error = line.removeprefix("zcoder: ")
        return self.err.write(text)

    def flush(self) -> None:
        self.err.flush()


class JsonReport:
    """Collects the agent's events of one turn; ``render`` makes the object."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.session_id: str | None = None
        self.replies: list[str] = []
        self.calls: dict[str, dict[str, Any]] = {}
        self.usage: ContextUsage | None = None
        self.notices: list[str] = []
        self.errors: list[str] = []
        self.finished: TurnFinished | None = None
        self.plan: list[dict[str, str]] | None = None

    def __call__(self, event: AgentEvent) -> None:
        match event:
            case AssistantMessage() if event.text.strip():
                self.replies.append(event.text)
            case ToolStarted():
                self.calls[event.call_id] = {
                    "id": event.call_id,
                    "name": event.name,
                    "arguments": event.arguments,
                    "status": "running",
                }
            case ToolFinished():
                entry = self.calls.setdefault(
                    event.call_id, {"id": event.call_id, "name": event.name, "arguments": {}}
                )
                output, cut = _bounded(event.output)
                entry.update(status=event.status, output=output, output_truncated=cut)
            case ContextUsage():
                self.usage = event
            case Notice():
                self.notices.append(event.text)
            case ErrorNotice():
                self.errors.append(event.text)
            case TurnFinished():
                self.finished = event
            case ev.PlanChanged():
                self.plan = event.plan.to_list()
            case ev.SubagentProgress():
                pass  # the task call's output is the subagent's report
            case (
                AssistantMessage()
                | ev.AssistantDelta()
                | ev.ThinkingDelta()
                | ev.StatusChanged()
                | ev.ToolOutput()
                | ev.UserCommandStarted()
                | ev.UserCommandFinished()
                | ev.RelayReceived()
                | ev.UserSteered()
            ):
                pass  # the object has the whole reply and each call's whole output
            case _:
                assert_never(event)

    def render(self, exit_code: int, *, error: str = "") -> dict[str, Any]:
        finished = self.finished
        reply = finished.response if finished is not None and finished.response else ""
        if not reply and self.replies:
            reply = self.replies[-1]
        outcome = finished.outcome.value if finished is not None else "error"
        message = (finished.error if finished is not None else "") or (
            error if exit_code != 0 else ""
        )
        usage = (
            {
                "context_tokens": self.usage.used,
                "context_window": self.usage.window,
                "measured": self.usage.measured,
            }
            if self.usage is not None
            else None
        )
        return {
            "reply": reply,
            "outcome": outcome,
            "exit_code": exit_code,
            "error": message or None,
            "tool_calls": list(self.calls.values()),
            "usage": usage,
            "notices": self.notices,
            "model": self.model,
            "session_id": self.session_id,
            "plan": self.plan,
        }

    def write(self, out: TextIO, exit_code: int, *, error: str = "") -> None:
        out.write(json_text(self.render(exit_code, error=error)) + "\n")
        out.flush()


def _bounded(output: str) -> tuple[str, bool]:
    if len(output) <= JSON_TOOL_OUTPUT_LIMIT:
        return output, False
    half = JSON_TOOL_OUTPUT_LIMIT // 2
    return f"{output[:half]}\n[… cut …]\n{output[-half:]}", True
