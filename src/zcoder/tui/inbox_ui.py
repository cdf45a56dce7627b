"""Receipts and the relay's history in the app (/inbox).

Receipts: telling a task's sender how it ended, and showing (and giving the model) the
receipts for tasks this instance sent; the wire format is zcoder.relay.receipts'.

The history: every message this workspace's sessions sent or received, with its state as
it moves on (queued or held, running, done, cancelled, failed, refused) and its receipt,
kept in the session store (zcoder.sessions.relay_log). ``/inbox`` lists it newest first;
``/inbox N`` shows one entry whole.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from zcoder.agent.relay_wrapper import receipt_record
from zcoder.relay import ClaimedMessage, Envelope, Relay, SendResult
from zcoder.relay.display import sender_name
from zcoder.relay.names import name_of
from zcoder.relay.receipts import Receipt
from zcoder.relay.sanitize import visible
from zcoder.sessions import SessionStoreError
from zcoder.sessions.relay_log import RelayLog, RelayRecord
from zcoder.tui.command_registry import Form, declares_commands, slash_command
from zcoder.tui.transcript import entry_for_event, receipt_text_for_user

if TYPE_CHECKING:
    from zcoder.agent import Agent
    from zcoder.sessions import SessionStore
    from zcoder.tui.messages import Say

log = logging.getLogger(__name__)


@declares_commands
@dataclass(kw_only=True, eq=False)
class InboxUI:
    """The relay's history and receipts. Takes what it uses, never the app: getters of
    the ``relay``, the session ``store``, the open ``session_id`` and the ``agent`` (each
    None while there is none), the ``workspace``, and ``say``."""

    relay: Callable[[], Relay | None]
    store: Callable[[], SessionStore | None]
    session_id: Callable[[], str | None]
    agent: Callable[[], Agent | None]
    workspace: Path
    say: Say
    _logged: set[str] = field(default_factory=set, init=False)  # ids already in the history

    @property
    def log(self) -> RelayLog | None:
        store = self.store()
        return RelayLog(store) if store is not None else None

    def _write(self, action: Callable[[RelayLog], None]) -> None:
        """A history write; a store that cannot take it costs the history, nothing else."""
        book = self.log
        if book is None:
            return
        try:
            action(book)
        except SessionStoreError as exc:
            log.warning("relay history not saved: %s", exc)

    # -- the history ----------------------------------------------------------------------

    def start(self, relay: Relay) -> None:
        """Sends are recorded as they happen, on whatever thread sends."""
        relay.on_sent = self._sent

    def _sent(self, result: SendResult, body: str) -> None:
        peer = result.peer
        if peer is None or result.message_id is None:
            return
        self._write(
            lambda book: book.record(
                workspace=self.workspace,
                session_id=self.session_id() or "",
                direction="sent",
                message_id=str(result.message_id),
                peer_instance_id=peer.instance_id,
                peer_name=name_of(peer),
                body=body,
                state=result.status or "not delivered",
            )
        )

    def note_arrivals(self) -> None:
        """Messages accepted since the last look: in the history as queued or held."""
        relay = self.relay()
        if relay is None:
            return
        arrivals = [(m, "queued") for m in relay.waiting()]
        arrivals += [(m, "held") for m in relay.held() if isinstance(m, ClaimedMessage)]
        for message, state in arrivals:
            if message.envelope.message_id not in self._logged:
                self.received(message.envelope, state)

    def received(self, envelope: Envelope, state: str) -> None:
        """A received message's state: queued, held, running, done, cancelled, failed..."""
        self._logged.add(envelope.message_id)
        self._write(
            lambda book: book.record(
                workspace=self.workspace,
                session_id=self.session_id() or "",
                direction="received",
                message_id=envelope.message_id,
                peer_instance_id=envelope.sender_instance_id,
                peer_name=sender_name(envelope),
                body=envelope.body,
                state=state,
            )
        )

    @slash_command(
        Form(
            "/inbox [N]",
            "messages sent and received here, newest first, with their state and receipt",
        )
    )
    def command(self, argument: str) -> None:
        """/inbox: the history, newest first; /inbox N: one entry whole."""
        book = self.log
        if book is None:
            self.say.error("the relay history is kept in the session store, which is unavailable")
            return
        try:
            records = book.history(self.workspace)
        except SessionStoreError as exc:
            self.say.error(str(exc))
            return
        if not records:
            self.say.notice("No message was sent or received in this workspace yet.")
            return
        if argument.strip():
            if not argument.strip().isdigit() or not 1 <= int(argument) <= len(records):
                self.say.error(f"usage: /inbox N, with N from /inbox (1 to {len(records)})")
                return
            self.say.notice(_entry_text(records[int(argument) - 1]))
            return
        lines = ["Relayed messages of this workspace, newest first (/inbox N shows one):"]
        for number, record in enumerate(records, 1):
            arrow = "→" if record.direction == "sent" else "←"
            when = time.strftime("%m-%d %H:%M", time.localtime(record.created_at))
            receipt = f" · receipt: {record.receipt_outcome}" if record.receipt_outcome else ""
            preview = " ".join(record.body.split())
            preview = preview[:48] + ("…" if len(preview) > 48 else "")
            lines.append(
                f"{number:>3}. {when} {arrow} {visible(record.peer_name)} · {record.state}"
                f"{receipt} · {visible(preview)}"
            )
        self.say.notice("\n".join(lines))

    def send_receipt(self, task: Envelope, outcome: str, summary: str) -> None:
        """Tell the task's sender how it ended, on a thread of its own: the turn's end (or its
        cancellation) never waits for a peer. A receipt-less peer (zcoder.zsh) is quiet."""
        relay = self.relay()
        if relay is None:
            return

        def deliver() -> None:
            status = relay.send_receipt(task, outcome, summary)
            log.info("receipt for %s (%s): %s", task.message_id, outcome, status)

        threading.Thread(target=deliver, name="zcoder-receipt", daemon=True).start()

    def show_receipts(self) -> None:
        """Receipts for tasks this instance sent: shown, and given to the model as context
        (they start no turn)."""
        relay = self.relay()
        if relay is None:
            return
        agent = self.agent()
        for receipt, sent in relay.take_receipts():
            shown = receipt_text_for_user(receipt.outcome, sent.target_label, receipt.summary)
            metadata = {
                "in_reply_to": receipt.in_reply_to,
                "outcome": receipt.outcome,
                "from_instance_id": receipt.sender_instance_id,
                "from_name": sent.target_label,
            }
            self.say.show(entry_for_event("receipt", shown, metadata))
            self._write(functools.partial(_save_receipt, receipt=receipt))
            if agent is not None:
                agent.record_receipt(
                    receipt_record(
                        target_label=sent.target_label,
                        target_instance_id=sent.target_instance_id,
                        task_preview=sent.body_preview,
                        outcome=receipt.outcome,
                        summary=receipt.summary,
                    ),
                    shown,
                    metadata,
                )


def _entry_text(record: RelayRecord) -> str:
    """One history entry whole: who, when, its message id, its state, its receipt, its text."""
    way = "to" if record.direction == "sent" else "from"
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.created_at))
    lines = [
        f"{record.direction.capitalize()} {way} {visible(record.peer_name)}"
        f" (instance {visible(record.peer_instance_id)}) at {when}",
        f"message {visible(record.message_id)} · {record.state}",
    ]
    if record.receipt_outcome:
        lines.append(f"receipt: {record.receipt_outcome} — {record.receipt_summary}")
    lines += ["", record.body]
    return "\n".join(lines)


def _save_receipt(book: RelayLog, *, receipt: Receipt) -> None:
    book.set_receipt(receipt.in_reply_to, receipt.outcome, receipt.summary)
