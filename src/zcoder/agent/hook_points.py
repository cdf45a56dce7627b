"""Where the agent's turn meets the user's hooks (zcoder.hooks), and what their answers do.

* A prompt (UserPromptSubmit): a block keeps it from the model, and the turn ends saying
  why; context a hook gives joins the history after the prompt.
* A tool call (PreToolUse): a block (exit 2, ``deny``) answers the call with the reason and
  runs nothing; ``ask`` makes a command ask even where the policy would not; ``allow`` lets
  a command of the user's own turn run without asking, in the coding profile only. A hook
  never lets a relayed task's command run unasked, never lets a command the guard refuses
  run unasked (coding asks, sysadmin refuses), and never lifts --deny-commands: those
  rules are the user's, and a hook is a program.
* A tool's result (PostToolUse): a hook's feedback joins the result the model reads.
* The end of a turn (Stop): a block sends its reason to the model as the next instruction,
  at most ``MAX_STOP_CONTINUATIONS`` times a turn (a hook that always blocks cannot loop
  forever); ``stop_hook_active`` tells the hook when it already did.
* Compaction (PreCompact): a block keeps the history as it is.
* A session opened (SessionStart: ``startup``, ``resume``, ``clear``, ``compact``): context
  a hook gives joins the history. A front end that opens sessions while idle (the TUI, an
  editor) starts the hooks at once (``start_session``) and the next turn waits for them.

A hook that fails, or a project hook the user has not agreed to, is said once as a notice;
the action goes on.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Final

from zcoder.agent.recorder import Recorder
from zcoder.hooks import EventOutcome, HookEngine
from zcoder.hooks.consent import HOW_TO_CONSENT

MAX_STOP_CONTINUATIONS: Final = 3
HOOK_PREFIX: Final = "[hook]"


@dataclass
class HookPoints:
    engine: HookEngine | None
    recorder: Recorder
    _said: set[str] = field(default_factory=set)
    _starting: asyncio.Task[str] | None = None

    def _report(self, outcome: EventOutcome) -> None:
        for text in outcome.errors + outcome.messages:
            self.recorder.notice(text)
        for command in outcome.skipped:
            if command not in self._said:  # once per hook, not at every tool call
                self._said.add(command)
                text = (
                    f"A project hook was not run (you have not agreed to it): {command}."
                    f" {HOW_TO_CONSENT} in this workspace."
                )
                self.recorder.notice(text)

    async def prompt(self, text: str) -> tuple[str | None, str]:
        """(why the prompt is blocked, or None; context for the model)."""
        if not self.engine:
            return None, ""
        outcome = await self.engine.user_prompt_submit(text)
        self._report(outcome)
        if outcome.block or outcome.stop:
            return outcome.reason or outcome.stop_reason or "a hook stopped this prompt", ""
        return None, outcome.context

    async def before_tool(self, name: str, arguments: dict[str, Any]) -> tuple[str | None, str]:
        """(why the call is blocked, or None; the permission a hook gave: allow, ask, "")."""
        if not self.engine:
            return None, ""
        outcome = await self.engine.pre_tool_use(name, arguments)
        self._report(outcome)
        if outcome.block:
            return outcome.reason or "a hook blocked this call", ""
        return None, outcome.permission

    async def after_tool(self, name: str, arguments: dict[str, Any], ok: bool, output: str) -> str:
        """What the hooks tell the model about this result ("" : nothing)."""
        if not self.engine:
            return ""
        outcome = await self.engine.post_tool_use(name, arguments, ok, output)
        self._report(outcome)
        said = [*outcome.reasons, *outcome.contexts]
        return "\n".join(f"{HOOK_PREFIX} {text}" for text in said)

    async def stop(self, response: str, continuations: int) -> str | None:
        """The instruction a Stop hook sends the model instead of ending, or None."""
        if not self.engine or continuations >= MAX_STOP_CONTINUATIONS:
            return None
        outcome = await self.engine.stop(response, active=continuations > 0)
        self._report(outcome)
        if outcome.block and not outcome.stop:
            return f"{HOOK_PREFIX} {outcome.reason or 'Keep going: a hook asked to continue.'}"
        return None

    async def may_compact(self, trigger: str) -> str | None:
        """Why compaction must not happen now, or None."""
        if not self.engine:
            return None
        outcome = await self.engine.pre_compact(trigger)
        self._report(outcome)
        return (outcome.reason or "a hook refused it") if outcome.block else None

    async def session_started(self, source: str) -> str:
        """Context for the model from SessionStart hooks ("" : none). Where a person can
        answer (the TUI), the project's hooks not answered yet are asked about first: at
        start, once, rather than in the middle of the first turn."""
        if not self.engine:
            return ""
        for text in await self.engine.ask_consent():
            self.recorder.notice(text)
        outcome = await self.engine.session_start(source)
        self._report(outcome)
        return outcome.context

    def start_session(self, source: str) -> None:
        """A front end opened a session (``startup``, ``resume``, ``clear``): its
        SessionStart hooks run now, in the background, and the next turn waits for their
        context (``started``). A session opened meanwhile replaces the one before."""
        if self._starting is not None:
            self._starting.cancel()
            self._starting = None
        if self.engine:
            self._starting = asyncio.get_running_loop().create_task(self._quietly(source))

    async def _quietly(self, source: str) -> str:
        """SessionStart in the background: what goes wrong is said, and costs only the
        context (the turn that waits for it goes on)."""
        try:
            return await self.session_started(source)
        except Exception as exc:  # noqa: BLE001 - no turn is there to fail with it
            text = f"SessionStart hooks failed: {exc}"
            self.recorder.notice(text)
            return ""

    async def started(self) -> str:
        """The context of the SessionStart hooks ``start_session`` began ("" : none), once
        they are done."""
        task, self._starting = self._starting, None
        return await task if task is not None else ""
