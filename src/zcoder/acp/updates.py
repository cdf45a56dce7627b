"""zcoder's agent events as ACP session updates, in order, and a saved session replayed.

The agent tells its front end what happens through one synchronous callback
(zcoder.agent.events); ACP's ``session/update`` is an awaited notification. The
``UpdatePump`` bridges the two: events are translated at once, in the order they come,
queued, and sent by one task, so an update never overtakes an earlier one, and a turn
can wait (``flush``) until everything it caused reached the client: before a permission
request (the client must know the tool call it is asked about) and before the prompt's
response (the protocol's rule: all updates of a turn come before its stop reason).

What the client sees follows the TUI: the reply as it streams, held back while it may
still turn out to be a tool call written as text (``HeldReply``, as ``--prompt`` does, since
a chunk sent cannot be taken back); reasoning as thought chunks; each tool call with its
kind, its state (pending → in_progress → completed/failed), the command's output as it
streams, edits as diffs of the whole file; notices and errors as short agent messages;
the context meter as a usage update; a task relayed by another zcoder as a user message
that names its sender.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, assert_never

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.helpers import SessionUpdate, ToolCallContentVariant
from acp.schema import (
    AgentPlanUpdate,
    PlanEntryStatus,
    ToolCallLocation,
    ToolCallStatus,
    ToolKind,
    UsageUpdate,
)

from zcoder.acp.notices import SessionNotice
from zcoder.agent import events as ev
from zcoder.agent.cancellation import STOPPED_KEY
from zcoder.agent.headings import call_heading
from zcoder.agent.status import ContextUsage
from zcoder.agent.steering import STEERED_KEY
from zcoder.base.plural import counted
from zcoder.base.sanitize import visible, visible_lines
from zcoder.model.recovery import HeldReply
from zcoder.relay import from_words, sender_words
from zcoder.sessions.records import TranscriptEvent
from zcoder.tools.plan import Plan, PlanStatus

log = logging.getLogger(__name__)

Update = SessionUpdate | UsageUpdate | SessionNotice

STEERING_HEAD: Final = "**Steering**\n\n"
"""How a user message that is steering begins (``steering_message``)."""
Send = Callable[[Update], Awaitable[None]]

LIVE_OUTPUT_CHARS: Final = 64 * 1024
"""How much of a running command's output each update carries (its tail): ACP replaces a
tool call's content with every update, so the whole output would be resent each time."""

_KINDS: Final[dict[str, ToolKind]] = {
    "read_file": "read",
    "read_file_range": "read",
    "list_files": "read",
    "search": "search",
    "write_file": "edit",
    "replace_text": "edit",
    "apply_patch": "edit",
    "run_command": "execute",
    "update_plan": "think",
}


@dataclass(frozen=True)
class FileEdit:
    """One file as an edit tool changed it (or would): text before and after."""

    path: Path
    old_text: str | None
    new_text: str

    def content(self) -> ToolCallContentVariant:
        return tool_diff_content(str(self.path), self.new_text, self.old_text)


def tool_kind(name: str) -> ToolKind:
    return _KINDS.get(name, "other")


def tool_title(name: str, arguments: dict[str, Any]) -> str:
    """What the editor shows for a call: its heading, as every front end heads it (the
    whole command for run_command); the arguments go along as the raw input."""
    return call_heading(name, arguments)


def tool_locations(workspace: Path, arguments: dict[str, Any]) -> list[ToolCallLocation] | None:
    """The file a call touches, absolute as ACP wants it (the client follows along)."""
    path = arguments.get("path")
    if not isinstance(path, str) or not path:
        return None
    return [ToolCallLocation(path=str(workspace / path))]


def _status(zcoder_status: str) -> ToolCallStatus:
    return "completed" if zcoder_status == "completed" else "failed"


