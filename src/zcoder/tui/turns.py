"""Turns in the app: which comes next (the scheduler's choice between the user's queued
prompts and relayed tasks), and the body of each kind: a prompt, a ``!command``, a relayed
task (which ends with a receipt to its sender). The app starts and watches the worker.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING

from zcoder.agent.relay_inbox import STATE_OF_OUTCOME, receipt_outcome
from zcoder.hooks.relay_gate import RelayGate, Verdict
from zcoder.relay import ClaimedMessage, QuarantinedMessage
from zcoder.relay.display import sender_from
from zcoder.relay.sanitize import visible
from zcoder.tui.commands import parse_user_command
from zcoder.tui.scheduler import Next
from zcoder.tui.transcript import Entry, user_text

if TYPE_CHECKING:
    from zcoder.tui.app import ZcoderApp


class Turns:
    def __init__(self, app: ZcoderApp) -> None:
        self.app = app
        self.gate = RelayGate()  # the RelayMessage hooks' say on each relayed message

    def schedule(self) -> None:
        """When idle, start the next turn the scheduler names: a relayed task or a prompt."""
        app = self.app
        if app.busy or app.agent is None:
            return
        while True:
            oldest = app.relay_ui.oldest_waiting()
            step = app.scheduler.next_turn(oldest)
            if step is Next.RELAY:
                claimed = app.relay.claim_one() if app.relay is not None else None
                if isinstance(claimed, QuarantinedMessage):
                    app.relay_ui.report_quarantined(claimed)
                    continue
                if claimed is not None:
                    app.scheduler.relay_started()
                    app.start_turn(partial(self.relay_turn, claimed), relay=True)
                    return
                step = app.scheduler.next_turn(None)
            if step is Next.PROMPT:
                prompt = app.scheduler.pop_prompt()
                app.show_queue()
                command = parse_user_command(prompt)
                if command:  # !command: runs without a turn (its entry shows it)
                    app.start_turn(partial(self.user_command, command), relay=False, model=False)
                    return
                if (planned := app.custom_commands.plan(prompt)) is not None:  # /NAME, $NAME
                    app.start_turn(planned, relay=False)
                    return
                app.show(Entry("user", user_text(prompt)))  # in the transcript as it starts
                app.start_turn(partial(self.user_turn, prompt), relay=False)
            else:
                app.relay_ui.announce_waiting(oldest)
            return

    async def user_turn(self, prompt: str) -> None:
        app = self.app
        assert app.agent is not None
        await app.model_ui.window_ready()  # num_ctx goes with every request, the first one too
        await app.agent.run_user_turn(prompt)
        app.model_ui.check_allocation()
        app.refresh_sessions()

    async def user_command(self, command: str) -> None:
        """``!command``: run like a turn (Escape stops it, prompts queue behind it) but no
        model request; its output becomes context for the next prompt."""
        app = self.app
        assert app.agent is not None
        await app.agent.run_user_command(command)
        app.refresh_meter()
        app.refresh_sessions()

    async def relay_turn(self, claimed: ClaimedMessage) -> None:
        app = self.app
        assert app.agent is not None and app.relay is not None
        if not await self.admitted(claimed):
            return
        outcome, summary = "failed", "the receiving zcoder failed unexpectedly"
        inbox = app.relay_ui.inbox
        inbox.received(claimed.envelope, "running")
        try:
            await app.model_ui.window_ready()
            finished = await app.agent.run_relay_turn(claimed.envelope)
            outcome, summary = receipt_outcome(finished)
            app.model_ui.check_allocation()
        except asyncio.CancelledError:
            outcome, summary = "cancelled", "the receiving agent's user stopped the task"
            raise
        finally:
            # Completed whatever happened: a claimed message never runs twice.
            app.relay.complete(claimed)
            inbox.received(claimed.envelope, STATE_OF_OUTCOME.get(outcome, "failed"))
            inbox.send_receipt(claimed.envelope, outcome, summary)

    async def admitted(self, claimed: ClaimedMessage) -> bool:
        """Whether the RelayMessage hooks let ``claimed`` run now; a message they hold
        waits in /agents held, one they refuse is done and its sender told."""
        app = self.app
        assert app.agent is not None and app.relay is not None
        judgement = await self.gate.admit(app.agent.hooks.engine, claimed, app.relay)
        for text in judgement.notices:
            app.notice(text)
        envelope, inbox = claimed.envelope, app.relay_ui.inbox
        sender = visible(sender_from(envelope))
        if judgement.verdict is Verdict.HOLD:
            inbox.received(envelope, "held")
            app.relay_ui.policy.announced(claimed.path.name)
            app.notice(
                f"⏸ A message {sender} is held for you: {visible(judgement.reason)}. /agents held"
                " shows it; /agents run N runs it, /agents discard N drops it."
            )
            app.relay_ui.refresh_header()
        elif judgement.verdict is Verdict.REFUSE:
            inbox.received(envelope, "refused")
            inbox.send_receipt(
                envelope, "refused", f"a hook of the receiving user refused it: {judgement.reason}"
            )
            app.notice(f"A message {sender} was refused by a hook: {visible(judgement.reason)}")
        return judgement.verdict is Verdict.RUN
