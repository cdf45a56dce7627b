"""Trust per peer: which senders' messages run, wait for the user, or are refused.

A peer is known by its canonical workspace: instance ids change on every run, a workspace
does not. ``/agents trust NAME`` and ``/agents block NAME`` record a policy for the
workspace of the live peer NAME; peers with none follow ``ZCODER_RELAY_INBOUND``
(accept, hold or refuse; accept by default, as the design says). Trust is given only to
a sender proven to be an interactive instance working in that very workspace; a block
covers the workspace's whole tree, whoever sends from it or names it
(zcoder.relay.standing decides which is which).

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
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Final

from zcoder.base.errors import ZcoderError
from zcoder.base.safefile import UnsafeFile, read_own_file
from zcoder.relay.settings import Inbound

TRUST_FILE: Final = "relay-trust.json"
MAX_TRUST_BYTES: Final = 256 * 1024
TRUST: Final = "trust"
BLOCK: Final = "block"


def normal_path(path: str) -> PurePosixPath | None:
    """An absolute path, normalised (``..``, ``.``, repeated ``/``) and resolved (symlinks
    that exist), for comparing one path with another component by component; None for a
    relative or empty one, which names no place at all."""
    if not path or not os.path.isabs(path) or "\0" in path:
        return None
    try:
        return PurePosixPath(os.path.realpath(os.path.normpath(path)))
    except (OSError, ValueError):
        return None


def is_within(path: PurePosixPath, tree: PurePosixPath) -> bool:
    """Whether ``path`` is ``tree`` or below it, component by component (``/w/ab`` is not
    within ``/w/a``)."""
    return path.parts[: len(tree.parts)] == tree.parts


class TrustError(ZcoderError):
    """The policies could not be read or saved; the message says why."""


class TrustBook:
    def __init__(self, home: Path | None, default: Inbound) -> None:
        self.path = home / TRUST_FILE if home is not None else None
        self.default = default
        self._lock = threading.Lock()
        self._policies: dict[str, str] = {}
        self._trusted: frozenset[PurePosixPath] = frozenset()
        self._blocked: tuple[PurePosixPath, ...] = ()
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
            self._trusted, self._blocked = frozenset(), ()
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
            self._trusted, self._blocked = frozenset(), ()
            return
        self._policies = {
            str(workspace): policy
            for workspace, policy in peers.items()
            if isinstance(workspace, str) and policy in (TRUST, BLOCK)
        }
        self._normalise()
        self._identity, self.problem = identity, None

    def _normalise(self) -> None:
        """The policies' paths, normalised and resolved once per read of the file."""
        trusted, blocked = set(), []
        for workspace, policy in self._policies.items():
            path = normal_path(workspace)
            if path is None:
                continue
            if policy == TRUST:
                trusted.add(path)
            else:
                blocked.append(path)
        self._trusted, self._blocked = frozenset(trusted), tuple(blocked)

    def policy_for(self, workspace: str, *, trusted: bool, claims: Iterable[str] = ()) -> Inbound:
        """What to do with a message from a sender working in ``workspace``.

        A block covers the blocked workspace's whole tree, and applies when ``workspace``
        or any of ``claims`` (other paths the sender named or works in) lies in it: a
        sender cannot slip past a block by what it claims. Trust applies to exactly the
        trusted workspace, and only when ``trusted`` says the sender was proven to be an
        interactive instance working there (zcoder.relay.standing); otherwise the default.
        """
        with self._lock:
            self._reload()
            blocked, trusted_paths = self._blocked, self._trusted
        # Paths are resolved only when a policy could apply to them (a realpath is a
        # lstat per component, on every enqueue).
        if blocked:
            places = dict.fromkeys((workspace, *claims))  # distinct, in order
            seen = [p for p in map(normal_path, places) if p is not None]
            if any(is_within(path, block) for path in seen for block in blocked):
                return Inbound.REFUSE
        if trusted and trusted_paths and normal_path(workspace) in trusted_paths:
            return Inbound.ACCEPT
        return self.default

    def trusts(self, workspace: str, *, proven: bool) -> bool:
        """Whether the user trusts a sender working in ``workspace`` (``/agents trust``):
        only one ``proven`` to be an interactive instance working there
        (zcoder.relay.standing), and only while no block covers it. Its relayed tasks edit
        files as the user's own turns do (ZCODER_RELAY_EDITS, zcoder.tools.approval)."""
        if not proven:
            return False
        with self._lock:
            self._reload()
            trusted_paths = self._trusted
        if not trusted_paths or normal_path(workspace) not in trusted_paths:
            return False
        return self.policy_for(workspace, trusted=True) is Inbound.ACCEPT

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
        resolved = normal_path(workspace)
        if resolved is None:
            raise TrustError(f"{workspace!r} is not an absolute path")
        workspace = str(resolved)
        with self._lock:
            self._reload()
            if self.problem is not None and self._identity is not None:
                raise TrustError(f"{self.problem}: fix or remove it first")
            # Any spelling of the same place (an older file's "/w/a/", say) is replaced.
            policies = {k: v for k, v in self._policies.items() if normal_path(k) != resolved}
            if policy is not None:
                policies[workspace] = policy
            self._write(policies)
            self._policies = policies
            self._normalise()
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
