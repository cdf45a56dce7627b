"""The relay facade: one object per zcoder process that owns its relay endpoint.

The rest of zcoder sees only :class:`Relay`; behind it the work is split by job, each part
given only what it uses: the endpoint's lifecycle (zcoder.relay.endpoint: start, state,
manifest, stop), the inbox (zcoder.relay.inbox: relayed tasks to run), the outbox
(zcoder.relay.outbox: sending, receipts) and a crashed instance's leftovers
(zcoder.relay.leftovers). This class wires them together and owns the callbacks that tell the
application something arrived.

``start`` never raises for an ordinary failure (an unsafe directory, an overlong socket
path, a missing capability); it returns a status whose ``reason`` says why the relay is
off, and zcoder carries on without it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import ClassVar, Generic, Self, TypeVar, Unpack, overload

from zcoder.relay.activity import pane_id, receipt_note
from zcoder.relay.advert import Advert, AdvertChanges
from zcoder.relay.client import DiscoveryResult, Peer, discover
from zcoder.relay.endpoint import STATE_BUSY, STATE_PAUSED, STATE_READY, Endpoint, RelayStatus
from zcoder.relay.inbox import Inbox
from zcoder.relay.leftovers import Leftovers
from zcoder.relay.outbox import Outbox, SendResult, result_text
from zcoder.relay.progress import Progress
from zcoder.relay.protocol import STEER, Envelope
from zcoder.relay.receipts import Receipt, ReceiptBook, SentMessage
from zcoder.relay.settings import RelaySettings
from zcoder.relay.spool import ClaimedMessage, ClaimResult, Sequences
from zcoder.relay.standing import INSTANCE, is_live_instance
from zcoder.relay.sweep import Leftover
from zcoder.relay.trust import TrustBook
from zcoder.relay.waits import cycle_refusal, cycle_through
from zcoder.relay.watches import IdleNotice, Watch
from zcoder.relay.watching import Watching, peer_gone

__all__ = [
    "STATE_BUSY",
    "STATE_PAUSED",
    "STATE_READY",
    "Relay",
    "RelayStatus",
    "SendResult",
    "result_text",
]


_T = TypeVar("_T")


class _FromEndpoint(Generic[_T]):
    """A read-only attribute of Relay that its endpoint owns: ``read`` takes it from the
    endpoint at each access."""

    def __init__(self, read: Callable[[Endpoint], _T]) -> None:
        self._read = read

    @overload
    def __get__(self, relay: None, owner: type[Relay]) -> Self: ...
    @overload
    def __get__(self, relay: Relay, owner: type[Relay]) -> _T: ...
    def __get__(self, relay: Relay | None, owner: type[Relay]) -> Self | _T:
        return self if relay is None else self._read(relay._endpoint)


class Relay:
    """Start, stop, pause, resume, status, discover, send, claim_one, complete."""

    def __init__(
        self,
        settings: RelaySettings,
        *,
        workspace: Path,
        env: Mapping[str, str] | None = None,
        runtime_dir: Path | None = None,
        session_id: str = "",
        profile: str = "coding",
        model: str = "",
        name: str = "",
        tmux_pane: str = "",
        home: Path | None = None,
        on_message: Callable[[], None] | None = None,
        on_unavailable: Callable[[str], None] | None = None,
        on_ready: Callable[[], None] | None = None,
        interactive: bool = False,
    ) -> None:
        """``on_message``, ``on_unavailable`` and ``on_ready`` (the listener answers and
        the manifest is published, after ``finish_start``) are called on relay threads.

        ``interactive``: this is an interactive zcoder (the TUI), which holds a shared lock
        on its workspace directory for as long as its relay runs: the fact receivers check
        (zcoder.relay.standing) before they give its messages a trusted peer's standing.
        ``zcoder send`` and the relay-only peer are not interactive. ``tmux_pane``: the
        ``$TMUX_PANE`` it runs in, published for ``zcoder agents --watch``."""
        self.settings = settings
        self.env = dict(os.environ if env is None else env)
        self.on_message = on_message
        # Messages sent (awaiting a receipt) and receipts received (zcoder.relay.receipts).
        self.receipts = ReceiptBook()
        self.trust = TrustBook(home, settings.inbound)
        self._endpoint = Endpoint(
            settings,
            workspace=workspace,
            env=self.env,
            runtime_dir=runtime_dir,
            home=home,
            interactive=interactive,
            advert=Advert(session_id=session_id, profile=profile, model=model, name=name),
            on_accepted=self._nudge,
            on_forwarded={kind: partial(take, self) for kind, take in self.FORWARDED.items()},
            on_unavailable=on_unavailable,
            on_ready=on_ready,
        )
        self._endpoint.advert.tmux_pane = pane_id(tmux_pane)
        self._inbox = Inbox(self._endpoint)
        self._outbox = Outbox(settings, self._endpoint, self.receipts)
        self._watching = Watching(settings, self._endpoint, self._outbox._deliver, self.receipts)
        self._leftovers = Leftovers(settings, self._endpoint)

    def _nudge(self) -> None:
        if self.on_message is not None:
            self.on_message()

    def _receipt(self, payload: bytes) -> None:
        """A receipt the listener process accepted (on its event thread)."""
        if self._outbox.receipt_arrived(payload):
            self._nudge()

    def _progress(self, payload: bytes) -> None:
        """Progress the listener process accepted (on its event thread)."""
        if self._outbox.progress_arrived(payload):
            self._nudge()

    def _idle_notice(self, payload: bytes) -> None:
        """A watched peer's ``idle`` notice the listener process accepted."""
        if self._outbox.idle_arrived(payload):
            self._nudge()

    def _watch_due(self, payload: bytes) -> None:
        """A watch on this instance is due (the listener saw it idle): send the notice."""
        self._watching.due(payload)

    # The requests the listener process accepts for this process (``TO_PARENT`` types of
    # zcoder.relay.protocol.Request), by wire type, and what takes their payload here.
    FORWARDED: ClassVar[Mapping[str, Callable[[Relay, bytes], None]]] = {
        Receipt.TYPE: _receipt,
        Progress.TYPE: _progress,
        IdleNotice.TYPE: _idle_notice,
        Watch.TYPE: _watch_due,
    }

    @property
    def on_sent(self) -> Callable[[SendResult, str], None] | None:
        """Told of every message sent, on the sending thread (the app's history, /inbox)."""
        return self._outbox.on_sent

    @on_sent.setter
    def on_sent(self, on_sent: Callable[[SendResult, str], None] | None) -> None:
        self._outbox.on_sent = on_sent

    # -- what the endpoint owns ---------------------------------------------------------

    @property
    def workspace(self) -> Path:
        return self._endpoint.workspace

    @workspace.setter
    def workspace(self, workspace: Path) -> None:
        self._endpoint.workspace = workspace

    interactive = _FromEndpoint(lambda endpoint: endpoint.interactive)
    instance_id = _FromEndpoint(lambda endpoint: endpoint.instance_id)
    registry = _FromEndpoint(lambda endpoint: endpoint.registry)
    socket_path = _FromEndpoint(lambda endpoint: endpoint.socket_path)
    spool = _FromEndpoint(lambda endpoint: endpoint.spool)
    listener = _FromEndpoint(lambda endpoint: endpoint.listener)
    # What the start-up sweep found (dead instances' spools).
    sweep = _FromEndpoint(lambda endpoint: endpoint.sweep)

    # -- state --------------------------------------------------------------------------

    state = _FromEndpoint(lambda endpoint: endpoint.state)
    available = _FromEndpoint(lambda endpoint: endpoint.available)
    # Available, its listener answering, and its manifest published: peers see it.
    ready = _FromEndpoint(lambda endpoint: endpoint.ready)
    paused = _FromEndpoint(lambda endpoint: endpoint.paused)

    @property
    def name(self) -> str:
        return self._endpoint.advert.name

    def status(self) -> RelayStatus:
        return self._endpoint.status()

    def set_state(self, state: str) -> None:
        """``busy`` while any turn runs, ``ready`` after; pause with pause()."""
        self._endpoint.set_state(state)

    def pause(self) -> None:
        self._endpoint.set_paused(True)

    def resume(self) -> None:
        self._endpoint.set_paused(False)

    def refresh_manifest(self, **changes: Unpack[AdvertChanges]) -> None:
        self._endpoint.refresh_manifest(lambda advert: advert.update(**changes))

    def set_activity(self, activity: str) -> None:
        """What this instance is doing (zcoder.relay.activity); the manifest is rewritten
        only when it changed, off the listener's paths (ping and enqueue never see it)."""
        self._endpoint.refresh_manifest(lambda advert: advert.set_activity(activity))

    def set_queued(self, count: int) -> None:
        """How many accepted messages wait their turn (neither running nor held), told by
        the front end's own look at its queue; the manifest is rewritten only when the
        count changed, never on the listener's enqueue path (its ack waits on no write)."""
        self._endpoint.refresh_manifest(lambda advert: advert.set_queued(count))

    def note_receipt(self, outcome: str, peer: str) -> None:
        """The last receipt received for a task this instance sent, in the manifest
        (``completed from web``), with when; told by the front end that took it."""
        note = receipt_note(outcome, peer)
        self._endpoint.refresh_manifest(lambda advert: advert.set_last_receipt(note))

    # -- lifecycle ----------------------------------------------------------------------

    def start(self, *, wait: bool = True) -> RelayStatus:
        """Start the relay. ``wait=False`` (the app) returns once the registry is checked
        and the socket bound; ``finish_start`` (called once the screen is drawn) then
        spawns the listener process, which becomes ready (and the manifest published) on a
        thread. A listener that never answers stops the relay as any later death does."""
        return self._endpoint.start(wait=wait)

    def finish_start(self) -> None:
        """After ``start(wait=False)``: spawn the listener and make it ready, on a thread
        (connections made meanwhile wait in the socket's backlog)."""
        self._endpoint.finish_start()

    def stop(self) -> None:
        """Manifest first, then the listener (joined), then own socket and lock, then spool."""
        self._endpoint.stop()

    # -- discovery and sending ----------------------------------------------------------

    def discover(self) -> DiscoveryResult:
        """Live peers; when this relay never started, an error with the reason instead."""
        registry = self.registry
        if registry is None:
            return DiscoveryResult(error=self._endpoint.reason or "the relay has not been started")
        return discover(
            registry, self_instance_id=self.instance_id, timeout=self.settings.io_timeout
        )

    def is_interactive_peer(self, peer: Peer) -> bool:
        """Whether ``peer`` is proven a live interactive zcoder working in its workspace
        (zcoder.relay.standing): only such a peer can be trusted."""
        if self.registry is None:
            return False
        return is_live_instance(self.registry, peer.instance_id, peer.pid, peer.workspace)

    def trusts_sender(self, task: Envelope) -> bool:
        """Whether the user trusts the sender of ``task`` (``/agents trust``), by the
        standing its receiver recorded (zcoder.relay.standing) and the policies now."""
        return self.trust.trusts(task.sender_workspace, proven=task.sender_kind == INSTANCE)

    def send(
        self,
        target_instance_id: str,
        body: str,
        *,
        sender_client: str = "",
        sender_ssh: str = "",
        delivery: str = "",
    ) -> SendResult:
        """Deliver ``body`` to the live peer with exactly this instance id; ``sender_client``
        names the MCP client a ``zcoder mcp serve`` sends for, ``sender_ssh`` the machine a
        ``zcoder send --via-ssh`` sends for (zcoder.relay.via);
        ``delivery`` ``steer`` asks for its running turn (the result's ``delivery`` says
        whether it will get it)."""
        return self._outbox.send(
            target_instance_id,
            body,
            self.discover,
            sender_client=sender_client,
            sender_ssh=sender_ssh,
            delivery=delivery,
        )

    def send_receipt(self, task: Envelope, outcome: str, summary: str) -> str:
        """Tell ``task``'s sender how it ended; the ack status, or why nothing was sent.

        A sender that answered ``unsupported`` once (zcoder.zsh) is never sent another.
        """
        return self._outbox.send_receipt(task, outcome, summary)

    def take_receipts(self) -> list[tuple[Receipt, SentMessage]]:
        """Receipts received since the last call, with the message each answers (every
        receipt the listener process accepted before this call included). The last is
        published in the manifest (``note_receipt``), on the taker's thread."""
        taken = self._outbox.take_receipts()
        if taken:
            receipt, sent = taken[-1]
            self.note_receipt(receipt.outcome, sent.target_label)
        return taken

    def send_progress(self, task: Envelope, stage: str) -> str:
        """Tell ``task``'s sender the model started on it (``started``) or that it reached
        a running turn (``steered``); blocks on the peer: call it off the event loop."""
        return self._outbox.send_progress(task, stage)

    def take_progress(self) -> list[tuple[Progress, SentMessage]]:
        """Progress on messages this instance sent, since the last call, oldest first."""
        return self._outbox.take_progress()

    # -- watches and waits (zcoder.relay.watches, zcoder.relay.waits) -------------------

    def watch(self, target_instance_id: str) -> SendResult:
        """Ask the live peer with exactly this id for one notice when it is next idle."""
        return self._watching.send(target_instance_id, self.discover)

    def take_idle_notices(self) -> list[tuple[IdleNotice, SentMessage]]:
        """Idle notices received since the last call, with the watch each answers."""
        return self._outbox.take_idle()

    def wait_idle(self, result: SendResult, timeout: float) -> str:
        """Block until an accepted watch's notice comes: ``idle``, ``timeout`` or ``gone``
        (the peer's manifest or socket went away, or its process ended)."""
        return self._watching.wait_idle(result, timeout)

    def is_gone(self, instance_id: str) -> bool:
        """Whether a peer is gone (its manifest or socket removed, its process ended)."""
        return self.registry is None or peer_gone(self.registry, instance_id)

    def begin_wait(self, target_instance_id: str) -> str | None:
        """Publish that this instance waits on ``target_instance_id`` (``waiting_on``), then
        refuse (the text naming the cycle, nothing left published) a wait that would close
        a cycle of waits; None: wait, and call ``end_wait`` after."""
        self.refresh_manifest(waiting_on=target_instance_id)
        registry, me = self.registry, self.instance_id
        names = (
            None
            if registry is None or me is None
            else cycle_through(registry, me, target_instance_id)
        )
        if names is None:
            return None
        self.end_wait()
        return cycle_refusal(names)

    def end_wait(self) -> None:
        self.refresh_manifest(waiting_on="")

    # -- the foreground's side of the queue ---------------------------------------------

    def claim_one(self) -> ClaimResult | None:
        """The oldest queued message, or None. Paused, nothing is claimed: accepted
        messages stay queued and run in order after resume (the seed's pause semantics)."""
        return self._inbox.claim_one()

    def claim_steers(
        self, admits: Callable[[Envelope], bool] = lambda _task: True
    ) -> list[ClaimedMessage]:
        """The waiting (not held) messages that asked to steer, from a sender whose
        standing (recorded by the listener) is a proven instance the user trusts now, and
        that ``admits`` lets through, claimed, oldest first: each is for the running turn.
        The stored flag alone is never enough: standing and trust are looked at again."""
        return self._inbox.claim(
            lambda task: (
                task.delivery == STEER
                and task.sender_kind == INSTANCE
                and self.trusts_sender(task)
                and admits(task)
            )
        )

    def sequences(self) -> Sequences:
        """The acceptance sequence of the oldest queued message (None: nothing queued, or
        the relay is unavailable) and of the last one accepted."""
        return self._inbox.sequences()

    def complete(self, claimed: ClaimedMessage) -> None:
        self._inbox.complete(claimed)

    def waiting(self) -> list[ClaimedMessage]:
        """Accepted messages waiting in the queue (not held), oldest first, unclaimed."""
        return self._inbox.waiting()

    def held(self) -> list[ClaimResult]:
        """Messages that wait for the user (held by policy), oldest first."""
        return self._inbox.held()

    def release(self, name: str) -> bool:
        """Run a held message: it joins the queue, next in line."""
        return self._inbox.release(name)

    def hold(self, claimed: ClaimedMessage) -> bool:
        """A claimed message waits for the user (/agents held) instead of running."""
        return self._inbox.hold(claimed)

    def discard(self, name: str) -> bool:
        return self._inbox.discard(name)

    # -- a crashed instance's leftovers -------------------------------------------------

    def leftovers(self) -> list[Leftover]:
        """Unrun messages a dead instance left in this workspace (found at start)."""
        return self._leftovers.found()

    def recover(self, leftover: Leftover) -> tuple[int, list[str]]:
        """Queue here the messages a dead instance accepted and never ran, oldest first,
        then remove its spool. Returns (messages queued, problems with the others)."""
        queued, problems = self._leftovers.recover(leftover)
        if queued:
            self._nudge()
        return queued, problems

    def drop_leftover(self, leftover: Leftover) -> None:
        """The user declined a dead instance's unrun messages: remove its spool."""
        self._leftovers.drop(leftover)
