"""Running every hook of an event and joining their answers into one.

The hooks that match an event run at the same time, as in Claude Code, each with its own
deadline; the event waits for the slowest (bounded by its deadline). Their answers join
strictly: any block blocks (the reasons are all kept), for a permission deny beats ask beats
allow, and every context, message and error is kept. A project hook (one from the
repository's ``.zcoder/settings.json``) runs only if ``allowed`` says the user consented to
it; the others are skipped and said so, never run behind the user's back.

The payload is Claude Code's (``session_id``, ``cwd``, ``hook_event_name`` and the event's
own fields), with tool names as Claude Code has them where zcoder's tool does the same job
(``Bash`` for run_command; ``zcoder_tool_name`` has zcoder's), so existing scripts work.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from zcoder.hooks.config import (
    POST_TOOL_USE,
    PRE_COMPACT,
    PRE_TOOL_USE,
    RELAY_MESSAGE,
    SESSION_START,
    STOP,
    USER_PROMPT_SUBMIT,
    HookCommand,
    HookSet,
)
from zcoder.hooks.names import CLAUDE_NAMES, hook_tool_input
from zcoder.hooks.outcome import ALLOW, ASK, DENY, HookOutcome, interpret
from zcoder.hooks.runner import run_hook

MAX_RESPONSE_CHARS: Final = 16000  # of a tool's output, in a PostToolUse payload


@dataclass(frozen=True)
class EventOutcome:
    """Every matching hook's answer to one event, joined."""

    ran: int = 0
    block: bool = False
    reasons: tuple[str, ...] = ()
    permission: str = ""
    contexts: tuple[str, ...] = ()
    stop: bool = False
    stop_reason: str = ""
    messages: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()  # project hooks not run: the user has not consented

    @property
    def reason(self) -> str:
        return "\n".join(self.reasons)

    @property
    def context(self) -> str:
        return "\n".join(self.contexts)


def join(outcomes: list[HookOutcome], skipped: tuple[str, ...] = ()) -> EventOutcome:
    permissions = {o.permission for o in outcomes}
    permission = next((p for p in (DENY, ASK, ALLOW) if p in permissions), "")
    block = any(o.block for o in outcomes)
    # Why it is blocked; else why a hook asks (the reason that goes with the permission).
    explained = (
        [o for o in outcomes if o.block] if block else [o for o in outcomes if o.permission == ASK]
    )
    return EventOutcome(
        ran=len(outcomes),
        block=block,
        reasons=tuple(o.reason for o in explained if o.reason),
        permission=permission,
        contexts=tuple(o.context for o in outcomes if o.context),
        stop=any(o.stop for o in outcomes),
        stop_reason=next((o.stop_reason for o in outcomes if o.stop and o.stop_reason), ""),
        messages=tuple(o.message for o in outcomes if o.message),
        errors=tuple(o.error for o in outcomes if o.error),
        skipped=skipped,
    )


def _only_users(command: HookCommand) -> bool:
    return not command.project


# Asks the user about project hooks not answered yet (zcoder.hooks.consent), and keeps the
# answers; what it returns is said to the user.
Asker = Callable[[list[HookCommand]], Awaitable[list[str]]]


@dataclass
class HookEngine:
    """The hooks of one workspace and session. ``allowed`` says whether a hook may run
    (the user's own always; a project's with consent); ``ask``, where a person can answer
    (the TUI), asks about the project hooks not answered yet, once, when one is first
    needed; ``unasked`` lists those (none without a consent book)."""

    hooks: HookSet
    workspace: Path
    session_id: str = ""
    allowed: Callable[[HookCommand], bool] = field(default=_only_users)
    ask: Asker | None = None
    unasked: Callable[[], list[HookCommand]] = field(default=list)
    _asked: bool = False
    _asking: asyncio.Lock = field(default_factory=asyncio.Lock)

    def __bool__(self) -> bool:
        return bool(self.hooks)

    async def ask_consent(self) -> list[str]:
        """Ask about every project hook not answered yet, once a process (a dialog that
        fails is not shown again at every event); what the user should be told."""
        if self.ask is None:
            return []
        async with self._asking:
            if self._asked:
                return []
            self._asked = True
            commands = self.unasked()
            return await self.ask(commands) if commands else []

    async def fire(self, event: str, subject: str = "", **fields: Any) -> EventOutcome:
        """Run the hooks of ``event`` that match ``subject``, with ``fields`` added to the
        payload."""
        commands = self.hooks.commands_for(event, subject)
        if not commands:
            return EventOutcome()
        said: tuple[str, ...] = ()
        if any(c.project for c in commands):
            said = tuple(await self.ask_consent())
        run = [c for c in commands if self.allowed(c)]
        skipped = tuple(c.describe() for c in commands if c not in run)
        payload = {
            "session_id": self.session_id,
            "transcript_path": "",
            "cwd": str(self.workspace),
            "hook_event_name": event,
            **fields,
        }
        results = await asyncio.gather(
            *(run_hook(c.command, payload, self.workspace, c.timeout) for c in run)
        )
        outcome = join(
            [interpret(event, result, c.command) for c, result in zip(run, results, strict=True)],
            skipped,
        )
        return replace(outcome, messages=said + outcome.messages) if said else outcome

    # -- one method per event, with its payload -------------------------------------------

    async def pre_tool_use(self, tool: str, arguments: dict[str, Any]) -> EventOutcome:
        return await self.fire(PRE_TOOL_USE, tool, **_tool_fields(tool, arguments))

    async def post_tool_use(
        self, tool: str, arguments: dict[str, Any], ok: bool, output: str
    ) -> EventOutcome:
        response = {"success": ok, "output": output[:MAX_RESPONSE_CHARS]}
        return await self.fire(
            POST_TOOL_USE, tool, **_tool_fields(tool, arguments), tool_response=response
        )

    async def user_prompt_submit(self, prompt: str) -> EventOutcome:
        return await self.fire(USER_PROMPT_SUBMIT, prompt=prompt)

    async def stop(self, last_message: str, *, active: bool) -> EventOutcome:
        return await self.fire(STOP, stop_hook_active=active, last_assistant_message=last_message)

    async def session_start(self, source: str) -> EventOutcome:
        return await self.fire(SESSION_START, source, source=source)

    async def pre_compact(self, trigger: str) -> EventOutcome:
        return await self.fire(PRE_COMPACT, trigger, trigger=trigger, custom_instructions="")

    async def relay_message(self, sender_name: str, **fields: Any) -> EventOutcome:
        """A relayed task arrived (zcoder.hooks.relay_gate says what the answer does);
        the matcher is tested against the sender's name."""
        return await self.fire(RELAY_MESSAGE, sender_name, **fields)


def _tool_fields(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "tool_name": CLAUDE_NAMES.get(tool, tool),
        "zcoder_tool_name": tool,
        "tool_input": hook_tool_input(tool, arguments),
    }
