"""The foreground's side of the queue: claiming, holding, releasing and completing relayed tasks.

The listener process stores messages in the private spool; this process alone takes them out
(the design's "the foreground process alone updates agent, session and UI state"). Every
slot freed here (a task done, discarded or quarantined) is told to the listener process, so
the queue positions and the ``full`` it answers stay exact.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from zcoder.relay.control import LastAccepted, ListenerCommand, SpoolDone
from zcoder.relay.protocol import Envelope
from zcoder.relay.spool import (
    ClaimedMessage,
    ClaimResult,
    QuarantinedMessage,
    Sequences,
    Spool,
    SpoolError,
)

log = logging.getLogger("zcoder.relay.instance")  # one log for all of Relay, as before its split


class QueueOwner(Protocol):
    """What the inbox uses of the endpoint (zcoder.relay.endpoint)."""

    spool: Spool | None

    @property
    def available(self) -> bool: ...

    @property
    def paused(self) -> bool: ...

    def command(self, command: ListenerCommand) -> dict[str, object] | None: ...

    def mark_unavailable(self, reason: str) -> None: ...


class Inbox:
    """Relayed tasks accepted by this instance, as the foreground sees them."""

    def __init__(self, owner: QueueOwner) -> None:
        self._owner = owner
        self._last_accepted = 0  # the listener's last store sequence, as last asked

    def _live_spool(self) -> Spool | None:
        owner = self._owner
        return owner.spool if owner.available else None

    def claim_one(self) -> ClaimResult | None:
        """The oldest queued message, or None. Paused, nothing is claimed: accepted
        messages stay queued and run in order after resume (the seed's pause semantics)."""
        spool = self._live_spool()
        if spool is None or self._owner.paused:
            return None
        try:
            claimed = spool.claim_one()
        except SpoolError as exc:
            self._owner.mark_unavailable(str(exc))
            return None
        if isinstance(claimed, QuarantinedMessage):
            self._slot_freed(claimed.name)
        return claimed

    def claim(self, wanted: Callable[[Envelope], bool]) -> list[ClaimedMessage]:
        """The waiting (not held) messages ``wanted`` picks, claimed, oldest first (none
        while paused); one another claimer took first is left to it."""
        spool = self._live_spool()
        if spool is None or self._owner.paused:
            return []
        claimed: list[ClaimedMessage] = []
        try:
            for message in spool.waiting():
                if wanted(message.envelope):
                    taken = spool.claim(message.path.name)
                    if isinstance(taken, QuarantinedMessage):  # changed since it was read
                        self._slot_freed(taken.name)
                    elif taken is not None:
                        claimed.append(taken)
        except SpoolError as exc:
            self._owner.mark_unavailable(str(exc))
        return claimed

    def sequences(self) -> Sequences:
        """The acceptance sequence of the oldest queued message (None: nothing queued, or
        the relay is unavailable) and of the last one accepted. Paused, messages still wait
        (``claim_one`` returns None) and are reported here."""
        spool = self._owner.spool
        if spool is None:
            return Sequences(None, 0)
        found = spool.sequences()
        if not self._owner.available:
            return Sequences(None, self._last_accepted)
        reply = self._owner.command(LastAccepted())
        if reply is not None:
            last = reply.get("last_accepted")
            self._last_accepted = max(self._last_accepted, last if isinstance(last, int) else 0)
        return Sequences(found.oldest_waiting, self._last_accepted)

    def complete(self, claimed: ClaimedMessage) -> None:
        spool = self._owner.spool
        if spool is not None:
            try:
                spool.complete(claimed)
            except OSError as exc:
                log.warning("relay receipt not recorded: %s", exc)
            self._slot_freed(claimed.path.name)

    def waiting(self) -> list[ClaimedMessage]:
        """Accepted messages waiting in the queue (not held), oldest first, unclaimed."""
        spool = self._live_spool()
        return spool.waiting() if spool is not None else []

    def held(self) -> list[ClaimResult]:
        """Messages that wait for the user (held by policy), oldest first."""
        spool = self._live_spool()
        if spool is None:
            return []
        found = spool.held()
        for entry in found:
            if isinstance(entry, QuarantinedMessage):
                self._slot_freed(entry.name)
        return found

    def release(self, name: str) -> bool:
        """Run a held message: it joins the queue, next in line."""
        spool = self._owner.spool
        return spool.release(name) if spool is not None else False

    def hold(self, claimed: ClaimedMessage) -> bool:
        """A claimed message waits for the user instead of running (its slot stays taken)."""
        spool = self._owner.spool
        return spool.hold(claimed) if spool is not None else False

    def discard(self, name: str) -> bool:
        spool = self._owner.spool
        if spool is None or not spool.discard(name):
            return False
        self._slot_freed(name)
        return True

    def _slot_freed(self, name: str) -> None:
        """Tell the listener a queue slot is free (an entry done, discarded or
        quarantined here): its queue positions and its ``full`` stay exact."""
        if self._owner.available:
            self._owner.command(SpoolDone(name))
