"""The receiving and reporting side of the relay, without a screen: how a relayed turn's
end becomes a receipt, the relay's history (/inbox's records) and the receipts for tasks
this instance sent, given to the model.

The TUI (tui/parts/inbox_ui.py) and ``zcoder --acp`` (zcoder.acp.relay) both front a relay;
what they share lives here, so that a relayed task ends with the same receipt and leaves
the same history whichever front end ran it. Nothing here imports Textual: the ACP path
must not pay for it (nor depend on it).
"""

from __future__ import annotations

import concurrent.futures
import functools
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zcoder.agent.events import Outcome, TurnFinished
from zcoder.agent.relay_wrapper import (
    idle_record,
    progress_record,
    progress_words,
    receipt_record,
)
from zcoder.relay import name_of, sender_name
from zcoder.sessions import SessionStoreError
from zcoder.sessions.relay_log import RelayLog

if TYPE_CHECKING:
    from zcoder.agent import Agent
    from zcoder.relay import (
        Envelope,
        IdleNotice,
        Progress,
        Receipt,
        Relay,
        SendResult,
        SentMessage,
    )
    from zcoder.sessions import SessionStore

log = logging.getLogger(__name__)

DISCARD_SUMMARY = "the receiving zcoder quit before running it"
RECEIPTS_DEADLINE = 5.0  # seconds all discarded receipts may take together at exit

# A relayed turn's receipt outcome as the history's state.
STATE_OF_OUTCOME = {"completed": "done", "cancelled": "cancelled", "refused": "refused"}


def receipt_outcome(finished: TurnFinished) -> tuple[str, str]:
    """A relayed turn's end as a receipt's outcome and summary (zcoder.relay.receipts)."""
    outcome = {
        Outcome.COMPLETE: "completed",
        Outcome.STOPPED: "cancelled",
    }.get(finished.outcome, "failed")
    if finished.outcome is Outcome.BLOCKED:
        outcome = "refused" if "refus" in finished.response.lower() else "failed"
    summary = finished.response or finished.error or finished.outcome.value
    return outcome, summary


def receipt_shown(outcome: str, who: str, summary: str) -> str:
    """What a receipt says to the user (and in the saved session)."""
    return f"{who} {outcome}" + (f": {summary}" if summary else "")


@dataclass(frozen=True)
class ShownReceipt:
    """A receipt for a task this instance sent, as given to the model and shown."""

    text: str
    metadata: dict[str, Any]


