"""zcoder's process's side of watches (zcoder.relay.watches): sending one, the notices
that answer them, the notices this instance owes its watchers, and waiting on a peer
without closing a cycle of waits (zcoder.relay.waits).
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from zcoder.base.processes import pid_alive
from zcoder.relay.client import DiscoveryResult
from zcoder.relay.control import Forget, WatchSent
from zcoder.relay.names import display_names, name_of
from zcoder.relay.notifier import IdleNotifier
from zcoder.relay.outbox import Sender, SendResult
from zcoder.relay.protocol import Ack, FrameError, decode_flat_object
from zcoder.relay.receipts import ReceiptBook
from zcoder.relay.registry import ManifestError, read_manifest_file
from zcoder.relay.settings import RelaySettings
from zcoder.relay.watches import (
    Watch,
    WatchError,
    validate_watch,
)

log = logging.getLogger("zcoder.relay.instance")

# How often a wait looks whether the peer it waits on is still there (an lstat and a
# manifest read; the notice itself wakes the wait at once).
GONE_CHECK_SECONDS: Final = 0.25

IDLE: Final = "idle"
TIMEOUT: Final = "timeout"
GONE: Final = "gone"

# (socket path, payload, message id) -> the ack, or why there is none (Outbox._deliver)
Deliver = Callable[[Path, bytes, str], "Ack | str"]


def watch_text(shown: str, instance_id: str, ack: Ack) -> str:
    if ack.status in ("accepted", "duplicate"):
        return f"{shown} ({instance_id}) will say once when it is next idle."
    if ack.status == "unsupported":
        return f"{shown} ({instance_id}) cannot notify when idle (it does not take watches)"
    if ack.status == "full":
        return f"{shown} has too many watches waiting; try again later"
    return f"{shown} refused the watch: {ack.status}"


def peer_gone(registry: Path, instance_id: str, pid: int | None = None) -> bool:
    """Whether a peer waited on is gone: its socket or manifest removed, or its process
    ended (``pid``: the one it had; None, its manifest's)."""
    if not (registry / f"a-{instance_id}.sock").exists():
        return True
    try:
        manifest = read_manifest_file(registry, f"a-{instance_id}.json")
    except ManifestError:
        return True
    return manifest.pid != (pid or manifest.pid) or not pid_alive(manifest.pid)


class Watching:
    """Watches this instance sends (recorded in ``book``, as every message sent, with their
    notices) and the notices it owes its own watchers (``notifier``)."""

    def __init__(
        self, settings: RelaySettings, sender: Sender, deliver: Deliver, book: ReceiptBook
    ) -> None:
        self.settings = settings
        self._sender = sender
        self._deliver = deliver
        self.book = book
        self._counter = itertools.count(1)
        self._notifier: IdleNotifier | None = None
        self._cannot_notify: set[str] = set()  # peers that answered `unsupported` (zcoder.zsh)

    def send(self, target_instance_id: str, discover: Callable[[], DiscoveryResult]) -> SendResult:
        """Ask the live peer with exactly this instance id for one notice when it is next
        idle. zcoder.zsh answers ``unsupported``: one exchange, then the peer cannot."""
        me = self._sender
        if not me.available or me.instance_id is None:
            return SendResult(None, f"the relay is unavailable: {me.reason}")
        found = discover()
        peer = next((p for p in found.peers if p.instance_id == target_instance_id), None)
        if peer is None:
            return SendResult(None, f"no live zcoder instance has the id {target_instance_id!r}")
        shown = display_names(found.peers).get(peer.instance_id, name_of(peer))
        if peer.instance_id in self._cannot_notify:  # asked once already: never again
            unsupported = Ack("", "unsupported")
            return SendResult("unsupported", watch_text(shown, peer.instance_id, unsupported), peer)
        message_id = f"{me.instance_id}-w{next(self._counter)}"
        watch = Watch(message_id, peer.instance_id, me.instance_id, os.getpid(), int(time.time()))
        # Recorded before delivery: the notice may come back before the ack is read here.
        self.book.record_sent(message_id, peer.instance_id, name_of(peer), "", watch=True)
        me.command(WatchSent(message_id, peer.instance_id))
        ack = self._deliver(Path(peer.socket), watch.to_payload(), message_id)
        if isinstance(ack, str):
            result = SendResult(None, f"the watch to {shown} failed: {ack}", peer, message_id)
        else:
            text = watch_text(shown, peer.instance_id, ack)
            result = SendResult(ack.status, text, peer, message_id)
        if not result.accepted:
            self.book.forget(message_id)
            me.command(Forget(message_id))
        if result.status == "unsupported":
            self._cannot_notify.add(peer.instance_id)
        return result

    def due(self, payload: bytes) -> None:
        """A watch on this instance is due (the listener saw it idle): send its notice."""
        me = self._sender
        try:
            watch = validate_watch(decode_flat_object(payload))
        except (FrameError, WatchError) as exc:
            log.warning("relay listener passed on a watch that does not validate: %s", exc)
            return
        if me.instance_id is None or me.registry is None:
            return
        if self._notifier is None:
            self._notifier = IdleNotifier(
                me.instance_id,
                me.registry,
                timeout=self.settings.io_timeout,
                max_bytes=self.settings.max_bytes,
            )
        self._notifier.notify([watch])

    def wait_idle(self, result: SendResult, timeout: float) -> str:
        """Block until the watch's notice comes (IDLE), ``timeout`` passes (TIMEOUT) or the
        peer is gone (GONE)."""
        assert result.message_id is not None and result.peer is not None
        registry = self._sender.registry
        arrived = threading.Event()
        stop = self.book.subscribe(result.message_id, lambda _notice: arrived.set())
        deadline = time.monotonic() + max(0.0, timeout)
        try:
            while not arrived.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    return TIMEOUT
                if arrived.wait(min(left, GONE_CHECK_SECONDS)):
                    break
                if registry is not None and peer_gone(
                    registry, result.peer.instance_id, result.peer.pid
                ):
                    return IDLE if arrived.is_set() else GONE
            return IDLE
        finally:
            stop()
