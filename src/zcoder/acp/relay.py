"""The relay in an ACP session: the editor's session is a peer other zcoders can hand tasks.

An ACP session has a person in front of it (the editor's user answers its permission
requests), so it is an interactive instance in the seed's sense: it publishes itself in the
relay's registry, in its session's workspace, and holds the interactive instance's locks
(zcoder.relay.standing), exactly as the TUI does. (``--connect`` is the other case: a
remote client never publishes, the agent does on its own host.)

What arrives runs as the TUI runs it (tui/parts/turns.py, tui/parts/relay_ui.py; the shared part is
zcoder.frontend.relay_inbox): when the session is idle, one task at a time, as an ordinary
turn whose updates the editor gets as they happen, headed by a user message naming the
sender (zcoder.acp.updates.relayed_task). Before it runs, the user's RelayMessage hooks
judge it, through the gate the TUI uses (zcoder.hooks.relay_gate): allowed, it runs;
refused, it is done without running and its sender gets the ``refused`` receipt; held (the
hook asked, failed or timed out), it is shown to the editor and kept with the held
messages, which an editor session does not run. The receiver's rules are the agent's and the
approval policy's, unchanged: every command of a relayed turn is asked, through
``session/request_permission``, with the sender named and no "allow always"; the model may
reply only to the sender. A prompt from the editor goes before any relayed task not yet
started; after ``ZCODER_RELAY_MAX_AUTO_TURNS`` relayed turns without a prompt from the
user, the rest wait for the next one. The sender gets its receipt when the turn ends
(cancelled too), and receipts for tasks this session sent are shown to the editor and given
to the model.

The peer is withdrawn when the session closes (the client closed it, went away, or the
process was stopped): unrun messages are discarded with a receipt to their senders, then
the manifest, socket, locks and listener go (zcoder.relay.instance.Relay.stop).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from zcoder.acp.notices import SessionNotice
from zcoder.acp.updates import Update
from zcoder.agent import SteerSources
from zcoder.base.plural import counted
from zcoder.base.sanitize import visible, visible_lines
from zcoder.frontend.auto_turns import AutoTurns
from zcoder.frontend.peer_steering import PeerSteers
from zcoder.frontend.relay_inbox import RelayHistory, receipt_outcome
from zcoder.relay import STARTED, sender_from

if TYPE_CHECKING:
    from zcoder.agent import Agent, TurnFinished
    from zcoder.config import Config
    from zcoder.hooks.relay_gate import RelayGate
    from zcoder.relay import ClaimedMessage, Envelope, Relay
    from zcoder.sessions import SessionStore

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
"""A look at the spool without a nudge (the listener nudges on every message it accepts)."""


class TurnHost(Protocol):
    """The ACP session, as the relay uses it (zcoder.acp.session.AcpSession)."""

    @property
    def busy(self) -> bool: ...

    async def run_relayed(
        self, work: Callable[[Agent], Awaitable[TurnFinished]]
    ) -> TurnFinished | None: ...


def notice(text: str) -> list[Update]:
    """A relay notice: the protocol's notice, or an agent message (zcoder.acp.notices)."""
    return [SessionNotice("info", text)]


