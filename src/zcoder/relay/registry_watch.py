"""Waiting for the registry directory to change: inotify (Linux), else a slow poll.

``zcoder agents --watch`` refreshes when a manifest is written, renamed into place or
removed, or a socket comes or goes; every write of a manifest is a rename, so one
inotify watch on the directory sees them all. inotify comes from the C library through
ctypes (no package to install); where it is missing (not Linux, a full watch table), a
wait simply times out, and the caller's slow refresh is the whole mechanism. The caller
still pings (discovery) on each refresh: a killed instance leaves its files behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import select
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Final, Self

from zcoder.relay.client import DiscoveryResult, discover

# <sys/inotify.h>
_IN_ATTRIB: Final = 0x004
_IN_CLOSE_WRITE: Final = 0x008
_IN_MOVED_FROM: Final = 0x040
_IN_MOVED_TO: Final = 0x080
_IN_CREATE: Final = 0x100
_IN_DELETE: Final = 0x200
_IN_DELETE_SELF: Final = 0x400
_IN_NONBLOCK: Final = 0o4000
_IN_CLOEXEC: Final = 0o2000000
_MASK: Final = (
    _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
)
# Events that come together (a temporary file written, then renamed) are taken as one:
# after the first, this long is waited for the rest.
SETTLE_SECONDS: Final = 0.01


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name or "libc.so.6", use_errno=True)
    except OSError:
        return None


class RegistryWatch:
    """``wait(timeout)``: True when the directory changed (at once, with inotify), False
    when the time ran out. Use it as a context manager: its descriptor is closed."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._fd = -1
        libc = _libc() if hasattr(os, "O_CLOEXEC") else None
        init = getattr(libc, "inotify_init1", None)
        add = getattr(libc, "inotify_add_watch", None)
        if init is None or add is None:
            return
        fd = int(init(_IN_NONBLOCK | _IN_CLOEXEC))
        if fd < 0:
            return
        if int(add(fd, os.fsencode(directory), _MASK)) < 0:
            os.close(fd)
            return
        self._fd = fd

    @property
    def notified(self) -> bool:
        """Whether changes are told at once (inotify); False: only the timeout wakes."""
        return self._fd >= 0

    def wait(self, timeout: float) -> bool:
        if self._fd < 0:
            time.sleep(max(0.0, timeout))
            return False
        ready, _, _ = select.select([self._fd], [], [], max(0.0, timeout))
        if not ready:
            return False
        time.sleep(SETTLE_SECONDS)
        self._drain()
        return True

    def _drain(self) -> None:
        with contextlib.suppress(BlockingIOError, InterruptedError):
            while os.read(self._fd, 65536):
                pass

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


# A refresh at least this often, changes or not: "for 2m" moves on, and a killed instance
# (whose files stay) drops out when its ping fails. Not a polling storm: one discovery.
REFRESH_SECONDS: Final = 1.5
# And at most this often, however fast the directory changes (a flood of renames by some
# other process of the user's cannot turn the view into a loop of discoveries).
MIN_REFRESH_SECONDS: Final = 0.05


def follow(
    registry: Path,
    *,
    io_timeout: float,
    show: Callable[[DiscoveryResult], None],
    stopped: threading.Event,
) -> None:
    """Until ``stopped``: discover the live peers and ``show`` them, then again as soon as
    the registry changes, or after REFRESH_SECONDS. Creates nothing: a registry that does
    not exist yet is looked for again at each refresh."""
    while not stopped.is_set():
        if not registry.is_dir():
            show(DiscoveryResult())
            stopped.wait(REFRESH_SECONDS)
            continue
        with RegistryWatch(registry) as watch:
            while not stopped.is_set() and registry.is_dir():
                show(discover(registry, self_instance_id=None, timeout=io_timeout))
                shown = time.monotonic()  # the next show comes at least MIN_REFRESH after
                if watch.wait(REFRESH_SECONDS):
                    stopped.wait(max(0.0, shown + MIN_REFRESH_SECONDS - time.monotonic()))
