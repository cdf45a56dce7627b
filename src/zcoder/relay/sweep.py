"""Removing what dead instances left in the registry, and finding their unrun messages.

A Python instance holds ``a-<instance_id>.lock`` with ``flock`` for its whole life; the
kernel releases the lock when the process ends, however it ends. So a lock file whose lock
this process can take is proof that its instance is dead (kill -0 and manifests prove
nothing: pids are reused). A starting instance sweeps: for each such dead instance it
removes the manifest and the socket, and looks at the private spool named in the lock
file. A spool with no accepted-but-unrun message is removed with the lock file. A spool
that still holds messages is kept, with its lock file as the pointer to it, so those
messages can be offered again (``Leftover``); after ``SPOOL_GRACE_SECONDS`` without
activity it is removed anyway.

Nothing is removed without checking the name's grammar, the owner, the file type and, for a
spool, that it is the directory a zcoder instance creates (``zcoder-<pid>-*/relay``).
Instances without a lock file (zcoder.zsh) are never touched: nothing proves them dead.
A lock file younger than ``MIN_LOCK_AGE_SECONDS`` is left alone: its instance may be
between creating it and locking it (the instance also checks, once locked, that its file
is still the one in the registry).
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import os
import re
import shutil
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from zcoder.relay.protocol import is_instance_id

# A spool still holding accepted messages is kept this long after its last activity, for
# `/agents recover`; then it goes (the lock file's grace is the spool's).
SPOOL_GRACE_SECONDS: Final = 7 * 24 * 3600
MIN_LOCK_AGE_SECONDS: Final = 2.0
MAX_LOCK_BYTES: Final = 4096
# Entries looked at in one sweep; a registry holding more is swept over several starts.
MAX_SWEEP_ENTRIES: Final = 65536
LOCK_NAME_RE: Final = re.compile(r"a-([A-Za-z0-9_.-]{1,128})\.lock")
RUNTIME_NAME_RE: Final = re.compile(r"zcoder-(\d{1,10})-[A-Za-z0-9_]{1,32}")
QUEUE_DIRS: Final = ("inbox", "processing", "held")


@dataclass(frozen=True)
class LockRecord:
    """What an instance writes in its lock file: who it was and where its spool is."""

    instance_id: str
    pid: int
    workspace: str
    runtime: str  # the private directory holding ``relay/`` (the spool); "" if none

    def to_bytes(self) -> bytes:
        return (
            json.dumps(
                {
                    "instance_id": self.instance_id,
                    "pid": self.pid,
                    "workspace": self.workspace,
                    "runtime": self.runtime,
                },
                separators=(",", ":"),
            ).encode("utf-8")
            + b"\n"
        )


def parse_lock_record(data: bytes, instance_id: str) -> LockRecord | None:
    """The record in a lock file, or None when it holds none we can trust."""
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None  # an older zcoder wrote only its pid
    if not isinstance(obj, dict) or obj.get("instance_id") != instance_id:
        return None
    pid, workspace, runtime = obj.get("pid"), obj.get("workspace"), obj.get("runtime")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    if not isinstance(workspace, str) or not isinstance(runtime, str):
        return None
    return LockRecord(instance_id, pid, workspace, runtime)


@dataclass(frozen=True)
class Leftover:
    """A dead instance's spool that still holds accepted messages nobody ran."""

    instance_id: str
    pid: int
    workspace: str
    spool: Path  # the ``relay`` directory: inbox/, processing/, ...
    messages: int


@dataclass
class SweepResult:
    removed: list[str] = field(default_factory=list)  # instance ids whose files went
    leftovers: list[Leftover] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # for the log, never the terminal


def _own(st: os.stat_result, kind: int) -> bool:
    return stat.S_IFMT(st.st_mode) == kind and st.st_uid == os.geteuid()