class SessionRelay:
    """One session's relay endpoint and its relayed turns; build it with :meth:`start`."""

    def __init__(
        self,
        relay: Relay,
        history: RelayHistory,
        nudged: asyncio.Event,
        show: Callable[[Sequence[Update]], None],
        max_auto_turns: int,
        *,
        gate: RelayGate,
    ) -> None:
        self.relay = relay
        self.gate = gate  # the RelayMessage hooks' say on each relayed message
        self.history = history
        self._nudged = nudged
        self._show = show
        self.turns = AutoTurns(max_auto_turns)  # relayed turns run without the user
        self._was_available = True
        self._agent: Agent | None = None
        self._host: TurnHost | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._running: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        # Trusted peers' steers for this session's running turn (zcoder.frontend).
        self.steers = PeerSteers(lambda: relay, lambda: history, admits=self._may_steer)

    def _may_steer(self, task: Envelope) -> bool:
        """A message a RelayMessage hook would judge never steers (it gets its own turn)."""
        from zcoder.hooks.relay_gate import hooks_judge  # noqa: PLC0415 - it imports the relay

        return not hooks_judge(self._agent.hook_points.engine if self._agent else None, task)

    @classmethod
    def start(
        cls,
        config: Config,
        *,
        session_id: str,
        store: SessionStore,
        show: Callable[[Sequence[Update]], None],
    ) -> SessionRelay | None:
        """Publish the session as a peer; None when the relay is off or cannot start
        (said in the log: everything else works)."""
        from zcoder.hooks.relay_gate import RelayGate  # noqa: PLC0415 - it imports the relay
        from zcoder.relay import Relay  # noqa: PLC0415 - the relay loads lazily

        settings = config.relay
        if not settings.enabled:
            log.info("relay off for ACP session %s: %s", session_id, settings.disabled_reason)
            return None
        loop = asyncio.get_running_loop()
        nudged = asyncio.Event()

        def nudge(*_: object) -> None:  # on the relay's threads
            with contextlib.suppress(RuntimeError):  # the loop has closed: nothing to do
                loop.call_soon_threadsafe(nudged.set)

        relay = Relay(
            settings,
            workspace=config.workspace,
            session_id=session_id,
            profile=config.profile.value,
            model=config.model,
            name=config.agent_name,
            home=config.home,
            on_message=nudge,
            on_unavailable=nudge,
            on_ready=nudge,
            interactive=True,  # a person answers its permission requests: peers may trust it
        )
        status = relay.start(wait=False)
        if not status.available:
            log.warning("relay unavailable for ACP session %s: %s", session_id, status.reason)
            return None
        relay.finish_start()  # the listener is spawned, and the manifest published, on a thread
        history = RelayHistory(
            relay, store=lambda: store, session_id=lambda: session_id, workspace=config.workspace
        )
        return cls(relay, history, nudged, show, settings.max_auto_turns, gate=RelayGate())

    def attach(self, agent: Agent, host: TurnHost) -> None:
        """Relayed tasks may run from now on, in ``host``'s turns."""
        self._agent = agent
        self._host = host
        # A trusted peer may steer its turns, beside the user's waiting input (acp/session.py).
        mine = (agent.steering,) if agent.steering is not None else ()
        agent.steering = SteerSources(*mine, self.steers)
        self._watcher = asyncio.get_running_loop().create_task(self._watch())

    @property
    def available(self) -> bool:
        return self.relay.available

    def wake(self) -> None:
        """Look again now (a turn ended, the user prompted)."""
        self._nudged.set()

    def user_acted(self) -> None:
        """A prompt from the editor: relayed tasks may run again without the user."""
        self.turns.note_user_acted()

    def busy(self, running: bool) -> None:
        """What peers see in the manifest: busy while any turn runs. At a turn's end, the
        peers' steers that landed in it are done, with its receipt."""
        if not running:
            self.steers.turn_ended()
        if self.relay.available:
            self.relay.set_state("busy" if running else "ready")

    # -- the queue ----------------------------------------------------------------------

    async def _watch(self) -> None:
        # A timer sets the event too; no wait_for (whose cancellation, in Python 3.11, can
        # be lost while its inner wait is being cancelled: closing would then hang).
        self._tick()
        try:
            while True:
                await self._nudged.wait()
                self._nudged.clear()
                try:
                    self._look()
                except Exception:  # a bad look costs the relay, never the session
                    log.exception("the relay's look at its queue failed")
        finally:
            if self._timer is not None:
                self._timer.cancel()

    def _tick(self) -> None:
        self._nudged.set()
        self._timer = asyncio.get_running_loop().call_later(POLL_SECONDS, self._tick)

    def _look(self) -> None:
        relay = self.relay
        if not relay.available:
            if self._was_available:
                self._was_available = False
                self._show(
                    notice(f"Agent relay stopped: {relay.status().reason}. Everything else works.")
                )
            return
        for envelope in self.history.note_arrivals():
            self._show(
                notice(
                    f"A message {visible(sender_from(envelope))} is held for you "
                    "(ZCODER_RELAY_INBOUND=hold). An editor session does not run held "
                    "messages: it is discarded when the session ends, and its sender told."
                )
            )
        for receipt in self.history.take_receipts(self._agent):
            # A receipt is part of the conversation (saved, replayed): a message, always.
            label = "progress" if "progress" in receipt.metadata else "receipt"
            shown = SessionNotice("info", f"{label}: {visible_lines(receipt.text)}")
            self._show([shown.fallback()])
        self._next()
        relay.set_queued(relay.status().waiting)  # after any claim; written on a change only

    def _next(self) -> None:
        """When idle, start the oldest queued relayed task (or say they wait for you)."""
        from zcoder.relay import QuarantinedMessage  # noqa: PLC0415

        host = self._host
        if host is None or host.busy or self._running is not None or self.relay.paused:
            return
        while True:
            if self.turns.limited:
                if self.turns.should_announce(self.relay.sequences().oldest_waiting):
                    ran = self.turns.auto_turns
                    self._show(
                        notice(
                            f"{counted(ran, 'relayed task')} ran without you;"
                            " the rest wait for your next prompt (ZCODER_RELAY_MAX_AUTO_TURNS)."
                        )
                    )
                return
            claimed = self.relay.claim_one()
            if claimed is None:
                return
            if isinstance(claimed, QuarantinedMessage):
                text = f"A relayed message was rejected and not run: {claimed.reason}"
                self._show(notice(text))
                if self._agent is not None:
                    self._agent.record_error(text, {"quarantined": claimed.name})
                continue
            self.turns.relay_started()
            self._running = asyncio.get_running_loop().create_task(self._run(host, claimed))
            return

    async def _run(self, host: TurnHost, claimed: ClaimedMessage) -> None:
        try:
            if await self._admitted(claimed):
                await host.run_relayed(lambda agent: self._relayed_turn(agent, claimed))
            else:
                self.turns.relay_not_run()  # it did not run: it costs no turn without you
        except Exception:
            log.exception("a relayed turn failed")
        finally:
            self._running = None
            self.wake()

    async def _admitted(self, claimed: ClaimedMessage) -> bool:
        """Whether the RelayMessage hooks let ``claimed`` run now (tui/parts/turns.py's admitted):
        one they hold is shown and kept, one they refuse is done and its sender told."""
        from zcoder.hooks.relay_gate import GateVerdict  # noqa: PLC0415

        engine = self._agent.hook_points.engine if self._agent is not None else None
        judgement = await self.gate.admit(engine, claimed, self.relay)
        for text in judgement.notices:
            self._show(notice(visible_lines(text)))
        envelope = claimed.envelope
        sender, reason = visible(sender_from(envelope)), visible(judgement.reason)
        if judgement.verdict is GateVerdict.HOLD:
            self.history.received(envelope, "held")
            self._show(
                notice(
                    f"A message {sender} is held for you: {reason}. An editor session does "
                    "not run held messages: it is discarded when the session ends, and its "
                    "sender told."
                )
            )
        elif judgement.verdict is GateVerdict.REFUSE:
            self.history.finished(envelope, "refused", judgement.receipt_summary)
            self._show(notice(f"A message {sender} was refused by a hook: {reason}"))
        return judgement.verdict is GateVerdict.RUN

    async def _relayed_turn(self, agent: Agent, claimed: ClaimedMessage) -> TurnFinished:
        """The task as a turn; whatever happens it is completed (it never runs twice) and
        its sender gets a receipt (tui/parts/turns.py's relay_turn, without the screen)."""
        envelope = claimed.envelope
        outcome, summary = "failed", "the receiving zcoder failed unexpectedly"
        self.history.received(envelope, "running")
        self.history.send_progress(envelope, STARTED)  # the sender sees it start
        try:
            trusted = self.relay.trusts_sender(envelope)
            finished = await agent.run_relay_turn(envelope, trusted=trusted)
            outcome, summary = receipt_outcome(finished)
            return finished
        except asyncio.CancelledError:
            outcome, summary = "cancelled", "the receiving agent's user stopped the task"
            raise
        finally:
            self.relay.complete(claimed)
            self.history.finished(envelope, outcome, summary)
            self._show(
                notice(f"The task relayed {visible(sender_from(envelope))} ended: {outcome}.")
            )

    async def close(self) -> None:
        """Withdraw the peer: no more turns, unrun messages discarded (their senders told),
        then its manifest, socket and listener go."""
        for task in (self._watcher, self._running):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._watcher = self._running = None
        try:
            discarded = await asyncio.to_thread(self.history.discard_unrun)
        finally:
            await asyncio.to_thread(self.relay.stop)
        log.info("relay peer withdrawn (%s discarded)", counted(discarded, "unrun message"))
