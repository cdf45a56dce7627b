"""Trust per peer: which senders' messages run, wait for the user, or are refused.

A peer is known by its canonical workspace: instance ids change on every run, a workspace
does not. ``/agents trust NAME`` and ``/agents block NAME`` record a policy for the
workspace of the live peer NAME; peers with none follow ``ZCODER_RELAY_INBOUND``
(accept, hold or refuse; accept by default, as the design says).

The policies live in ``$ZCODER_HOME/relay-trust.json`` (0600, written atomically) and are
shared by the user's instances: a change made in one is seen by the others' listeners at
their next message (the file's identity is checked on each lookup, so nothing is re-read
needlessly). A missing or unreadable file means no policies; an unreadable one is
reported once and never overwritten by a lookup.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import threading
from pathlib import Path
from typing import Final

from zcoder.relay.safefile import UnsafeFile, read_own_file
from zcoder.relay.settings import Inbound

TRUST_FILE: Final = "relay-trust.json"
MAX_TRUST_BYTES: Final = 256 * 1024
TRUST: Final = "trust"
BLOCK: Final = "block"


class TrustError(Exception):
    """The policies could not be read or saved; the message says why."""


class TrustBook:
    def __init__(self, home: Path | None, default: Inbound) -> None:
        self.path = home / TRUST_FILE if home is not None else None
        self.default = default
        self._lock = threading.Lock()
        self._policies: dict[str, str] = {}
        self._identity: tuple[int, int, int, int] | None = None
        self.problem: str | None = None  # why the file could not be read, if it could not

    # -- reading ------------------------------------------------------------------------

    def _reload(self) -> None:
        """Re-read the file when it changed since the last read. Call with the lock held."""
        if self.path is None:
            return
        try:
            st = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            self._policies, self._identity, self.problem = {}, None, None
            return
        except OSError as exc:
            self.problem = f"cannot read {self.path}: {exc.strerror}"
            return
        identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if identity == self._identity:
            return
        try:
            data = json.loads(read_own_file(self.path, MAX_TRUST_BYTES))
            peers = data.get("peers", {}) if isinstance(data, dict) else None
            if not isinstance(peers, dict):
                raise ValueError("no peers table")
        except (UnsafeFile, ValueError, UnicodeDecodeError) as exc:
            self.problem = f"{self.path} is unusable ({exc}); no per-peer policies apply"
            self._policies, self._identity = {}, identity
            return
        self._policies = {
            str(workspace): policy
            for workspace, policy in peers.items()
            if isinstance(workspace, str) and policy in (TRUST, BLOCK)
        }
        self._identity, self.problem = identity, None

    def policy_for(self, workspace: str) -> Inbound:
        """What to do with a message from a peer working in ``workspace``."""
        with self._lock:
            self._reload()
            explicit = self._policies.get(workspace)
        if explicit == TRUST:
            return Inbound.ACCEPT
        if explicit == BLOCK:
            return Inbound.REFUSE
        return self.default

    def policies(self) -> dict[str, str]:
        with self._lock:
            self._reload()
            return dict(self._policies)

    # -- writing ------------------------------------------------------------------------

    def set(self, workspace: str, policy: str | None) -> None:
        """Record ``trust`` or ``block`` for ``workspace``, or forget it (None)."""
        if self.path is None:
            raise TrustError("there is no zcoder home to keep per-peer policies in")
        if policy not in (TRUST, BLOCK, None):
            raise ValueError(f"unknown policy {policy!r}")
        with self._lock:
            self._reload()
            if self.problem is not None and self._identity is not None:
                raise TrustError(f"{self.problem}: fix or remove it first")
            policies = dict(self._policies)
            if policy is None:
                policies.pop(workspace, None)
            else:
                policies[workspace] = policy
            self._write(policies)
            self._policies = policies
            self._identity = None  # re-read (cheaply) next time: the file is new

    def _write(self, policies: dict[str, str]) -> None:
        assert self.path is not None
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        data = json.dumps({"version": 1, "peers": policies}, indent=2, sort_keys=True) + "\n"
        temporary = self.path.with_name(f".{TRUST_FILE}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            try:
                os.write(fd, data.encode("utf-8"))
            finally:
                os.close(fd)
            os.replace(temporary, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise TrustError(f"could not save {self.path}: {exc.strerror or exc}") from exc
