"""A lock the kernel drops when its holder dies: an exclusive ``flock`` held through an open
descriptor (close-on-exec, so commands the holder starts do not inherit it).

flock locks belong to an open file description: two opens in one process exclude each
other as two processes do, and closing another descriptor of the same file (a probe) does
not drop the lock, unlike POSIX ``fcntl`` locks. The session store's locks
(zcoder.sessions.locks) and the task board's claims (zcoder.board.locks) are made of it.
"""

from __future__ import annotations

import contextlib
import os


class HeldFlock:
    """A held lock; :meth:`release` (or ``with``, or the holder's death) lets it go."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Idempotent. Closing the descriptor drops the flock."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
