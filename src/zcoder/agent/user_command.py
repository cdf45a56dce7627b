"""Shell commands the user types (``!command``): run, shown, and kept as context.

The user typed the command, so it runs without approval, whatever the profile or command
policy says, and never as part of a relayed turn. It runs like run_command (bash in the
workspace, its own process group, the same timeout and output bounds; Escape stops the
whole group) and its output streams to the front end as ``ToolOutput`` events. It starts no
turn: the command and its result (bounded like a tool result, cut to the context window's
share like one) are added to the conversation as one user-role context record, which the
model reads with the user's next prompt. The record enters neither the exact-user ledger
nor the session title.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from zcoder.agent.events import (
    StatusChanged,
    UserCommandFinished,
    UserCommandStarted,
)
from zcoder.agent.live_output import LiveOutput
from zcoder.agent.recorder import Recorder
from zcoder.agent.status import Status
from zcoder.agent.usage import fit_tool_output
from zcoder.model import Message, user_message
from zcoder.tools.command import DEFAULT_COMMAND_TIMEOUT, outcome_text, run_shell
from zcoder.tools.output import bound_text

if TYPE_CHECKING:
    from zcoder.agent.settings import AgentSettings

__all__ = [
    "USER_COMMAND_CLOSE",
    "USER_COMMAND_OPEN",
    "USER_COMMAND_TIMEOUT",
    "USER_STOPPED",
    "is_user_command_record",
    "run_user_command",
    "user_command_record",
]

USER_COMMAND_OPEN: Final = "<user_shell_command>"
USER_COMMAND_CLOSE: Final = "</user_shell_command>"
USER_COMMAND_TIMEOUT: Final = DEFAULT_COMMAND_TIMEOUT
"""Seconds before a user command is stopped, as run_command's default."""
USER_STOPPED: Final = "Interrupted: the user stopped this command."
# The name fit_tool_output gives in its advice (a narrower command, head, tail, grep).
_FIT_NAME: Final = "run_command"


def user_command_record(command: str, result: str) -> str:
    """The context record of a user command: the command and its result, labelled."""
    return (
        f"{USER_COMMAND_OPEN}\n"
        "[zcoder] The user ran this shell command in the workspace themselves; it is not a "
        "request to you. Its output is context for what they ask next.\n"
        f"$ {command}\n"
        f"{result}\n"
        f"{USER_COMMAND_CLOSE}"
    )


def is_user_command_record(message: Mapping[str, Any]) -> bool:
    return message.get("role") == "user" and str(message.get("content", "")).startswith(
        USER_COMMAND_OPEN
    )


async def run_user_command(
    command: str, *, settings: AgentSettings, messages: list[Message], recorder: Recorder
) -> UserCommandFinished:
    """Run ``command`` (already stripped of its ``!``) and record it; see the module doc.

    Re-raises ``asyncio.CancelledError`` once the command's group is gone and what it
    printed until then is recorded (shown, saved, and in the conversation).
    """
    if not command.strip():
        raise ValueError("a user command cannot be empty")
    command_id = f"user-{uuid.uuid4().hex[:12]}"
    recorder.emit(UserCommandStarted(command_id, command))
    recorder.emit(StatusChanged(Status.TOOL, "shell"))
    metadata: dict[str, Any] = {
        "name": "user_command",
        "user_command": True,
        "command": command,
        "status": "running",
    }
    event_id = recorder.event("tool", "", metadata)
    bound = settings.max_tool_output
    live = LiveOutput(
        command_id,
        recorder.emit,
        bound,
        window=settings.num_ctx,
        name=_FIT_NAME,
        save=lambda so_far: recorder.update_event(event_id, so_far, metadata),
    )

    def record(status: str, result: str, exit_code: int | None) -> UserCommandFinished:
        recorder.update_event(
            event_id, result, {**metadata, "status": status, "exit_code": exit_code}
        )
        messages.append(user_message(user_command_record(command, result)))
        recorder.save_messages(messages)
        finished = UserCommandFinished(command_id, command, status, result, exit_code)
        recorder.emit(finished)
        return finished

    try:
        outcome = await run_shell(
            command, settings.workspace, float(USER_COMMAND_TIMEOUT), bound, live.feed
        )
    except asyncio.CancelledError:
        record("interrupted", live.interrupted(USER_STOPPED), None)
        recorder.emit(StatusChanged(Status.STOPPED))
        raise
    except (OSError, ValueError) as exc:  # bash missing; a NUL byte in the command
        finished = record("failed", f"Error: could not run the command: {exc}", None)
    else:
        result = fit_tool_output(
            bound_text(outcome_text(outcome, USER_COMMAND_TIMEOUT), bound),
            window=settings.num_ctx,
            name=_FIT_NAME,
        )
        ok = outcome.exit_code == 0 and not outcome.timed_out
        finished = record("completed" if ok else "failed", result, outcome.exit_code)
    recorder.emit(StatusChanged(Status.READY))
    return finished
