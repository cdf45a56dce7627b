"""Receipts in the app: telling a task's sender how it ended, and showing (and giving the
model) the receipts for tasks this instance sent. The wire format is zcoder.relay.receipts'.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from zcoder.agent import Outcome, TurnFinished
from zcoder.agent.relay_wrapper import receipt_record
from zcoder.relay import Envelope, Relay
from zcoder.tui.transcript import entry_for_event, receipt_text_for_user

if TYPE_CHECKING:
    from zcoder.tui.app import ZcoderApp
    from zcoder.tui.relay_ui import RelayUI

log = logging.getLogger(__name__)


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


class InboxUI:
    def __init__(self, relay_ui: RelayUI) -> None:
        self.relay_ui = relay_ui

    @property
    def app(self) -> ZcoderApp:
        return self.relay_ui.app

    @property
    def relay(self) -> Relay | None:
        return self.relay_ui.relay

    def send_receipt(self, task: Envelope, outcome: str, summary: str) -> None:
        """Tell the task's sender how it ended, on a thread of its own: the turn's end (or its
        cancellation) never waits for a peer. A receipt-less peer (zcoder.zsh) is quiet."""
        relay = self.relay
        if relay is None:
            return

        def deliver() -> None:
            status = relay.send_receipt(task, outcome, summary)
            log.info("receipt for %s (%s): %s", task.message_id, outcome, status)

        threading.Thread(target=deliver, name="zcoder-receipt", daemon=True).start()

    def show_receipts(self) -> None:
        """Receipts for tasks this instance sent: shown, and given to the model as context
        (they start no turn)."""
        if self.relay is None:
            return
        app = self.app
        for receipt, sent in self.relay.take_receipts():
            shown = receipt_text_for_user(receipt.outcome, sent.target_label, receipt.summary)
            metadata = {
                "in_reply_to": receipt.in_reply_to,
                "outcome": receipt.outcome,
                "from_instance_id": receipt.sender_instance_id,
                "from_name": sent.target_label,
            }
            app.show(entry_for_event("receipt", shown, metadata))
            if app.agent is not None:
                app.agent.record_receipt(
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