class EventTranslator:
    """Agent events → ACP updates for one session (stateful: the held reply, live output)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self._held = HeldReply()
        self._output: dict[str, str] = {}  # call id -> output streamed so far (its tail)
        self._edits: dict[str, list[FileEdit]] = {}  # call id -> the diffs it wrote
        self.running_call: str | None = None

    def edited(self, edits: Sequence[FileEdit]) -> None:
        """An edit tool wrote these files (zcoder.acp.approvals.ReportingJournal)."""
        if self.running_call is not None:
            self._edits.setdefault(self.running_call, []).extend(edits)

    def __call__(self, event: ev.AgentEvent) -> list[Update]:
        match event:
            case ev.AssistantDelta():
                return self._message(self._held.feed(event.text))
            case ev.ThinkingDelta():
                return [update_agent_thought_text(event.text)] if event.text else []
            case ev.AssistantMessage():
                if not event.streamed:
                    return self._message(event.text)
                return self._message(self._held.finish(event.text))
            case ev.TurnFinished():
                rest = self._held.finish(self._held.content) if self._held.content else ""
                return self._message(rest)
            case ev.ToolStarted():
                return self._started(event)
            case ev.ToolOutput():
                return self._streamed(event.call_id, event.text)
            case ev.ToolFinished():
                return self._finished(event)
            case ev.UserCommandStarted():
                self._output[event.command_id] = ""
                return [
                    start_tool_call(
                        event.command_id,
                        event.command,
                        kind="execute",
                        status="in_progress",
                        raw_input={"command": event.command},
                    )
                ]
            case ev.UserCommandFinished():
                self._output.pop(event.command_id, None)
                return [
                    update_tool_call(
                        event.command_id,
                        status=_status(event.status),
                        content=[tool_content(text_block(event.output))],
                    )
                ]
            case ev.Notice():
                return [SessionNotice("info", event.text)]
            case ev.ErrorNotice():
                return [SessionNotice("error", event.text)]
            case ev.UserSteered():
                return [steering_message(event.text)]
            case ev.RelayReceived():
                return [
                    relayed_task(
                        event.sender_kind,
                        event.sender_project or event.sender_instance_id,
                        event.sender_pid,
                        event.sender_workspace,
                        event.body,
                    )
                ]
            case ContextUsage():
                if not event.window:
                    return []
                return [
                    UsageUpdate(session_update="usage_update", used=event.used, size=event.window)
                ]
            case ev.StatusChanged():
                return []  # the client shows its own progress
            case ev.PlanChanged():
                return [plan_update(event.plan)]
            case ev.SubagentProgress():
                turns = counted(event.turns, "turn")
                said = f"{visible(event.step)} · {turns} · {event.tokens:,} tokens"
                return [
                    update_tool_call(
                        event.call_id,
                        status="in_progress",
                        content=[tool_content(text_block(said))],
                    )
                ]
            case _:
                assert_never(event)

    def _message(self, text: str) -> list[Update]:
        return [update_agent_message_text(text)] if text else []

    def _started(self, event: ev.ToolStarted) -> list[Update]:
        self.running_call = event.call_id
        self._output[event.call_id] = ""
        kind = tool_kind(event.name)
        return [
            start_tool_call(
                event.call_id,
                tool_title(event.name, event.arguments),
                kind=kind,
                # A call that may wait for permission (a command, an edit, an MCP tool,
                # a message to a peer) is pending until it runs; reading runs at once.
                status="in_progress" if kind in ("read", "search") else "pending",
                locations=tool_locations(self.workspace, event.arguments),
                raw_input=dict(event.arguments),
            )
        ]

    def _streamed(self, call_id: str, text: str) -> list[Update]:
        so_far = (self._output.get(call_id, "") + text)[-LIVE_OUTPUT_CHARS:]
        self._output[call_id] = so_far
        return [
            update_tool_call(
                call_id, status="in_progress", content=[tool_content(text_block(so_far))]
            )
        ]

    def _finished(self, event: ev.ToolFinished) -> list[Update]:
        if self.running_call == event.call_id:
            self.running_call = None
        self._output.pop(event.call_id, None)
        content: list[ToolCallContentVariant] = [
            edit.content() for edit in self._edits.pop(event.call_id, [])
        ]
        if event.output:
            content.append(tool_content(text_block(event.output)))
        return [
            update_tool_call(
                event.call_id,
                status=_status(event.status),
                content=content,
                raw_output={"status": event.status, "output": event.output},
            )
        ]


class UpdatePump:
    """Sends one session's updates in order, from a synchronous callback; ``flush`` waits
    until all sent so far went out. A send that fails (the client is gone) is logged and
    dropped: the turn goes on to its end and is saved."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._queue: asyncio.Queue[Update] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def put(self, updates: Sequence[Update]) -> None:
        for update in updates:
            self._queue.put_nowait(update)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def flush(self) -> None:
        await self._queue.join()

    async def _run(self) -> None:
        while not self._queue.empty():
            update = self._queue.get_nowait()
            try:
                await self._send(update)
            except Exception as exc:  # noqa: BLE001 - the client went away: nothing to tell
                log.debug("session update not sent: %s", exc)
            finally:
                self._queue.task_done()

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


