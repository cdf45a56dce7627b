"""Receipts and the relay's history in the app (/inbox).

Receipts: telling a task's sender how it ended, and showing (and giving the model) the
receipts for tasks this instance sent; the wire format is zcoder.relay.receipts'.

The history: every message this workspace's sessions sent or received, with its state as
it moves on (queued or held, running, done, cancelled, failed, refused) and its receipt,
kept in the session store (zcoder.sessions.relay_log). ``/inbox`` lists it newest first;
``/inbox N`` shows one entry whole.

The bookkeeping (what the history records, receipts both ways) is zcoder.frontend.relay_inbox's
RelayHistory, which ``zcoder --acp`` uses too; this module adds what is the screen's: showing
the receipts and ``/inbox``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from zcoder.base.sanitize import visible
from zcoder.frontend.relay_inbox import RelayHistory
from zcoder.sessions import SessionStoreError
from zcoder.sessions.relay_log import RelayLog, RelayRecord
from zcoder.slash.declared import InboxCommands
from zcoder.tui.parts.services import Part
from zcoder.tui.widgets.transcript import entry_for_event

if TYPE_CHECKING:
    from zcoder.relay import Envelope, Relay


@dataclass(eq=False)
class InboxUI(Part, InboxCommands):
    """The relay's history and receipts. Reads, never the app, the services' relay,
    session store, open session and agent (each None while there is none) and the
    workspace, and speaks through its ``say``."""

    history: RelayHistory = field(init=False)  # the bookkeeping, shared with ACP sessions

    def __post_init__(self) -> None:
        services = self.services
        self.history = RelayHistory(
            None,
            store=lambda: services.store,
            session_id=lambda: services.session_id,
            workspace=services.config.workspace,
        )

    @property
    def log(self) -> RelayLog | None:
        store = self.services.store
        return RelayLog(store) if store is not None else None

    # -- the history ----------------------------------------------------------------------

    def start(self, relay: Relay) -> None:
        """Sends are recorded as they happen, on whatever thread sends."""
        self.history.attach(relay)

    def note_arrivals(self) -> None:
        """Messages accepted since the last look: in the history as queued or held."""
        if self.services.relay is not None:
            self.history.note_arrivals()

    def received(self, envelope: Envelope, state: str) -> None:
        """A received message's state: queued, held, running, done, cancelled, failed..."""
        self.history.received(envelope, state)

    def command(self, argument: str) -> None:
        """/inbox: the history, newest first; /inbox N: one entry whole."""
        book = self.log
        if book is None:
            self.say.error("the relay history is kept in the session store, which is unavailable")
            return
        try:
            records = book.history(self.services.config.workspace)
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

    def show_receipts(self) -> None:
        """Receipts for tasks this instance sent: saved in the history, shown, and given to
        the model as context (they start no turn)."""
        if self.services.relay is None:
            return
        for receipt in self.history.take_receipts(self.services.agent):
            self.say.show(entry_for_event("receipt", receipt.text, receipt.metadata))


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
