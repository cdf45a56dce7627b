"""The watched side's notices (zcoder.relay.watches).

The listener process knows first when its instance becomes idle: zcoder's process tells
it the state (``ready``), and the spool it counts is its own. The moment the state is
ready with an empty queue it hands each watch due to zcoder's process (a ``Forwarded``
event), whose relay sends the ``idle`` notices here, on a thread of its own (a watcher that
answers slowly delays nothing else), whatever front end runs the instance (the TUI, an
editor's session, a relay-only peer). The notice goes from zcoder's process, not from the
listener's: a receiver accepts a request only from its registered sender process or a
descendant in the sender's own session, and the listener runs in a session of its own.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from pathlib import Path
from typing import Final

from zcoder.base.processes import pid_alive
from zcoder.relay.client import TransportError, request
from zcoder.relay.registry import ManifestError, read_manifest_file
from zcoder.relay.watches import IdleNotice, Watch

log = logging.getLogger("zcoder.relay.listener")


def watcher_alive(registry: Path, watch: Watch) -> bool:
    """Whether the watch's sender is still a live registered instance (its manifest, with
    the same pid, and that process alive)."""
    try:
        manifest = read_manifest_file(registry, f"a-{watch.sender_instance_id}.json")
    except ManifestError:
        return False
    return manifest.pid == watch.sender_pid and pid_alive(manifest.pid)


# Notices sent at once: each on a thread of its own, so that a watcher that does not
# answer (until the I/O deadline) delays no other watcher's notice.
MAX_SENDING: Final = 32


class IdleNotifier:
    """Sends one ``idle`` notice per watch handed to it, each on a short thread of its own
    (at most MAX_SENDING at a time)."""

    def __init__(self, instance_id: str, registry: Path, *, timeout: float, max_bytes: int):
        self.instance_id = instance_id
        self.registry = registry
        self.timeout = timeout
        self.max_bytes = max_bytes
        self._counter = itertools.count(1)
        self._sending = threading.BoundedSemaphore(MAX_SENDING)

    def notify(self, watches: list[Watch]) -> None:
        for watch in watches:
            threading.Thread(
                target=self._send_one, args=(watch,), name="zcoder-idle", daemon=True
            ).start()

    def _send_one(self, watch: Watch) -> None:
        with self._sending:
            status = self.send(watch)
        log.info("relay idle notice for %s: %s", watch.message_id, status)

    def send(self, watch: Watch) -> str:
        """Send the notice for ``watch``; the ack status, or why nothing was sent. A watcher
        that is no longer a live registered instance is dropped, unsent."""
        if not watcher_alive(self.registry, watch):
            log.info("relay watch %s dropped: its watcher is gone", watch.message_id)
            return "watcher gone"
        notice = IdleNotice(
            message_id=f"{self.instance_id}-i{next(self._counter)}",
            target_instance_id=watch.sender_instance_id,
            sender_instance_id=self.instance_id,
            sender_pid=os.getpid(),
            in_reply_to=watch.message_id,
            created_at=int(time.time()),
        )
        path = self.registry / f"a-{watch.sender_instance_id}.sock"
        payload = notice.to_payload()
        for _attempt in range(2):  # an ambiguous failure is retried once, same id
            try:
                ack = request(path, payload, timeout=self.timeout, max_bytes=self.max_bytes)
            except TransportError as exc:
                if exc.ambiguous:
                    continue
                return exc.reason
            return ack.status
        return "not delivered"