def _unlink_checked(path: Path, kind: int) -> None:
    """Unlink ``path`` if it is ours and of ``kind``; a missing file is fine."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not _own(st, kind):
        raise OSError(f"{path.name} is not a file of ours of the expected type")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def spool_of(record: LockRecord) -> Path | None:
    """The spool a lock record names, if it is one a zcoder instance of that pid created."""
    if not record.runtime:
        return None
    runtime = Path(record.runtime)
    match = RUNTIME_NAME_RE.fullmatch(runtime.name)
    if not runtime.is_absolute() or match is None or int(match.group(1)) != record.pid:
        return None
    for directory in (runtime, runtime / "relay"):
        try:
            st = os.lstat(directory)
        except OSError:
            return None
        if not _own(st, stat.S_IFDIR):
            return None
    return runtime / "relay"


def count_unrun(spool: Path) -> tuple[int, float]:
    """Accepted messages not yet completed, and the newest activity time of the queue."""
    count, newest = 0, 0.0
    for sub in QUEUE_DIRS:
        directory = spool / sub
        try:
            newest = max(newest, os.lstat(directory).st_mtime)
            with os.scandir(directory) as entries:
                count += sum(1 for entry in entries if entry.name.endswith(".json"))
        except OSError:
            continue
    return count, newest


def recoverable_entries(spool: Path) -> list[Path]:
    """A dead instance's unrun messages, oldest first (processing/ before inbox/ before
    held/ at equal sequence: the spool names begin with the acceptance sequence)."""
    entries: list[tuple[str, int, Path]] = []
    for rank, sub in enumerate(QUEUE_DIRS):
        try:
            with os.scandir(spool / sub) as found:
                entries += [(e.name, rank, Path(e.path)) for e in found if e.name.endswith(".json")]
        except OSError:
            continue
    return [path for _, _, path in sorted(entries)]


def remove_spool(spool: Path) -> None:
    """Remove a dead instance's spool and the private directory around it."""
    runtime = spool.parent
    with contextlib.suppress(FileNotFoundError):
        st = os.lstat(spool)
        if _own(st, stat.S_IFDIR):
            shutil.rmtree(spool, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.rmdir(runtime)


def sweep_dead_instances(
    registry: Path,
    *,
    now: float | None = None,
    grace: float = SPOOL_GRACE_SECONDS,
    min_lock_age: float = MIN_LOCK_AGE_SECONDS,
    skip: str | None = None,
) -> SweepResult:
    """Remove dead instances' registry files; return the spools kept for recovery.

    ``skip`` is the caller's own instance id (its lock is held anyway).
    """
    result = SweepResult()
    now = time.time() if now is None else now
    try:
        with os.scandir(registry) as entries:
            names = [entry.name for entry in itertools.islice(entries, MAX_SWEEP_ENTRIES)]
    except OSError as exc:
        result.problems.append(f"cannot list {registry}: {exc.strerror}")
        return result
    for name in names:
        match = LOCK_NAME_RE.fullmatch(name)
        if match is None or not is_instance_id(match.group(1)) or match.group(1) == skip:
            continue
        try:
            _sweep_one(
                registry,
                match.group(1),
                now=now,
                grace=grace,
                min_lock_age=min_lock_age,
                result=result,
            )
        except OSError as exc:
            result.problems.append(f"{name}: {exc}")
    return result


def _sweep_one(
    registry: Path,
    instance_id: str,
    *,
    now: float,
    grace: float,
    min_lock_age: float,
    result: SweepResult,
) -> None:
    path = registry / f"a-{instance_id}.lock"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not _own(st, stat.S_IFREG) or now - st.st_mtime < min_lock_age:
        return
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino) or opened.st_size > (
            MAX_LOCK_BYTES
        ):
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # held: the instance is alive
        # Dead. The lock stays ours until fd is closed, so no other sweeper races us.
        try:
            current = os.lstat(path)
        except FileNotFoundError:
            return  # another sweeper finished with it between our lstat and our lock
        if (current.st_dev, current.st_ino) != (st.st_dev, st.st_ino):
            return
        record = parse_lock_record(os.read(fd, MAX_LOCK_BYTES), instance_id)
        _unlink_checked(registry / f"a-{instance_id}.json", stat.S_IFREG)
        _unlink_checked(registry / f"a-{instance_id}.sock", stat.S_IFSOCK)
        spool = spool_of(record) if record is not None else None
        if spool is not None and record is not None:
            unrun, last_activity = count_unrun(spool)
            if unrun and now - last_activity < grace:
                result.leftovers.append(
                    Leftover(instance_id, record.pid, record.workspace, spool, unrun)
                )
                return  # the lock file stays: it points at the spool until recovered
            remove_spool(spool)
        _unlink_checked(path, stat.S_IFREG)
        result.removed.append(instance_id)
    finally:
        os.close(fd)


def forget_leftover(registry: Path, leftover: Leftover) -> None:
    """The leftover's messages were recovered or declined: remove its spool and lock file.

    Checks again that the instance is dead (its lock can be taken) before removing anything.
    """
    path = registry / f"a-{leftover.instance_id}.lock"
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not _own(os.fstat(fd), stat.S_IFREG):
            raise OSError(f"{path.name} is not a file of ours")
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError: it is alive
        record = parse_lock_record(os.read(fd, MAX_LOCK_BYTES), leftover.instance_id)
        if record is None or spool_of(record) != leftover.spool:
            raise OSError(f"{path.name} no longer names that spool")
        remove_spool(leftover.spool)
        _unlink_checked(path, stat.S_IFREG)
    finally:
        os.close(fd)


def leftovers_for(result: SweepResult, workspace: str) -> list[Leftover]:
    """The leftovers of dead instances that worked in ``workspace``."""
    return [leftover for leftover in result.leftovers if leftover.workspace == workspace]
