"""One sender's share of the held places in a receiver's queue.

Held messages (they wait for the user's decision: ``ZCODER_RELAY_INBOUND=hold``) take
places in the queue like any other. So that one noisy or hostile sender cannot fill the
queue with them and leave trusted peers only ``full``, no one sender may have more than a
share of the queue held: a quarter (4 of the default 16 places). A sender is counted both
as a process (its pid: however many instance ids it registers) and as a place (the
workspace or directory it was verified to send from, the stored ``sender_workspace``:
however many ``zcoder send`` processes run there). Its next message to be held is refused
(``full``, with the reason this module's exception gives). Many senders together can
still fill the queue.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

HELD_SHARE_PER_SENDER: Final = 4  # one sender: at most 1/4 of ZCODER_RELAY_MAX_QUEUE

# (pid, place) of a held message's sender
Sender = tuple[int, str]


def held_quota(max_queue: int) -> int:
    """How many held messages one sender may have in a queue of ``max_queue`` places."""
    return max(1, max_queue // HELD_SHARE_PER_SENDER)


class HeldQuotaReached(Exception):
    """The sender already has its share of the queue held; the message says so in words
    the sender is told (fixed text, no peer input)."""


class HeldShares:
    """The held messages a spool stored, by sender, without reading files. A message the
    foreground released or discarded behind the store side's back frees its share when
    the disk is re-counted, at the quota. Not locked: the spool calls it with its lock."""

    def __init__(self) -> None:
        self._senders: dict[str, Sender] = {}  # spool name -> its sender

    def _count(self, sender: Sender) -> int:
        pid, place = sender
        return sum(1 for p, w in self._senders.values() if p == pid or w == place)

    def check(self, sender: Sender, max_queue: int, held_on_disk: Callable[[], set[str]]) -> None:
        """Raise HeldQuotaReached when ``sender`` already has its share held."""
        quota = held_quota(max_queue)
        if self._count(sender) < quota:
            return
        on_disk = held_on_disk()
        self._senders = {n: s for n, s in self._senders.items() if n in on_disk}
        if self._count(sender) >= quota:
            raise HeldQuotaReached(
                f"{quota} messages from this sender already wait for the receiving user's "
                "decision; no more are taken until they are run or discarded"
            )

    def add(self, name: str, sender: Sender) -> None:
        self._senders[name] = sender

    def discard(self, name: str) -> None:
        self._senders.pop(name, None)
