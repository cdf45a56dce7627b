"""Tasks a crashed instance of this workspace accepted and never ran: offered, recovered or
dropped.

The start-up sweep (zcoder.relay.sweep) finds them; only the user decides what happens to
them. A recovered message is validated again as stored data (never trusted for having been
in a spool), re-addressed to this instance and queued through the listener process, the one
that numbers the spool's entries; either way the dead instance's spool then goes.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Protocol

from zcoder.base.safefile import UnsafeFile, read_own_file
from zcoder.relay.control import Store
from zcoder.relay.listener_process import ListenerGone, ListenerProcess
from zcoder.relay.protocol import (
    Envelope,
    EnvelopeError,
    FrameError,
    decode_flat_object,
    validate_envelope,
)
from zcoder.relay.settings import RelaySettings
from zcoder.relay.spool import Spool
from zcoder.relay.sweep import (
    Leftover,
    SweepResult,
    forget_leftover,
    leftovers_for,
    recoverable_entries,
)


class Heir(Protocol):
    """What recovery uses of the endpoint (zcoder.relay.endpoint)."""

    workspace: Path
    sweep: SweepResult
    spool: Spool | None
    instance_id: str | None
    registry: Path | None
    listener: ListenerProcess | None


class Leftovers:
    """Dead instances' unrun messages found at start, for this workspace."""

    def __init__(self, settings: RelaySettings, heir: Heir) -> None:
        self.settings = settings
        self._heir = heir

    def found(self) -> list[Leftover]:
        """Unrun messages a dead instance left in this workspace (found at start)."""
        return leftovers_for(self._heir.sweep, str(self._heir.workspace))

    def recover(self, leftover: Leftover) -> tuple[int, list[str]]:
        """Queue here the messages a dead instance accepted and never ran, oldest first,
        then remove its spool. Returns (messages queued, problems with the others)."""
        heir = self._heir
        if heir.spool is None or heir.instance_id is None or heir.registry is None:
            return 0, ["the relay is unavailable"]
        queued, problems = 0, []
        for entry in recoverable_entries(leftover.spool):
            try:
                data = read_own_file(entry, self.settings.max_bytes)
                envelope = validate_envelope(
                    decode_flat_object(data), self.settings.max_message_chars, stored=True
                )
                if envelope.target_instance_id != leftover.instance_id:
                    raise EnvelopeError("it was addressed to another instance")
            except (UnsafeFile, FrameError, EnvelopeError) as exc:
                problems.append(f"{entry.name}: {exc}")
                continue
            moved = dataclasses.replace(envelope, target_instance_id=heir.instance_id)
            status = self._store(moved)
            if status == "accepted":
                queued += 1
            elif status != "duplicate":
                problems.append(f"{entry.name}: {status}")
        heir.sweep.leftovers.remove(leftover)
        forget_leftover(heir.registry, leftover)
        return queued, problems

    def _store(self, envelope: Envelope) -> str:
        """Queue a recovered message through the listener process (the one that numbers
        the spool's entries)."""
        listener = self._heir.listener
        if listener is None:
            return "the relay is unavailable"
        try:
            reply = listener.command(Store(envelope.to_payload().decode()))
        except ListenerGone as exc:
            return str(exc)
        status = str(reply.get("status", ""))
        return status if status in ("accepted", "duplicate") else str(reply.get("reason", status))

    def drop(self, leftover: Leftover) -> None:
        """The user declined a dead instance's unrun messages: remove its spool."""
        registry = self._heir.registry
        if registry is not None:
            self._heir.sweep.leftovers.remove(leftover)
            forget_leftover(registry, leftover)
