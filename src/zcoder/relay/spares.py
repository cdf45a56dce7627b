"""The thread that keeps the spool's spare files topped up (zcoder.relay.spool).

A file's creation is slow on some file systems; made here, in the foreground process and off
every path that waits, it is never on the way to an acknowledgement. Its own module because
its one job (wait for a quiet moment, then top up) has its own thread and its own stop.
"""

from __future__ import annotations

import threading
from typing import Final

from zcoder.relay.spool import Spool

# Spare files are made after this long without a stored message.
SPARES_QUIET_SECONDS: Final = 0.05


class SpareKeeper:
    """Tops up ``spool``'s spares to ``count`` after start and after each stored message."""

    def __init__(self, spool: Spool, count: int) -> None:
        self._spool = spool
        self._count = count
        self._wanted = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._wanted.set()
        self._thread = threading.Thread(target=self._run, name="zcoder-relay-spares", daemon=True)
        self._thread.start()

    def want(self) -> None:
        """A message was stored: top up once messages stop coming for a moment."""
        self._wanted.set()

    def stop(self) -> None:
        """No more spares; returns once the thread is done (before the spool goes, so no
        file is made in a directory being removed)."""
        self._stop.set()
        self._wanted.set()
        self._spool.stop_spares()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(2.0)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wanted.wait()
            # Made once messages stop coming for a moment: a burst (up to a full queue)
            # is stored through the spares made before it, never competing with new ones
            # for the spool's directory.
            while True:
                self._wanted.clear()
                if self._stop.wait(SPARES_QUIET_SECONDS):
                    return
                if not self._wanted.is_set():
                    break
            self._spool.top_up_spares(self._count)
