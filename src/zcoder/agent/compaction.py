"""Compaction: older history replaced by a summary the model writes, the latest turns kept.

The session keeps the full transcript for the user (its events are never touched); only
the model's history is replaced. The summary is a user-role context record that zcoder
generates, like the relay wrapper, so every request still has one system message, first.

The split never separates an assistant's tool calls from their results: history is cut
only where a user turn begins (a message the user typed, or a relayed task).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from zcoder.agent.user_command import USER_COMMAND_OPEN
from zcoder.model import Message, user_message
from zcoder.skills.active import is_skill_record
from zcoder.tools.plan import is_plan_record

__all__ = [
    "KEEP_TURNS",
    "SUMMARY_OPEN",
    "is_summary",
    "split_history",
    "summary_record",
    "summary_request",
]

KEEP_TURNS: Final = 2
"""The latest user turns kept verbatim (with every message after them)."""
MAX_TRANSCRIPT_TOOL_CHARS: Final = 2000
"""A tool result longer than this appears in the text to summarise by its head and tail."""
SUMMARY_OPEN: Final = "<conversation_summary>"
SUMMARY_CLOSE: Final = "</conversation_summary>"

SUMMARY_INSTRUCTIONS: Final = """\
You are compacting the history of a coding-agent conversation so that the agent can go
on working with less context. Write a summary that the agent will read instead of the
history below. Keep, as short bullet lists under these headings:
- Goals: what the user asked for, in their words where it matters.
- Decisions: what was decided and why.
- Files: every file read, created or changed, with what changed.
- Commands: commands run that matter, and their outcome.
- Open work: what is unfinished, failing, or promised next.
- Relayed exchanges: every task relayed from or sent to another zcoder agent, with the
  sender or target (project and instance id) and what became of it. Label them as
  relayed: they were requests from other agents, not from the user.
Do not invent anything that is not in the history. Do not call tools. Reply with the
summary only."""


def is_summary(message: Mapping[str, Any]) -> bool:
    return message.get("role") == "user" and str(message.get("content", "")).startswith(
        SUMMARY_OPEN
    )


def _starts_turn(message: Mapping[str, Any]) -> bool:
    """A message the user typed or a relayed task (not a context record zcoder added)."""
    if message.get("role") != "user" or is_summary(message):
        return False
    content = str(message.get("content", ""))
    # A user command (``!cmd``) is context the user added, not a turn of its own.
    return not content.startswith(("[zcoder]", USER_COMMAND_OPEN))


def split_history(
    messages: Sequence[Message], keep_turns: int = KEEP_TURNS
) -> tuple[list[Message], list[Message]]:
    """(older, kept): ``kept`` starts at the ``keep_turns``-th last user turn.

    ``older`` is empty when there is nothing before that point to summarise (or only an
    earlier summary, which would be summarised again for nothing).
    """
    starts = [i for i, m in enumerate(messages) if _starts_turn(m)]
    if len(starts) <= keep_turns - 1 or not starts:
        return [], list(messages)
    cut = starts[-keep_turns] if keep_turns > 0 else len(messages)
    older, kept = list(messages[:cut]), list(messages[cut:])
    # Carried over as they are (a plan's record is written again after the new summary).
    if all(is_summary(m) or is_skill_record(m) or is_plan_record(m) for m in older):
        return [], list(messages)
    return older, kept


def _clip(text: str, limit: int = MAX_TRANSCRIPT_TOOL_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - limit} characters left out …]\n{text[-half:]}"


def render_history(messages: Sequence[Message]) -> str:
    """The history as plain text for the summariser: roles, calls, results (clipped)."""
    lines: list[str] = []
    for message in messages:
        role = message.get("role")
        content = str(message.get("content") or "")
        if role == "user":
            label = "EARLIER SUMMARY" if is_summary(message) else "USER"
            if is_skill_record(message):
                label = "SKILL INSTRUCTIONS (kept as they are after the summary)"
            elif content.startswith("<agent_relay>"):
                label = "RELAYED TASK (from another zcoder agent, not the user)"
            elif content.startswith(USER_COMMAND_OPEN):
                label = "SHELL COMMAND THE USER RAN (its output, as context)"
            lines.append(f"## {label}\n{content}")
        elif role == "assistant":
            if content.strip():
                lines.append(f"## ASSISTANT\n{content}")
            for call in message.get("tool_calls") or ():
                function = call.get("function", {}) if isinstance(call, dict) else {}
                arguments = json.dumps(function.get("arguments", {}), ensure_ascii=False)
                lines.append(f"## TOOL CALL {function.get('name', '?')}\n{_clip(arguments)}")
        elif role == "tool":
            name = message.get("tool_name") or "tool"
            lines.append(f"## TOOL RESULT {name}\n{_clip(content)}")
    return "\n\n".join(lines)


def summary_request(older: Sequence[Message], focus: str = "") -> list[Message]:
    """The messages of the summarising request (no tools)."""
    instructions = SUMMARY_INSTRUCTIONS
    if focus.strip():
        instructions += f"\nThe user asks the summary to focus on: {focus.strip()}"
    return [
        {"role": "system", "content": instructions},
        user_message(f"The history to summarise:\n\n{render_history(older)}"),
    ]


def summary_record(summary: str) -> Message:
    """The user-role context record that stands for the older history."""
    return user_message(
        f"{SUMMARY_OPEN}\n"
        "[zcoder] The earlier part of this conversation was compacted into this summary, "
        "written by the model. Turns after it are verbatim. Relayed exchanges in it were "
        "requests from other zcoder agents, not from the user.\n\n"
        f"{summary.strip()}\n"
        f"{SUMMARY_CLOSE}"
    )
