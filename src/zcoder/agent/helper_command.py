"""``/claude TASK``, ``/codex TASK``, ``/opencode TASK``: the user hands a task to a helper.

Like a ``!command`` (agent/user_command.py) it starts no model turn: it is asked about
(zcoder.tools.helpers.run: the exact command line, and that the helper runs with its own
permissions), runs in the workspace with its output streamed as ``ToolOutput`` events into
one entry, and its final answer and the files it changed join the conversation as one
user-role context record, which the model reads with the user's next prompt. Its edits are
the journal's, as one turn of their own: /diff shows them and /undo takes them back.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Final

from zcoder.agent.events import StatusChanged, UserCommandFinished, UserCommandStarted
from zcoder.agent.live_output import LiveOutput
from zcoder.agent.status import Status
from zcoder.agent.usage import fit_tool_output
from zcoder.model import user_message
from zcoder.tools.helpers.clis import Helper
from zcoder.tools.helpers.run import authorize_helper, command_line, run_helper

if TYPE_CHECKING:
    from zcoder.agent.edits import EditJournal
    from zcoder.agent.recorder import Recorder
    from zcoder.agent.settings import AgentSettings
    from zcoder.model import Message
    from zcoder.tools import ToolContext

__all__ = ["HELPER_RECORD_OPEN", "HELPER_STOPPED", "HelperHost", "run_helper_command"]

HELPER_RECORD_OPEN: Final = "<user_helper_run>"
HELPER_RECORD_CLOSE: Final = "</user_helper_run>"
HELPER_STOPPED: Final = "Interrupted: the user stopped the helper."


def helper_record(helper: Helper, task: str, result: str) -> str:
    """The context record of a helper's run: who, the task, its answer and changes."""
    return (
        f"{HELPER_RECORD_OPEN}\n"
        f"[zcoder] The user handed this task to {helper.title} (/{helper.name}); it is not "
        "a request to you. Its answer and the files it changed are context for what they "
        "ask next.\n"
        f"Task: {task}\n"
        f"{result}\n"
        f"{HELPER_RECORD_CLOSE}"
    )


@dataclass(frozen=True)
class HelperHost:
    """What a helper's run needs of the agent: its conversation, recorder and journal,
    and a user turn's tool context (the approval policy, the approver, the workspace)."""

    settings: AgentSettings
    messages: list[Message]
    recorder: Recorder
    edits: EditJournal
    ctx: ToolContext


async def run_helper_command(
    agent: HelperHost, helper: Helper, task: str, *, timeout: float
) -> UserCommandFinished:
    """Ask, run ``helper`` on ``task`` and record it; see the module docstring. Re-raises
    ``asyncio.CancelledError`` once its group is gone and its changes are journalled."""
    recorder, settings = agent.recorder, agent.settings
    shown = command_line(helper, task)
    command_id = f"helper-{uuid.uuid4().hex[:12]}"
    metadata: dict[str, Any] = {"name": "helper", "user_command": True, "command": shown}

    def finish(status: str, result: str, exit_code: int | None) -> UserCommandFinished:
        recorder.event("tool", result, {**metadata, "status": status, "exit_code": exit_code})
        agent.messages.append(user_message(helper_record(helper, task, result)))
        recorder.save_messages(agent.messages)
        finished = UserCommandFinished(command_id, shown, status, result, exit_code)
        recorder.emit(finished)
        recorder.emit(StatusChanged(Status.READY))
        return finished

    recorder.emit(UserCommandStarted(command_id, shown))
    why = await authorize_helper(helper, task, agent.ctx, timeout)
    if why is not None:
        return finish("failed", f"Not run: {why}.", None)
    recorder.emit(StatusChanged(Status.TOOL, helper.name))
    agent.edits.begin_turn(f"/{helper.name} {task}")  # its edits: one /undo of their own
    bound, window = settings.max_tool_output, settings.num_ctx
    live = LiveOutput(command_id, recorder.emit, bound, window=window, name=helper.name)
    agent.ctx.on_output = live.feed  # a context of its own (Agent.run_helper)
    record = partial(agent.edits.record_writes, helper.name)
    try:
        outcome = await run_helper(helper, task, agent.ctx, timeout, record)
    except asyncio.CancelledError:
        finish("interrupted", live.interrupted(HELPER_STOPPED), None)
        recorder.emit(StatusChanged(Status.STOPPED))
        raise
    except (OSError, ValueError) as exc:  # bash missing; a NUL byte in the task
        return finish("failed", f"Error: could not start {helper.title}: {exc}", None)
    result = fit_tool_output(outcome.text(timeout, bound), window=window, name=helper.name)
    return finish("completed" if outcome.ok else "failed", result, outcome.exit_code)
