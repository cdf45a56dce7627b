"""Sending: tasks to peers, receipts back to a task's sender, and the receipts that come back.

Wire behaviour is the spec's section 7 (shared/spec/relay-wire-protocol.md): the target must
be among the live peers just discovered; an ambiguous failure is retried once with the same
payload and message id, never a new one; an ack for another message id is an error; the
result text is the spec's, word for word. A sender that answered ``unsupported`` to a receipt
(zcoder.zsh) is never sent another.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from zcoder.base.sanitize import visible
from zcoder.relay.client import DiscoveryResult, Peer, TransportError, request
from zcoder.relay.control import Forget, ListenerCommand, MessageSent
from zcoder.relay.names import display_names, name_of
from zcoder.relay.progress import Progress, ProgressError, validate_progress
from zcoder.relay.protocol import (
    STEER,
    Ack,
    Addressed,
    Envelope,
    FlatObject,
    FrameError,
    decode_flat_object,
)
from zcoder.relay.receipts import (
    Receipt,
    ReceiptBook,
    ReceiptError,
    SentMessage,
    clip_summary,
    validate_receipt,
)
from zcoder.relay.registry import ManifestError, read_manifest_file
from zcoder.relay.settings import RelaySettings
from zcoder.relay.via import client_label
from zcoder.relay.watches import IdleNotice, WatchError, validate_idle

_Answer = TypeVar("_Answer", Receipt, Progress, IdleNotice)

log = logging.getLogger("zcoder.relay.instance")  # one log for all of Relay, as before its split


@dataclass(frozen=True)
class SendResult:
    """The outcome of one delivery; ``text`` is the spec's result text for the model."""

    status: str | None  # the ack status, or None for a transport or lookup failure
    text: str
    peer: Peer | None = None
    message_id: str | None = None
    delivery: str = ""  # the ack's word on a steer: "steer" or "queue"; "" when not asked

    @property
    def accepted(self) -> bool:
        return self.status in ("accepted", "duplicate")


def result_text(project: str, instance_id: str, ack: Ack) -> str:
    if ack.status == "accepted" and ack.delivery == STEER:
        return (
            f"Message accepted by {project} ({instance_id}); steered: it reaches {project}'s "
            "running turn at its next safe point. Delivery does not imply task completion."
        )
    if ack.status == "accepted" and ack.delivery:
        why = "does not take steering from you" if ack.state == "busy" else "runs no turn"
        return (
            f"Message accepted by {project} ({instance_id}); not steered ({project} {why}): "
            f"queued at position {ack.queue_position}. Delivery does not imply task completion."
        )
    if ack.status == "accepted":
        return (
            f"Message accepted by {project} ({instance_id}); queued at position "
            f"{ack.queue_position}. Delivery does not imply task completion."
        )
    if ack.status == "duplicate":
        return (
            f"Message was already accepted by {project} ({instance_id}). "
            "Delivery does not imply task completion."
        )
    if ack.status in ("paused", "full") and ack.reason:
        # Not paused, nor full for everyone: the receiver refuses this sender, or its share
        # of the queue is taken (zcoder.relay.receiver says which, in fixed words).
        return f"{project} did not accept the message: {visible(ack.reason)}"
    if ack.status == "paused":
        return f"{project} is paused and did not accept the message"
    if ack.status == "full":
        return f"{project}'s relay queue is full"
    if ack.reason:  # the receiver said why (a message whose sender fields were refused)
        return f"{project} rejected the message: {ack.status} ({visible(ack.reason)})"
    return f"{project} rejected the message: {ack.status}"


class Sender(Protocol):
    """What the outbox uses of the endpoint (zcoder.relay.endpoint)."""

    instance_id: str | None
    registry: Path | None
    workspace: Path

    @property
    def available(self) -> bool: ...

    @property
    def reason(self) -> str | None: ...

    def command(self, command: ListenerCommand) -> dict[str, object] | None: ...

    def sync(self) -> None: ...