class RelayHistory:
    """The relay's history in the session store, and the receipts both ways. Takes
    getters, never a front end: the ``store`` and the open ``session_id`` (None while
    there is none), and the ``workspace``. The ``relay`` may come later (``attach``): the
    TUI starts it after its history exists; until then, only the history is written."""

    def __init__(
        self,
        relay: Relay | None,
        *,
        store: Callable[[], SessionStore | None],
        session_id: Callable[[], str | None],
        workspace: Path,
    ) -> None:
        self.relay: Relay | None = None
        self._store = store
        self._session_id = session_id
        self.workspace = workspace
        self._logged: set[str] = set()  # received message ids already in the history
        # Receipts and progress wait here for one daemon thread (a turn never waits for a
        # peer, and what a sender is told arrives in the order it was said).
        self._telling: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._telling_lock = threading.Lock()
        self._teller: threading.Thread | None = None
        if relay is not None:
            self.attach(relay)

    def attach(self, relay: Relay) -> None:
        """The relay whose messages and receipts these are; its sends are recorded as they
        happen, on whatever thread sends."""
        self.relay = relay
        relay.on_sent = self._sent

    def _write(self, action: Callable[[RelayLog], None]) -> None:
        """A history write; a store that cannot take it costs the history, nothing else."""
        store = self._store()
        if store is None:
            return
        try:
            action(RelayLog(store))
        except SessionStoreError as exc:
            log.warning("relay history not saved: %s", exc)

    def _sent(self, result: SendResult, body: str) -> None:
        peer = result.peer
        if peer is None or result.message_id is None:
            return
        self._write(
            lambda book: book.record(
                workspace=self.workspace,
                session_id=self._session_id() or "",
                direction="sent",
                message_id=str(result.message_id),
                peer_instance_id=peer.instance_id,
                peer_name=name_of(peer),
                body=body,
                state=result.status or "not delivered",
            )
        )

    def note_arrivals(self) -> list[Envelope]:
        """Messages accepted since the last look, in the history as queued or held; the
        held ones among them are returned (they wait for the user: say so once)."""
        from zcoder.relay import ClaimedMessage  # noqa: PLC0415 - the relay loads lazily

        relay = self.relay
        if relay is None:
            return []
        arrivals = [(m, "queued") for m in relay.waiting()]
        arrivals += [(m, "held") for m in relay.held() if isinstance(m, ClaimedMessage)]
        held = []
        for message, state in arrivals:
            if message.envelope.message_id not in self._logged:
                self.received(message.envelope, state)
                if state == "held":
                    held.append(message.envelope)
        return held

    def received(self, envelope: Envelope, state: str) -> None:
        """A received message's state: queued, held, running, done, cancelled, failed..."""
        self._logged.add(envelope.message_id)
        self._write(
            lambda book: book.record(
                workspace=self.workspace,
                session_id=self._session_id() or "",
                direction="received",
                message_id=envelope.message_id,
                peer_instance_id=envelope.sender_instance_id,
                peer_name=sender_name(envelope),
                body=envelope.body,
                state=state,
            )
        )

    def finished(self, envelope: Envelope, outcome: str, summary: str) -> None:
        """A relayed task ended: its state in the history, and a receipt to its sender."""
        self.received(envelope, STATE_OF_OUTCOME.get(outcome, "failed"))
        self.send_receipt(envelope, outcome, summary)

    def send_receipt(self, task: Envelope, outcome: str, summary: str) -> None:
        """Tell the task's sender how it ended, on a thread of its own: the turn's end (or its
        cancellation) never waits for a peer. A receipt-less peer (zcoder.zsh) is quiet."""
        self._tell_sender(
            task, "receipt", outcome, lambda r: r.send_receipt(task, outcome, summary)
        )

    def send_progress(self, task: Envelope, stage: str) -> None:
        """Tell the task's sender the model started on it (``started``) or took it into its
        running turn (``steered``), on a thread of its own, as ``send_receipt``."""
        self._tell_sender(task, "progress", stage, lambda relay: relay.send_progress(task, stage))

    def _tell_sender(
        self, task: Envelope, what: str, word: str, send: Callable[[Relay], str]
    ) -> None:
        """``send`` on the relay, off the caller's thread, after what was told before (a
        task's ``started`` reaches its sender before its receipt)."""
        relay = self.relay
        if relay is None:
            return

        def deliver() -> None:
            log.info("%s for %s (%s): %s", what, task.message_id, word, send(relay))

        with self._telling_lock:
            self._telling.put(deliver)
            if self._teller is None or not self._teller.is_alive():
                self._teller = threading.Thread(
                    target=self._tell_in_order, name="zcoder-receipts", daemon=True
                )
                self._teller.start()

    def finish_telling(self, timeout: float = RECEIPTS_DEADLINE) -> bool:
        """Wait, at most ``timeout``, until every receipt and progress queued so far was
        delivered (the telling thread ends once idle); whether it was."""
        with self._telling_lock:
            teller = self._teller
        if teller is None:
            return True
        teller.join(timeout)
        return not teller.is_alive()

    def _tell_in_order(self) -> None:
        """The thread that tells senders, one after the other; it ends once idle."""
        while True:
            with self._telling_lock:
                if self._telling.empty():
                    self._teller = None
                    return
                deliver = self._telling.get()
            try:
                deliver()
            except Exception:  # a peer that cannot be told costs its notice, no more
                log.exception("relay notice not sent")

    def take_receipts(self, agent: Agent | None) -> list[ShownReceipt]:
        """Receipts and progress for tasks this instance sent, since the last call: saved
        in the history, given to the model as context (they start no turn), returned to
        show, the progress before the receipts; then the idle notices of the watches it
        sent (notify_when_idle), given and shown the same way."""
        shown_all: list[ShownReceipt] = []
        if self.relay is None:
            return shown_all
        receipts = self.relay.take_receipts()  # then the progress that came before them
        for progress, sent in self.relay.take_progress():
            if sent.receipt is None:  # the history's state, unless the receipt is in
                self._write(functools.partial(_save_progress, progress=progress))
            record = progress_record(
                target_label=sent.target_label,
                target_instance_id=sent.target_instance_id,
                stage=progress.stage,
            )
            shown = f"{sent.target_label} {progress_words(progress.stage, 'it')}"
            shown_all.append(_told(agent, record, shown, progress, sent, progress=progress.stage))
        for receipt, sent in receipts:
            self._write(functools.partial(_save_receipt, receipt=receipt))
            record = receipt_record(
                target_label=sent.target_label,
                target_instance_id=sent.target_instance_id,
                task_preview=sent.body_preview,
                outcome=receipt.outcome,
                summary=receipt.summary,
            )
            shown = receipt_shown(receipt.outcome, sent.target_label, receipt.summary)
            shown_all.append(_told(agent, record, shown, receipt, sent, outcome=receipt.outcome))
        for notice, sent in self.relay.take_idle_notices():  # notify_when_idle's
            record = idle_record(
                target_label=sent.target_label, target_instance_id=sent.target_instance_id
            )
            shown = receipt_shown("idle", sent.target_label, "nothing running or queued")
            shown_all.append(_told(agent, record, shown, notice, sent, outcome="idle"))
        return shown_all

    def unrun(self) -> list[Envelope]:
        """Accepted messages not run yet (queued or held)."""
        from zcoder.relay import ClaimedMessage  # noqa: PLC0415 - the relay loads lazily

        relay = self.relay
        if relay is None or not relay.available:
            return []
        messages = [m.envelope for m in relay.waiting()]
        messages += [m.envelope for m in relay.held() if isinstance(m, ClaimedMessage)]
        return messages

    def discard_unrun(self) -> int:
        """Leaving: what was told before goes first (a stopped task's ``cancelled``,
        queued for the telling thread, which dies with the process), then each unrun
        message's sender is told it was discarded (each as far as ``RECEIPTS_DEADLINE``
        allows), and the history says so; how many."""
        self.finish_telling()
        relay = self.relay
        messages = self.unrun()  # none without a relay
        for envelope in messages:
            self.received(envelope, "discarded")
        if messages and relay is not None:
            pool = concurrent.futures.ThreadPoolExecutor(max_workers=4)
            futures = [
                pool.submit(relay.send_receipt, envelope, "discarded", DISCARD_SUMMARY)
                for envelope in messages
            ]
            concurrent.futures.wait(futures, timeout=RECEIPTS_DEADLINE)
            pool.shutdown(wait=False, cancel_futures=True)
        return len(messages)


def _told(
    agent: Agent | None,
    record: str,
    shown: str,
    notice: Receipt | Progress | IdleNotice,
    sent: SentMessage,
    **what: str,
) -> ShownReceipt:
    """A receipt or progress ``notice`` given to the model as ``record`` (no turn), and
    shown as ``shown``; ``what``: its outcome or its stage, for the saved event."""
    metadata = {
        "in_reply_to": notice.in_reply_to,
        **what,
        "from_instance_id": notice.sender_instance_id,
        "from_name": sent.target_label,
    }
    if agent is not None:
        agent.record_receipt(record, shown, metadata)
    return ShownReceipt(shown, metadata)


def _save_progress(book: RelayLog, *, progress: Progress) -> None:
    book.set_state("sent", progress.in_reply_to, progress.stage)


def _save_receipt(book: RelayLog, *, receipt: Receipt) -> None:
    book.set_receipt(receipt.in_reply_to, receipt.outcome, receipt.summary)
