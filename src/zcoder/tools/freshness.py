"""Never write over a change the agent has not seen.

Another zcoder in the same workspace, the user's editor or a command may change a file
after the agent read it. An edit planned from the old content would silently undo that
change. So the agent remembers what each file held when it last read or wrote it, and
write_file, replace_text and apply_patch refuse to change a file whose content on disk
differs from that: the model is told to read it again. A file the agent never read or
wrote is not checked (creating a file, or an edit from a search result, goes ahead).

What is remembered is a SHA-256 of the whole content (files up to ``HASHED_MAX_BYTES``;
for a larger one, its size and modification time), per path, for the agent's lifetime.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from typing import Final

from zcoder.tools.confinement import ConfinedPath, open_read

HASHED_MAX_BYTES: Final = 8 * 1024 * 1024
MAX_REMEMBERED: Final = 4096


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FreshnessBook:
    """Path -> what the file held when this agent last read or wrote it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[str, str] = {}

    def _remember(self, path: str, signature: str | None) -> None:
        with self._lock:
            self._seen.pop(path, None)
            if signature is not None:
                self._seen[path] = signature
                while len(self._seen) > MAX_REMEMBERED:
                    del self._seen[next(iter(self._seen))]

    def saw(self, path: str, data: bytes | None) -> None:
        """The agent read (or wrote) exactly ``data`` at ``path``; None: it is gone."""
        self._remember(path, None if data is None else _digest(data))

    def saw_file(self, target: ConfinedPath) -> None:
        """The agent read part of the file (read_file_range): remember the whole of it."""
        try:
            with open_read(target) as handle:
                st = os.fstat(handle.fileno())
                if st.st_size > HASHED_MAX_BYTES:
                    self._remember(target.display, f"stat:{st.st_size}:{st.st_mtime_ns}")
                    return
                data = handle.read(HASHED_MAX_BYTES + 1)
        except OSError:
            return  # unreadable now: nothing is remembered, nothing refused later
        self.saw(target.display, data)

    def stale(self, path: str, target: ConfinedPath, current: bytes | None) -> bool:
        """Whether the file changed since the agent last read or wrote it. ``current`` is
        its content now (None: absent, or too large to have been read)."""
        with self._lock:
            seen = self._seen.get(path)
        if seen is None:
            return False
        if seen.startswith("stat:"):
            try:
                with open_read(target) as handle:
                    st = os.fstat(handle.fileno())
            except OSError:
                return True
            return seen != f"stat:{st.st_size}:{st.st_mtime_ns}"
        return current is None or _digest(current) != seen

    def forget(self) -> None:
        with self._lock:
            self._seen.clear()


def stale_message(paths: Sequence[str]) -> str:
    """The refusal the model gets."""
    names = ", ".join(paths)
    one = len(paths) == 1
    return (
        f"{names} changed on disk since you last read or wrote {'it' if one else 'them'} "
        "(the user, another agent or a command changed it); nothing was written. Read "
        f"{'it' if one else 'them'} again and make your change on the current content."
    )
