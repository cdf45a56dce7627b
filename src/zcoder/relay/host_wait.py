"""A message sent to another machine, followed until its receipt comes back.

The model's send to ``HOST:NAME`` (zcoder.agent.relay_hosts) runs the remote ``zcoder send
--wait --json`` (zcoder.relay.hosts). Its first line is the send's answer
(``send_record``), read within SEND_TIMEOUT. When the message was accepted, ssh stays
open: the remote send prints each progress stage (``{"progress": "started"}``) and then
the receipt (``{"outcome": ..., "summary": ...}``), and a daemon thread here hands each to
this machine's relay (``RemoteAnswers``), where it is shown, saved in the history and given
to the model as a local peer's receipt is.

What comes back is the other machine's word and is checked as a listener checks a local
receipt: a known stage, a known outcome, a bounded summary, one receipt per message, only
for a message sent there (its book entry's target is ``HOST:ID``, which no local instance
id can be: a local peer cannot answer for it). Lines that are not zcoder send's end the
wait, said in the log. When the receiver there quit without a receipt, its ``zcoder send``
says so and exits EXIT_DISCARDED: that is a ``discarded`` receipt, as the receiver would
have sent. Any other end (the connection lost) ends the wait, said in the log; the
history keeps the message without a receipt.

Each wait is one ssh process; this zcoder's exit ends them all (``stop_all``), and the
remote send stops waiting once its connection is gone.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

from zcoder.base.ssh_target import Target
from zcoder.relay.hosts import (
    MAX_ANSWER_BYTES,
    SEND_TIMEOUT,
    HostError,
    HostSendResult,
    SshProcess,
    remote_argv,
    send_command,
    send_record,
    ssh_failure,
)
from zcoder.relay.progress import STAGES, Progress
from zcoder.relay.protocol import FrameError, decode_flat_object
from zcoder.relay.receipts import OUTCOMES, Receipt, clip_summary

if TYPE_CHECKING:
    from zcoder.relay.client import Peer
    from zcoder.relay.instance import Relay

log = logging.getLogger("zcoder.relay.hosts")

EXIT_DISCARDED: Final = 13  # zcoder send's: the receiver quit before running it (scripts.py)
GONE_SUMMARY: Final = "the receiver on {host} quit without running it (its zcoder send said so)"

Stage = Callable[[str], None]
Outcome = Callable[[str, str], None]


class RemoteWait:
    """ssh running the remote ``zcoder send --wait --json`` for one message."""

    def __init__(
        self,
        target: Target,
        instance_id: str,
        message: str,
        env: Mapping[str, str],
        *,
        steer: bool,
    ) -> None:
        self.target = target
        command = send_command(instance_id, as_json=True, steer=steer, wait=True, timeout=None)
        self.ssh = SshProcess(remote_argv(target, command, env), env, message.encode("utf-8"))
        self._lines: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()  # None: the end
        self._overflow = False
        _live.add(self)
        threading.Thread(target=self._read_lines, name="zcoder-host-send", daemon=True).start()

    # -- the first line: the send's answer ------------------------------------------------

    def answer(self, timeout: float = SEND_TIMEOUT) -> HostSendResult:
        """The remote send's answer (its first line); a HostError when ssh failed, or no
        answer came within ``timeout`` (the wait is then stopped)."""
        try:
            first = self._lines.get(timeout=timeout)
        except queue.Empty:
            self.stop()
            raise HostError(f"{self.target.label} did not answer within {timeout:g} s") from None
        if first is None:
            code = self._finish()
            failure = ssh_failure(self.target, code, self.stderr_text)
            if failure is not None:
                raise HostError(failure)
            return send_record(b"", self.target, code, self.stderr_text)
        return send_record(first, self.target, 0, self.stderr_text)

    # -- what follows: progress, then the receipt -----------------------------------------

    def follow(self, on_stage: Stage, on_receipt: Outcome) -> None:
        """Hand each progress stage and the receipt to the callbacks, on a daemon thread;
        then the wait ends."""
        threading.Thread(
            target=self._follow, args=(on_stage, on_receipt), name="zcoder-host-wait", daemon=True
        ).start()

    def _follow(self, on_stage: Stage, on_receipt: Outcome) -> None:
        label = self.target.label
        try:
            while (line := self._lines.get()) is not None:
                try:
                    record = dict(decode_flat_object(line))
                except FrameError as exc:
                    log.warning("the wait for a receipt from %s ended: not zcoder send's (%s)",
                                label, exc)  # fmt: skip
                    return
                stage, outcome = record.get("progress"), record.get("outcome")
                if stage in STAGES and len(record) == 1:
                    on_stage(str(stage))
                elif outcome in OUTCOMES and isinstance(record.get("summary", ""), str):
                    on_receipt(str(outcome), clip_summary(str(record.get("summary", ""))))
                    return
                else:
                    log.warning("the wait for a receipt from %s ended: a line that is not "
                                "zcoder send's progress or receipt", label)  # fmt: skip
                    return
            code = self._finish()
            if code == EXIT_DISCARDED:
                on_receipt("discarded", GONE_SUMMARY.format(host=label))
            elif self._overflow:
                log.warning("the wait for a receipt from %s ended: more than %d bytes came",
                            label, MAX_ANSWER_BYTES)  # fmt: skip
            else:
                why = ssh_failure(self.target, code, self.stderr_text) or f"status {code}"
                log.warning("the wait for a receipt from %s ended without one: %s", label, why)
        except Exception:  # a callback that failed costs this receipt, nothing else
            log.exception("the wait for a receipt from %s failed", label)
        finally:
            self.stop()

    # -- the process ----------------------------------------------------------------------

    @property
    def stderr_text(self) -> str:
        return self.ssh.stderr_text

    def stop(self) -> None:
        """End ssh (the remote send notices its caller is gone), and reap it."""
        _live.discard(self)
        self.ssh.end()
        self._finish()

    def _finish(self) -> int:
        return self.ssh.wait(timeout=5)

    def _read_lines(self) -> None:
        total = 0
        try:
            for raw in self.ssh.stdout:
                total += len(raw)
                if total > MAX_ANSWER_BYTES:
                    self._overflow = True
                    break
                self._lines.put(raw.rstrip(b"\n"))
        except (OSError, ValueError):
            pass
        finally:
            self._lines.put(None)


_live: set[RemoteWait] = set()


@atexit.register
def stop_all() -> None:
    """This zcoder is leaving: every wait ends (their receipts will not be read)."""
    for wait in list(_live):
        wait.stop()


class RemoteAnswers:
    """This machine's relay, told of a message sent to another machine and of what comes
    back for it: recorded, shown and given to the model as a local peer's would be."""

    _numbers = itertools.count(1)

    def __init__(self, relay: Relay) -> None:
        self.relay = relay

    @staticmethod
    def key(host: str, instance_id: str) -> str:
        """The book's target for a message sent there (no local instance id has a colon)."""
        return f"{host}:{instance_id}"

    def sent(self, result: HostSendResult, peer: Peer, host: str, body: str) -> None:
        """An accepted message: its receipt may come (and the history records it)."""
        from zcoder.relay.names import name_of  # noqa: PLC0415
        from zcoder.relay.outbox import SendResult  # noqa: PLC0415

        assert result.message_id is not None
        label = f"{host}:{name_of(peer)}"
        book = self.relay.receipts
        book.record_sent(result.message_id, self.key(host, peer.instance_id), label, body)
        on_sent = self.relay.on_sent
        if on_sent is not None:
            with contextlib.suppress(Exception):  # the history is not worth the receipt
                on_sent(SendResult(result.status, result.text, peer, result.message_id), body)

    def stage(self, message_id: str, host: str, instance_id: str, stage: str) -> None:
        sender = self.key(host, instance_id)
        progress = Progress(
            f"{message_id}-p{next(self._numbers)}", self._me(), sender, 0, message_id, stage,
            time.time(),
        )  # fmt: skip
        status, why = self.relay.receipts.accept_progress(progress)
        self._told(status, why, "progress", message_id)

    def receipt(
        self, message_id: str, host: str, instance_id: str, outcome: str, summary: str
    ) -> None:
        sender = self.key(host, instance_id)
        receipt = Receipt(
            f"{message_id}-r{next(self._numbers)}", self._me(), sender, 0, message_id, outcome,
            summary, time.time(),
        )  # fmt: skip
        status, why = self.relay.receipts.accept(receipt)
        self._told(status, why, "receipt", message_id)

    def _me(self) -> str:
        return self.relay.instance_id or ""

    def _told(self, status: str, why: str, what: str, message_id: str) -> None:
        if status == "accepted":
            if self.relay.on_message is not None:
                self.relay.on_message()  # the app looks (take_receipts)
        else:
            log.info("relay %s for %s over SSH not recorded: %s", what, message_id, why)


__all__ = ["RemoteAnswers", "RemoteWait", "stop_all"]
