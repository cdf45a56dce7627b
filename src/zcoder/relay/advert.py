"""This instance's manifest: what it tells peers about itself, and when.

The manifest's fixed fields come from the endpoint (instance id, socket, workspace); the
mutable ones (session, model, profile, name) live here, and the wire spec says it is
rewritten whenever one of them or the state changes. Writing goes through
zcoder.relay.registry (temporary file, rename, 0600), so peers see it whole or not at all.
"""

from __future__ import annotations

import logging
import os
import stat
import time
from pathlib import Path
from typing import TypedDict, Unpack

from zcoder.relay.registry import (
    Manifest,
    RegistryError,
    manifest_path,
    unlink_own,
    write_manifest,
)

log = logging.getLogger("zcoder.relay.instance")  # one log for all of Relay, as before its split


class AdvertChanges(TypedDict, total=False):
    """The manifest's mutable fields a refresh may change (absent or None: unchanged)."""

    session_id: str | None
    model: str | None
    profile: str | None
    name: str | None
    waiting_on: str | None  # "" clears it (zcoder.relay.waits)


class Advert:
    """The manifest's mutable fields, and whether it is currently written."""

    def __init__(self, *, session_id: str, profile: str, model: str, name: str) -> None:
        self.session_id = session_id
        self.profile = profile
        self.model = model
        self.name = name
        self.waiting_on = ""
        self.started_at = 0
        self.written = False
        self.activity, self.activity_since, self.tmux_pane = "", 0, ""  # zcoder.relay.activity
        self.queued: int | None = None  # not said until the front end first looks
        self.last_receipt, self.last_receipt_at = "", 0

    def update(self, **changes: Unpack[AdvertChanges]) -> bool:
        """Take the values given (None: unchanged); True when one of them changed."""
        changed = False
        for attr, value in changes.items():
            if value is not None and getattr(self, attr) != value:
                setattr(self, attr, value)
                changed = True
        return changed

    def set_activity(self, activity: str) -> bool:
        """Take a new activity, since now; True when it changed (only then is it written)."""
        if activity == self.activity:
            return False
        self.activity, self.activity_since = activity, int(time.time())
        return True

    def set_queued(self, count: int) -> bool:
        """Take the count of messages waiting their turn; True when it changed."""
        count = max(0, count)
        if count == self.queued:
            return False
        self.queued = count
        return True

    def set_last_receipt(self, note: str) -> bool:
        """Take the last receipt received (zcoder.relay.activity.receipt_note), since now."""
        self.last_receipt, self.last_receipt_at = note, int(time.time())
        return True

    def manifest(self, instance_id: str, socket: Path, workspace: Path, state: str) -> Manifest:
        return Manifest(
            instance_id=instance_id,
            pid=os.getpid(),
            project=workspace.name or str(workspace),
            workspace=str(workspace),
            session_id=self.session_id,
            profile=self.profile,
            model=self.model,
            socket=str(socket),
            state=state,
            started_at=self.started_at,
            waiting_on=self.waiting_on,
            name=self.name,
            activity=self.activity,
            activity_since=self.activity_since,
            tmux_pane=self.tmux_pane,
            queued=self.queued,
            last_receipt=self.last_receipt,
            last_receipt_at=self.last_receipt_at,
        )

    def write(self, registry: Path, manifest: Manifest) -> None:
        """Publish ``manifest``; an OSError is the caller's to handle."""
        write_manifest(registry, manifest)
        self.written = True

    def remove(self, registry: Path | None, instance_id: str | None) -> None:
        """Unadvertise (only this instance's own manifest is ever removed)."""
        if registry is None or instance_id is None:
            return
        try:
            unlink_own(manifest_path(registry, instance_id), registry, instance_id, stat.S_IFREG)
        except (RegistryError, OSError) as exc:
            log.warning("relay manifest not removed: %s", exc)
        self.written = False
