"""What an instance holds on the file system for as long as its relay runs, apart from the
socket: its lock file, its workspace lock, and the private runtime directory it made.

The lock file (flock, exclusive) is how a sweep after a crash tells a dead instance's files
from a live one's (zcoder.relay.sweep); the shared workspace lock is how a receiver tells an
interactive zcoder working there (zcoder.relay.standing). Both are taken at start and let go
at stop, in this one place, so nothing is left held or left behind on any path.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import socket
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from zcoder.relay.listener import LISTEN_BACKLOG
from zcoder.relay.registry import RegistryError, lock_path, unlink_own
from zcoder.relay.sweep import LockRecord

log = logging.getLogger("zcoder.relay.instance")  # one log for all of Relay, as before its split


class Reservation:
    """The lock file, the workspace lock and a runtime directory made for the spool."""

    def __init__(self) -> None:
        self.lock_fd: int | None = None
        self.workspace_fd: int | None = None  # the workspace lock (interactive only)
        self.created_runtime: Path | None = None

    def lock_instance(self, registry: Path, instance_id: str) -> None:
        """Reserve the instance: an exclusive lock file held (flock) for the process
        lifetime, so a dead instance's leftovers are recognisably stale."""
        fd = os.open(
            lock_path(registry, instance_id),
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
        )
        self.lock_fd = fd
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held, listed = os.fstat(fd), os.lstat(lock_path(registry, instance_id))
        if (held.st_dev, held.st_ino) != (listed.st_dev, listed.st_ino):
            raise RegistryError("the relay lock file was replaced while it was being taken")

    def lock_workspace(self, workspace: Path) -> None:
        """A shared lock on the workspace directory, held for the relay's lifetime: the
        kernel lists it under this pid, which is how a receiver knows this process is an
        interactive instance working there (zcoder.relay.standing). Close-on-exec, so no
        command this instance runs holds it. Without it (an exclusive lock someone else
        holds) the relay works; peers just cannot trust this instance."""
        try:
            fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            log.warning("relay: workspace not locked (%s); peers cannot trust it", exc)
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            log.warning("relay: workspace not locked (%s); peers cannot trust it", exc)
            return
        self.workspace_fd = fd

    def runtime_dir(self, given: Path | None, env: Mapping[str, str]) -> Path:
        """``given``, else a private directory made for this process (removed at release)."""
        if given is not None:
            return given
        base = env.get("XDG_RUNTIME_DIR") or env.get("TMPDIR") or "/tmp"
        runtime = Path(tempfile.mkdtemp(prefix=f"zcoder-{os.getpid()}-", dir=base))
        self.created_runtime = runtime
        return runtime

    def record(self, record: LockRecord) -> None:
        """The lock file says where the spool is, for whoever sweeps after a crash."""
        assert self.lock_fd is not None
        os.pwrite(self.lock_fd, record.to_bytes(), 0)

    def release(self, registry: Path | None, instance_id: str | None) -> None:
        """The lock file removed (only this instance's own), then both locks let go."""
        if registry is not None and instance_id is not None and self.lock_fd is not None:
            try:
                unlink_own(lock_path(registry, instance_id), registry, instance_id, stat.S_IFREG)
            except (RegistryError, OSError) as exc:
                log.warning("relay lock not removed: %s", exc)
        if self.lock_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.lock_fd)
            self.lock_fd = None
        if self.workspace_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.workspace_fd)
            self.workspace_fd = None

    def remove_runtime(self) -> None:
        """The runtime directory made here, once the spool in it is gone."""
        if self.created_runtime is not None:
            with contextlib.suppress(OSError):
                os.rmdir(self.created_runtime)
            self.created_runtime = None


def bind_listening_socket(path: Path) -> socket.socket:
    """The listening socket at ``path``, created 0600."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        old_umask = os.umask(0o177)  # the socket file is created 0600
        try:
            server.bind(os.fspath(path))
        finally:
            os.umask(old_umask)
        server.listen(LISTEN_BACKLOG)
    except BaseException:
        server.close()
        raise
    return server