_PLAN_STATUSES: Final[dict[PlanStatus, PlanEntryStatus]] = {
    PlanStatus.PENDING: "pending",
    PlanStatus.IN_PROGRESS: "in_progress",
    PlanStatus.DONE: "completed",
}


def plan_update(plan: Plan) -> AgentPlanUpdate:
    """The model's plan as ACP's plan update: the editor shows it as its own checklist
    (each update replaces the whole list; an empty one clears it)."""
    return update_plan(
        plan_entry(visible(item.text), status=_PLAN_STATUSES[item.status]) for item in plan.items
    )


def steering_message(text: str) -> Update:
    """The user's steering where it landed in the turn: a user message headed as such,
    marked in ``_meta`` (zcoder --connect shows it as steering: zcoder.remote.events)."""
    chunk = update_user_message_text(f"{STEERING_HEAD}{visible_lines(text)}")
    chunk.field_meta = {"zcoder": {STEERED_KEY: True}}
    return chunk


def relayed_task(kind: str, name: str, pid: int | str, workspace: str, body: str) -> Update:
    """A task another zcoder relayed, as the editor shows it: who sent it (as the TUI
    names a sender, by its standing: zcoder.relay.display), then the whole text, with
    invisible and control characters made visible."""
    sender = visible(from_words(kind, sender_words(kind, name, pid, workspace)))
    return update_user_message_text(f"**Task relayed {sender}**\n\n{visible_lines(body)}")


def replay(
    events: Sequence[TranscriptEvent], workspace: Path, *, notices: bool = False
) -> list[Update]:
    """A saved session as the updates that show it again (``session/load``): what the
    live stream sent, and no more. Notices and errors are replayed as the agent messages
    they were sent as, unless the client takes notices, which are live events the
    protocol does not replay (zcoder.acp.notices); a receipt is part of the conversation
    either way. The note a stopped turn leaves for the TUI's transcript was never sent."""
    updates: list[Update] = []
    for event in events:
        meta = event.metadata
        if meta.get(STOPPED_KEY) or (notices and event.role in ("system", "error")):
            continue
        if event.role == "user":
            steered = meta.get(STEERED_KEY)
            updates.append(
                steering_message(event.text) if steered else update_user_message_text(event.text)
            )
        elif event.role == "assistant":
            if event.text:
                updates.append(update_agent_message_text(event.text))
        elif event.role == "tool":
            updates.extend(_replayed_tool(event, workspace))
        elif event.role == "relay":
            updates.append(
                relayed_task(
                    str(meta.get("sender_kind", "")),
                    str(meta.get("sender_project") or meta.get("sender_instance_id", "")),
                    str(meta.get("sender_pid", "?")),
                    str(meta.get("sender_workspace", "")),
                    event.text,
                )
            )
        elif event.role == "error":
            updates.append(SessionNotice("error", event.text).fallback())
        elif event.text:  # system notices and receipts
            updates.append(SessionNotice("info", event.text).fallback())
    return updates


def _replayed_tool(event: TranscriptEvent, workspace: Path) -> list[Update]:
    meta = event.metadata
    name = str(meta.get("name", "tool"))
    call_id = str(meta.get("call_id") or f"saved-{event.id}")
    arguments = meta.get("arguments")
    args = arguments if isinstance(arguments, dict) else {}
    content: list[ToolCallContentVariant] = []
    diff = meta.get("diff")
    if isinstance(diff, str) and diff:
        # The saved preview of the diff, as the transcript shows it; the files themselves
        # may have changed since, so no whole-file diff is made up.
        content.append(tool_content(text_block(diff)))
    if event.text:
        content.append(tool_content(text_block(event.text)))
    return [
        start_tool_call(
            call_id,
            tool_title(name, args),
            kind=tool_kind(name),
            status=_status(str(meta.get("status", "failed"))),
            content=content or None,
            locations=tool_locations(workspace, args),
            raw_input=args,
        )
    ]
