"""Who really sent a message: the sender's standing, from facts the kernel proves.

A manifest, an envelope and a lock file are all written by the sender, so none of them can
say who the sender is. What the kernel says can: the connecting process (SO_PEERCRED), its
working directory, and the flock(2) locks it holds (/proc/locks). An interactive zcoder
holds two locks for as long as it runs: its instance lock ``a-<instance id>.lock`` in the
registry, and a shared lock on its workspace directory. Nothing else zcoder starts holds
the second one: not ``zcoder send``, not the relay-only peer, not a command zcoder runs
(the descriptors are close-on-exec, and the kernel lists a lock under the pid that took
it). So a message's sender is

* ``instance``: the connecting process is the sender process itself (not a child), and it
  holds both the instance's lock and a lock on the workspace its manifest names. Its
  workspace is proven; only such a sender can be trusted (``/agents trust``).
* ``send``: the connecting process is the sender process, holding its instance lock but
  no workspace: ``zcoder send`` (or ``python -m zcoder.relay``, or ``zcoder mcp serve``),
  which may have been run by anyone, a command another zcoder ran included. Shown as
  ``via zcoder send, pid N, from DIR`` (``via MCP from CLIENT, pid N, from DIR`` for
  ``zcoder mcp serve``, ``via SSH from HOST, pid N, from DIR`` for the ``zcoder send``
  another machine runs over SSH), DIR being its working directory as the kernel reports it.
* ``unverified``: everything else that passed the sender check: a zcoder.zsh instance
  (it holds no lock and sends from a subshell), or a process posing as one. Shown with
  the manifest's details, marked unverified.

Neither of the last two ever gets a trusted peer's standing. A block applies to every
kind: to the verified workspace, to every path a sender names, and to the working
directories (as the kernel reports them) of the sender process and of the connecting
process, so a blocked workspace's tree stays blocked whatever a sender claims.

This is not authentication between programs of the same user (such a program can read
your files and start a real zcoder): it makes sure that what the relay shows and decides
rests on what was checked, and that the programs zcoder ships cannot lend one another
standing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from zcoder.relay.names import BadName, check_name, default_name
from zcoder.relay.peercred import PeerCredentials, flock_holders_of, process_cwd
from zcoder.relay.protocol import Envelope
from zcoder.relay.registry import Manifest, lock_path
from zcoder.relay.via import via_mcp, via_ssh

INSTANCE: Final = "instance"
SEND: Final = "send"
UNVERIFIED: Final = "unverified"
KINDS: Final = (INSTANCE, SEND, UNVERIFIED)
SEND_NAME: Final = "zcoder send"  # the sender_project recorded for a ``send`` sender


class Contradiction(ValueError):
    """The envelope's sender fields say something else than the sender's manifest."""


@dataclass(frozen=True)
class Standing:
    kind: str  # INSTANCE, SEND or UNVERIFIED
    name: str  # what to call the sender: its name, "zcoder send", or its manifest project
    workspace: str  # proven (instance), its working directory (send), or claimed
    claims: tuple[str, ...]  # every path the sender named (for blocks)
    # The processes whose working directories count for blocks too: the sender process
    # and the connecting one (a child speaking for it), whatever the standing.
    processes: tuple[int, ...] = ()

    def places(self, cwd_of: Callable[[int], str | None] = process_cwd) -> Iterator[str]:
        """Every path the sender names or works in, for blocks (TrustBook.policy_for): the
        claims, then the working directories of its processes as the kernel reports them,
        read only when asked for (only when some block exists: a read per process)."""
        yield from self.claims
        for pid in self.processes:
            cwd = cwd_of(pid)
            if cwd:
                yield cwd


def _name(manifest: Manifest) -> str:
    """The name ``zcoder agents`` lists the instance by (zcoder.relay.names.name_of)."""
    try:
        return check_name(manifest.name) if manifest.name else default_name(manifest.project)
    except BadName:
        return default_name(manifest.project)


def check_consistent(envelope: Envelope, manifest: Manifest) -> None:
    """Refuse an envelope whose sender fields contradict its sender's manifest. Absent or
    empty fields are allowed (the wire makes them optional); zcoder and zcoder.zsh both
    write the manifest's project and workspace."""
    if envelope.sender_project and envelope.sender_project != manifest.project:
        raise Contradiction("sender_project contradicts the sender's manifest")
    if envelope.sender_workspace and envelope.sender_workspace != manifest.workspace:
        raise Contradiction("sender_workspace contradicts the sender's manifest")


def _is_canonical_dir(workspace: str) -> bool:
    # A symlinked or relative path proves nothing about its target's name.
    return (
        os.path.isabs(workspace)
        and os.path.realpath(workspace) == workspace
        and os.path.isdir(workspace)
    )