class Outbox:
    """Messages this instance sends, and the receipts that answer them (``receipts``)."""

    def __init__(self, settings: RelaySettings, sender: Sender, receipts: ReceiptBook) -> None:
        self.settings = settings
        self._sender = sender
        self.receipts = receipts
        self._send_counter = itertools.count(1)
        self._receipt_counter = itertools.count(1)
        self._progress_counter = itertools.count(1)
        # Told of every message sent, on the sending thread (the app's history, /inbox).
        self.on_sent: Callable[[SendResult, str], None] | None = None

    def send(
        self,
        target_instance_id: str,
        body: str,
        discover: Callable[[], DiscoveryResult],
        *,
        sender_client: str = "",
        sender_ssh: str = "",
        delivery: str = "",
    ) -> SendResult:
        """Deliver ``body`` to the live peer with exactly this instance id, among the
        peers ``discover`` finds. ``sender_client``: the MCP client this peer sends for
        (``zcoder mcp serve``), ``sender_ssh`` the machine it sends for over SSH
        (zcoder.relay.hosts), each made a label here whatever it is (zcoder.relay.via).
        ``delivery``: STEER asks for the receiver's running turn; its ack says which."""
        me = self._sender
        if not me.available or me.instance_id is None:
            return SendResult(None, f"the relay is unavailable: {me.reason}")
        if not body:
            return SendResult(None, "the message is empty; nothing was sent")
        if len(body) > self.settings.max_message_chars:
            return SendResult(
                None,
                f"the message has {len(body)} characters; the limit is "
                f"{self.settings.max_message_chars} (ZCODER_RELAY_MAX_MESSAGE_CHARS)",
            )
        found = discover()
        peer = next((p for p in found.peers if p.instance_id == target_instance_id), None)
        # Called by the name `zcoder agents` and /list-agents show (name#pid where names
        # collide; the project for zcoder.zsh), the name the user knows it by.
        shown = display_names(found.peers).get(target_instance_id, "")
        if peer is None:
            return SendResult(
                None,
                f"no live zcoder instance has the id {target_instance_id!r}; "
                "call list_agents and use an exact instance_id from it",
            )
        message_id = f"{me.instance_id}-{next(self._send_counter)}"
        envelope = Envelope(
            message_id=message_id,
            target_instance_id=peer.instance_id,
            sender_instance_id=me.instance_id,
            sender_pid=os.getpid(),
            sender_project=me.workspace.name or str(me.workspace),
            sender_workspace=str(me.workspace),
            body=body,
            created_at=int(time.time()),
            sender_client=client_label(sender_client) if sender_client else "",
            sender_ssh=client_label(sender_ssh) if sender_ssh else "",
            delivery=STEER if delivery == STEER else "",
        )
        payload = envelope.to_payload()
        if len(payload) > self.settings.max_bytes:
            return SendResult(
                None,
                f"the message is {len(payload)} bytes framed; the limit is "
                f"{self.settings.max_bytes} (ZCODER_RELAY_MAX_BYTES)",
                peer,
                message_id,
            )
        # Recorded before delivery: a receipt may come back before the ack is read here.
        self.receipts.record_sent(message_id, peer.instance_id, name_of(peer), body)
        me.command(MessageSent(message_id, peer.instance_id))
        ack = self._deliver(Path(peer.socket), payload, message_id)
        if isinstance(ack, str):
            result = SendResult(None, f"delivery to {shown} failed: {ack}", peer, message_id)
        else:
            result = SendResult(
                ack.status,
                result_text(shown, peer.instance_id, ack),
                peer,
                message_id,
                ack.delivery,
            )
        if result.status not in ("accepted", "duplicate"):
            self.receipts.forget(message_id)
            me.command(Forget(message_id))
        if self.on_sent is not None:
            with contextlib.suppress(Exception):  # the history is not worth a failed send
                self.on_sent(result, body)
        return result

    def _deliver(self, path: Path, payload: bytes, message_id: str) -> Ack | str:
        """Send, retrying once with the same payload after an ambiguous failure."""
        last = ""
        for _attempt in range(2):
            try:
                ack = request(
                    path,
                    payload,
                    timeout=self.settings.io_timeout,
                    max_bytes=self.settings.max_bytes,
                )
            except TransportError as exc:
                last = exc.reason
                if exc.ambiguous:
                    continue
                return last
            if ack.message_id != message_id:
                return f"the acknowledgement was for another message ({ack.message_id!r})"
            return ack
        return last

    def send_receipt(self, task: Envelope, outcome: str, summary: str) -> str:
        """Tell ``task``'s sender how it ended; the ack status, or why nothing was sent.

        A sender that answered ``unsupported`` once (zcoder.zsh) is never sent another.
        """
        number = next(self._receipt_counter)
        return self._to_sender(
            task,
            lambda me, pid: Receipt(
                *_answering(task, f"{me}-r{number}", me, pid),
                outcome=outcome,
                summary=clip_summary(summary),
                created_at=int(time.time()),
            ),
        )

    def send_progress(self, task: Envelope, stage: str) -> str:
        """Tell ``task``'s sender the model started on it (``started``, ``steered``), as
        ``send_receipt`` does: same answers, same silence toward zcoder.zsh."""
        number = next(self._progress_counter)
        return self._to_sender(
            task,
            lambda me, pid: Progress(
                *_answering(task, f"{me}-p{number}", me, pid),
                stage=stage,
                created_at=int(time.time()),
            ),
        )

    def _to_sender(self, task: Envelope, make: Callable[[str, int], Addressed]) -> str:
        """Deliver ``make(own instance id, own pid)`` to ``task``'s sender, if it is still
        the process that sent it; the ack status, or why nothing was sent. A sender that
        answered ``unsupported`` once (zcoder.zsh) is never sent a receipt or progress."""
        me = self._sender
        if not me.available or me.instance_id is None or me.registry is None:
            return "relay unavailable"
        sender = task.sender_instance_id
        if self.receipts.is_receiptless(sender):
            return "receiptless"
        try:
            manifest = read_manifest_file(me.registry, f"a-{sender}.json")
        except ManifestError as exc:
            return f"sender gone ({exc})"
        if manifest.pid != task.sender_pid:
            return "sender gone (another process has its manifest)"
        request = make(me.instance_id, os.getpid())
        ack = self._deliver(Path(manifest.socket), request.to_payload(), request.message_id)
        if isinstance(ack, str):
            return ack
        if ack.status == "unsupported":
            self.receipts.mark_receiptless(sender)
        return ack.status

    def take_receipts(self) -> list[tuple[Receipt, SentMessage]]:
        """Receipts received since the last call, with the message each answers (every
        receipt the listener process accepted before this call included)."""
        self._sender.sync()
        return self.receipts.take()

    def take_progress(self) -> list[tuple[Progress, SentMessage]]:
        """Progress received since the last call, as ``take_receipts``."""
        self._sender.sync()
        return self.receipts.take_progress()

    def receipt_arrived(self, payload: bytes) -> bool:
        """A receipt the listener process accepted, judged again against this book; True
        when it was recorded (someone should look)."""
        return self._arrived(payload, validate_receipt, ReceiptBook.accept)

    def progress_arrived(self, payload: bytes) -> bool:
        """Progress the listener process accepted, as ``receipt_arrived``."""
        return self._arrived(payload, validate_progress, ReceiptBook.accept_progress)

    def idle_arrived(self, payload: bytes) -> bool:
        """An idle notice (zcoder.relay.watches) the listener process accepted, as
        ``receipt_arrived``."""
        return self._arrived(payload, validate_idle, ReceiptBook.accept_idle)

    def take_idle(self) -> list[tuple[IdleNotice, SentMessage]]:
        """Idle notices received since the last call, as ``take_receipts``."""
        self._sender.sync()
        return self.receipts.take_idle()

    def _arrived(
        self,
        payload: bytes,
        validate: Callable[[FlatObject], _Answer],
        accept: Callable[[ReceiptBook, _Answer], tuple[str, str]],
    ) -> bool:
        try:
            answer = validate(decode_flat_object(payload))
        except (FrameError, ReceiptError, ProgressError, WatchError) as exc:
            log.warning("relay listener passed on a request that does not validate: %s", exc)
            return False
        status, reason = accept(self.receipts, answer)
        if status != "accepted":
            log.info("relay %s %s not recorded: %s", answer.TYPE, answer.message_id, reason)
            return False
        return True


def _answering(
    task: Envelope, message_id: str, me: str, pid: int
) -> tuple[str, str, str, int, str]:
    """The leading members of a receipt or progress from ``me`` (pid ``pid``) on ``task``:
    its own id, the task's sender as target, itself, its pid, the task's id."""
    return message_id, task.sender_instance_id, me, pid, task.message_id
