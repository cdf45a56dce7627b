"""Turns: which comes next (the scheduler's choice between the user's waiting input and
relayed tasks), and the body of each kind: a prompt, steering left by the last turn, a
``!command``, ``/compact``, a relayed task (which ends with a receipt to its sender); the
user's steering of the running turn, and ``/queue``.

This is the one seam between the screen and the agent a turn drives: every turn's body
calls the agent here, through ``TurnAgent`` (the calls a turn makes, and where it takes
steering from), and nowhere else. A front end that drives another agent (a remote one,
say) gives the screen another ``TurnAgent``; the transcript, the queue and the turn's
worker stay as they are.

Steering (Enter while a turn runs) goes through ``steer``: into the user's waiting input
(``Services.pending``, the strip above the prompt shows it), which is the agent's
``steering`` source: the agent takes it at its next safe point (agent/steering.py), and
``run_steered_turn`` runs what a turn ended before taking. That is the whole seam for
another agent: one with no ``steering`` source is not steered here (Enter queues a
follow-up, as before), unless its front end's Turns says otherwise: over ``--connect``,
``RemoteTurns`` (remote/turns.py) sends it to the remote's waiting input
(``TurnAgent.steer``, ``_zcoder/input``), and its ``waiting_items`` (what ``/queue`` numbers
and the strip shows) are the remote's and the follow-ups here.

It takes the services, the model and relay parts it asks, ``start`` (the screen's: run a
body as the turn, on the chat pane's worker), ``show`` (the transcript's, at once: the
prompt's entry must come before anything the turn shows) and ``show_queue``, never the app.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import KW_ONLY, dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from zcoder.agent import Outcome, TurnFinished
from zcoder.base.errors import UsageError
from zcoder.base.plural import counted
from zcoder.base.sanitize import visible
from zcoder.frontend.relay_inbox import receipt_outcome
from zcoder.hooks.relay_gate import GateVerdict, RelayGate
from zcoder.model import ModelError
from zcoder.relay import STARTED, ClaimedMessage, QuarantinedMessage, sender_from
from zcoder.slash.declared import QueueCommands
from zcoder.tui.parts.commands import parse_user_command
from zcoder.tui.parts.services import Part
from zcoder.tui.state.scheduler import Next
from zcoder.tui.widgets.transcript import Entry, user_text

if TYPE_CHECKING:
    from zcoder.agent import SteerSource
    from zcoder.agent.context_keeper import CompactResult
    from zcoder.frontend.pending import PendingItem
    from zcoder.relay import Envelope
    from zcoder.tui.parts.model_ui import ModelUI
    from zcoder.tui.parts.relay_ui import RelayUI
    from zcoder.tui.parts.sessions_ui import SessionsUI

__all__ = [
    "StartTurn",
    "TurnAgent",
    "Turns",
    "queue_listing",
    "queue_number",
    "short",
    "unknown_control",
]

StartTurn = Callable[..., None]
"""``start(work, *, relay, model=True)``: run ``work`` (a coroutine function) as the turn."""


class TurnAgent(Protocol):
    """What a turn asks of the agent it drives."""

    steering: SteerSource | None
    """Where it takes the user's steering at each safe point of a turn: the front end's
    PendingInput (set once, tui/parts/startup.py)."""

    async def run_user_turn(self, prompt: str) -> object: ...

    async def run_steered_turn(self) -> object: ...

    async def run_user_command(self, command: str) -> object: ...

    async def run_relay_turn(
        self, envelope: Envelope, *, trusted: bool = False
    ) -> TurnFinished: ...

    async def compact(self, focus: str = "", *, automatic: bool = False) -> CompactResult: ...

    async def steer(self, text: str) -> bool:
        """Enter while a turn runs: ``text`` goes into that turn, to land at its next safe
        point (shown there, as steering, by the agent's UserSteered); False when nothing
        took it (the turn there had ended): the caller runs it as a prompt instead."""
        ...


@dataclass(eq=False)
class Turns(Part, QueueCommands):
    _: KW_ONLY
    model: ModelUI
    relay: RelayUI
    sessions: SessionsUI
    start: StartTurn
    show: Callable[[Entry], object]
    show_queue: Callable[[], None]
    plan: Callable[[str], Callable[[], Coroutine[Any, Any, None]] | None]
    """A custom command's or a skill's turn for a prompt (/NAME, $NAME), else None."""
    gate: RelayGate = field(default_factory=RelayGate)
    """The RelayMessage hooks' say on each relayed message."""
    goal_turn: Callable[[], Coroutine[Any, Any, None]] | None = None
    """The body of the goal's next turn (tui/parts/goal_ui.py); None: no goals here."""
    after_plan: Callable[[str], Awaitable[None]] | None = None
    """Offers the reply of a user turn that ended complete to run as a plan; it does only
    in plan mode (tui/parts/modes_ui.py)."""

    @property
    def agent(self) -> TurnAgent | None:
        return self.services.agent

    def schedule(self) -> None:
        """When idle, start the next turn the scheduler names: a relayed task or a prompt."""
        services = self.services
        if services.busy() or self.agent is None:
            return
        scheduler = services.scheduler
        while True:
            oldest = self.relay.oldest_waiting()
            step = scheduler.next_turn(oldest)
            if step is Next.RELAY:
                claimed = services.relay.claim_one() if services.relay is not None else None
                if isinstance(claimed, QuarantinedMessage):
                    self.relay.report_quarantined(claimed)
                    continue
                if claimed is not None:
                    scheduler.relay_started()
                    self.relay.refresh_header()  # one fewer waits: the header, the manifest
                    self.start(partial(self.relay_turn, claimed), relay=True)
                    return
                step = scheduler.next_turn(None)
            if step is Next.STEER:  # left by the last turn: it goes on before anything
                self.start(self.steered_turn, relay=False)
                return
            if step is Next.GOAL and self.goal_turn is not None:
                scheduler.goal_started()
                self.start(self.goal_turn, relay=False)
                return
            if step is Next.PROMPT:
                prompt = scheduler.pop_prompt()
                self.show_queue()
                command = parse_user_command(prompt)
                if command:  # !command: runs without a turn (its entry shows it)
                    self.start(partial(self.user_command, command), relay=False, model=False)
                    return
                if (planned := self.plan(prompt)) is not None:  # /NAME, $NAME
                    self.start(planned, relay=False)
                    return
                self.show(Entry("user", user_text(prompt)))  # in the transcript as it starts
                self.start(partial(self.user_turn, prompt), relay=False)
            else:
                self.relay.announce_waiting(oldest)
            return

    def _agent(self) -> TurnAgent:
        agent = self.agent
        assert agent is not None  # a turn starts only once the agent exists
        return agent

    async def user_turn(self, prompt: str) -> None:
        agent = self._agent()
        await self.model.window_ready()  # num_ctx goes with every request, the first one too
        finished = await agent.run_user_turn(prompt)
        self.model.check_allocation()
        self.sessions.refresh()
        complete = isinstance(finished, TurnFinished) and finished.outcome is Outcome.COMPLETE
        pending = self.services.pending  # what the user still has for the planner goes first
        waiting = pending.follow_ups() or pending.steering_left()
        if self.after_plan and complete and isinstance(finished, TurnFinished) and not waiting:
            await self.after_plan(finished.response)

    async def steered_turn(self) -> None:
        """The steering the last turn ended before taking: a turn of its own, now."""
        agent = self._agent()
        await self.model.window_ready()
        await agent.run_steered_turn()
        self.model.check_allocation()
        self.sessions.refresh()

    # -- the user's waiting input -----------------------------------------------------------

    def steerable(self, text: str) -> bool:
        """Whether ``text`` can steer the running turn: the agent takes steering (it has a
        ``steering`` source), and ``text`` is plain words, not a ``!command``, a custom
        command or a skill (those are turns of their own: they wait as follow-ups)."""
        if not self.takes_steering:
            return False
        return parse_user_command(text) is None and self.plan(text) is None

    @property
    def takes_steering(self) -> bool:
        """Whether the agent takes steering: it has a ``steering`` source."""
        return getattr(self.agent, "steering", None) is not None

    def steer(self, text: str) -> None:
        """Enter while a turn runs: ``text`` reaches it at its next safe point (the agent
        takes it from ``Services.pending``); left when the turn ends without one, it is the
        next turn."""
        self.services.scheduler.steer(text)

    def waiting_items(self) -> tuple[PendingItem, ...]:
        """What waits, as ``/queue`` numbers it and the strip above the prompt shows it."""
        return self.services.pending.items()

    def hold_waiting(self) -> None:
        """The turn was stopped (Escape): what waits stays, held until ``/queue resume``."""
        pending = self.services.pending
        if not len(pending):
            return
        pending.hold()
        n = len(pending)
        them = "it" if n == 1 else "them"
        self.say.notice(
            f"Stopped. {counted(n, 'waiting input')} {'is' if n == 1 else 'are'} held: "
            f"/queue resume runs {them}."
        )

    def queue_command(self, argument: str, /) -> None:
        """``/queue``, ``/queue drop N``, ``/queue resume`` (zcoder.slash.declared)."""
        pending = self.services.pending
        action, _, value = argument.strip().partition(" ")
        if action == "":
            self.say.notice(queue_listing(pending.items()))
        elif action == "drop":
            try:
                number = queue_number(value)
                item = pending.drop(number)
            except UsageError as exc:
                self.say.error(str(exc))
                return
            self.say.notice(f"Dropped {item.kind.value} {number}: {short(item.text)}")
        elif action == "resume" and not value.strip():
            count = pending.resume()
            if not count:
                self.say.notice("Nothing is held.")
                return
            self.say.notice(f"Resumed {counted(count, 'waiting input')}.")
            self.services.scheduler.note_user_acted()
            self.schedule()
        else:
            self.say.error(unknown_control(argument))

    async def user_command(self, command: str) -> None:
        """``!command``: run like a turn (Escape stops it, prompts queue behind it) but no
        model request; its output becomes context for the next prompt."""
        await self._agent().run_user_command(command)
        self.model.refresh_meter()
        self.sessions.refresh()

    def compact(self, focus: str) -> None:
        """``/compact``: idle only, run as a turn (tui/parts/slash.py declares it)."""
        if self.agent is None:
            return
        if self.services.busy():
            self.say.notice("/compact runs when no turn is running; try again when this one ends.")
            return
        self.start(partial(self._compact_turn, focus), relay=False)

    async def _compact_turn(self, focus: str) -> None:
        agent = self._agent()
        await self.model.window_ready()  # the summary request is sized like every other
        self.say.header(status="Compacting")
        try:
            result = await agent.compact(focus)
        except ModelError as exc:
            self.say.error(f"compaction failed, nothing was changed: {exc}")
            self.say.header(status="Error")
            return
        if not result.compacted:
            self.say.notice(f"Nothing compacted: {result.text}.")
        self.say.header(status="Ready")
        self.model.refresh_meter()

    async def relay_turn(self, claimed: ClaimedMessage) -> None:
        agent, relay = self._agent(), self.services.relay
        assert relay is not None
        if not await self.admitted(claimed):
            self.services.scheduler.relay_not_run()
            return
        outcome, summary = "failed", "the receiving zcoder failed unexpectedly"
        inbox = self.relay.inbox
        inbox.received(claimed.envelope, "running")
        inbox.history.send_progress(claimed.envelope, STARTED)  # the sender sees it start
        try:
            await self.model.window_ready()
            trusted = relay.trusts_sender(claimed.envelope)
            finished = await agent.run_relay_turn(claimed.envelope, trusted=trusted)
            outcome, summary = receipt_outcome(finished)
            self.model.check_allocation()
        except asyncio.CancelledError:
            outcome, summary = "cancelled", "the receiving agent's user stopped the task"
            raise
        finally:
            # Completed whatever happened: a claimed message never runs twice.
            relay.complete(claimed)
            inbox.history.finished(claimed.envelope, outcome, summary)

    async def admitted(self, claimed: ClaimedMessage) -> bool:
        """Whether the RelayMessage hooks let ``claimed`` run now; a message they hold
        waits in /agents held, one they refuse is done and its sender told."""
        agent, relay = self.services.agent, self.services.relay
        assert agent is not None and relay is not None
        judgement = await self.gate.admit(agent.hook_points.engine, claimed, relay)
        for text in judgement.notices:
            self.say.notice(text)
        envelope, inbox = claimed.envelope, self.relay.inbox
        sender = visible(sender_from(envelope))
        if judgement.verdict is GateVerdict.HOLD:
            inbox.received(envelope, "held")
            self.relay.policy.announced(claimed.path.name)
            self.say.notice(
                f"⏸ A message {sender} is held for you: {visible(judgement.reason)}. /agents held"
                " shows it; /agents run N runs it, /agents discard N drops it."
            )
            self.relay.refresh_header()
        elif judgement.verdict is GateVerdict.REFUSE:
            inbox.history.finished(envelope, "refused", judgement.receipt_summary)
            self.say.notice(
                f"A message {sender} was refused by a hook: {visible(judgement.reason)}"
            )
        return judgement.verdict is GateVerdict.RUN


def short(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def queue_number(value: str) -> int:
    """``/queue drop N``'s N; a UsageError says what was typed instead."""
    try:
        return int(value.strip())
    except ValueError:
        raise UsageError(f"/queue drop takes a number from /queue's list, not {value!r}") from None


def unknown_control(argument: str) -> str:
    return (
        f"unknown /queue control {argument.strip()!r}; try /queue, /queue drop N or /queue resume"
    )


def queue_listing(items: tuple[PendingItem, ...]) -> str:
    """``/queue``'s answer: each waiting input, numbered, with its kind."""
    if not items:
        return "Nothing waits. While a turn runs, Enter steers it and Ctrl+G queues a follow-up."
    lines = [f"Waiting ({len(items)}):"]
    lines += [f"  {n}. {item.label}: {short(item.text)}" for n, item in enumerate(items, 1)]
    held = "/queue resume runs what is held; " if any(i.held for i in items) else ""
    lines.append(f"{held}/queue drop N drops one; ↑ in the empty prompt edits the last.")
    return "\n".join(lines)