def _locks_held(registry: Path, instance_id: str, pid: int, workspace: str) -> tuple[bool, bool]:
    """Whether ``pid`` holds the instance lock of ``instance_id``, and a lock on the
    canonical directory ``workspace`` (one read of /proc/locks for both)."""
    directory = workspace if _is_canonical_dir(workspace) else ""
    instance, place = flock_holders_of((str(lock_path(registry, instance_id)), directory))
    return pid in instance, bool(directory) and pid in place


# Lock facts kept per live process: a process's standing is settled when its first
# message arrives, and /proc/locks costs a machine-wide read (~100-250 µs) that would
# otherwise be paid on every enqueue.
MAX_REMEMBERED_PROCESSES: Final = 64


class LockFacts:
    """``_locks_held`` remembered per live process. An instance takes both of its locks
    before its manifest exists, so what the first look finds stays true for the life of
    that process; the key holds the process's start time from /proc/<pid>/stat, so a
    reused pid is a new process, looked at afresh. A process whose start time cannot be
    read is looked at every time. One thread uses it (the listener)."""

    def __init__(
        self,
        registry: Path,
        start_time: Callable[[int], bytes | None],
        limit: int = MAX_REMEMBERED_PROCESSES,
    ) -> None:
        self.registry = registry
        self._start_time = start_time
        self.limit = limit
        self._facts: dict[tuple[int, bytes, str, str], tuple[bool, bool]] = {}

    def __call__(self, instance_id: str, pid: int, workspace: str) -> tuple[bool, bool]:
        started = self._start_time(pid)
        if started is None:
            return _locks_held(self.registry, instance_id, pid, workspace)
        key = (pid, started, instance_id, workspace)
        facts = self._facts.get(key)
        if facts is None:
            facts = _locks_held(self.registry, instance_id, pid, workspace)
            if len(self._facts) >= self.limit:
                self._facts.clear()
            self._facts[key] = facts
        return facts


def is_live_instance(registry: Path, instance_id: str, pid: int, workspace: str) -> bool:
    """Whether the process ``pid`` is a live interactive zcoder, instance ``instance_id``
    working in ``workspace`` (both of its locks held by that very pid): what ``/agents
    trust`` requires of a peer."""
    return all(_locks_held(registry, instance_id, pid, workspace))


def is_send_process(registry: Path, instance_id: str, pid: int, workspace: str) -> bool:
    """Whether the process ``pid`` is a ``zcoder send`` (or relay-only peer): it holds its
    instance lock but no workspace. Such a process is listed while it sends, but it is no
    agent working anywhere (zcoder.zsh, which holds no lock, is not one)."""
    instance, workspace_lock = _locks_held(registry, instance_id, pid, workspace)
    return instance and not workspace_lock


def standing_of(
    envelope: Envelope,
    manifest: Manifest,
    peer: PeerCredentials | None,
    registry: Path,
    *,
    cwd_of: Callable[[int], str | None] = process_cwd,
    locks: Callable[[str, int, str], tuple[bool, bool]] | None = None,
) -> Standing:
    """The standing of a sender that passed the sender check (its manifest read, its pid
    live, the connecting process the sender or its descendant in the sender's session)."""
    named, claimed = manifest.workspace, envelope.sender_workspace
    claims = tuple(filter(None, (named, claimed if claimed != named else "")))
    # Where the sender works counts for a block whatever its standing: a sender in a
    # blocked directory is refused even when its manifest names another workspace.
    processes = (
        (manifest.pid,)
        if peer is None or peer.pid == manifest.pid
        else (
            manifest.pid,
            peer.pid,
        )
    )
    if peer is None or peer.pid != envelope.sender_pid or manifest.pid != peer.pid:
        return Standing(UNVERIFIED, manifest.project, manifest.workspace, claims, processes)
    if locks is None:
        instance_lock, workspace_lock = _locks_held(
            registry, manifest.instance_id, peer.pid, manifest.workspace
        )
    else:
        instance_lock, workspace_lock = locks(manifest.instance_id, peer.pid, manifest.workspace)
    if not instance_lock:
        return Standing(UNVERIFIED, manifest.project, manifest.workspace, claims, processes)
    if workspace_lock:
        return Standing(INSTANCE, _name(manifest), manifest.workspace, claims, processes)
    cwd = cwd_of(peer.pid)
    # A relay peer serving another agent (``zcoder mcp serve``) says which client it serves:
    # shown as "via MCP from <label>", a label that cannot pose as anything else
    # (zcoder.relay.via). Only this standing shows it; it changes no policy.
    # Another machine's ``zcoder send HOST:NAME`` says which machine: "via SSH from <label>".
    if envelope.sender_ssh:
        name = via_ssh(envelope.sender_ssh)
    else:
        name = via_mcp(envelope.sender_client) if envelope.sender_client else SEND_NAME
    # Its working directory was read above (it is what is shown): a claim already.
    return Standing(SEND, name, cwd or "an unknown directory", (*claims, *filter(None, [cwd])))
