"""Leaving when told to, even when the terminal is gone.

SIGTERM and SIGHUP (the terminal closed, tmux killed its pane) ask the app to exit with
128 + the signal. Textual's exit writes to the terminal to restore it; with the terminal
gone, that write can block forever (Textual 8.2.8's writer queue), and a handler that
needs the event loop never runs again. So the handlers here are plain signal handlers, and
each request also starts a last-resort timer: if the app has not exited EXIT_GRACE_SECONDS
later, zcoder's own cleanup runs (the relay's files and socket removed, the session lock
released, tmux's option restored) and the process ends with the same status. A second
signal does that at once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Final

log = logging.getLogger(__name__)

EXIT_GRACE_SECONDS: Final = 3.0
SIGNALS: Final = (signal.SIGTERM, signal.SIGHUP)


class ExitGuard:
    def __init__(
        self,
        exit_app: Callable[[int], None],
        cleanup: Callable[[], None],
        *,
        grace: float = EXIT_GRACE_SECONDS,
    ) -> None:
        self.exit_app = exit_app  # thread-safe: asks the app to exit with that status
        self.cleanup = cleanup  # idempotent: what must not be left behind
        self.grace = grace
        self._requested = threading.Event()
        self._lock = threading.Lock()

    def install(self) -> None:
        """Become the SIGTERM and SIGHUP handler (call from the main thread)."""
        for signum in SIGNALS:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self.request(128 + signum)

    def request(self, status: int) -> None:
        """Exit with ``status``: gracefully if the app can, else after the grace period."""
        with self._lock:
            again = self._requested.is_set()
            self._requested.set()
        if again:
            self._last_resort(status)
            return
        threading.Thread(
            target=self._wait_then_end, args=(status,), name="zcoder-exit-guard", daemon=True
        ).start()
        with contextlib.suppress(Exception):
            self.exit_app(status)

    def _wait_then_end(self, status: int) -> None:
        threading.Event().wait(self.grace)
        log.warning("the app did not exit within %.0f s; ending the process", self.grace)
        self._last_resort(status)

    def _last_resort(self, status: int) -> None:
        try:
            self.cleanup()
        except Exception:  # ending regardless: nothing here may keep the process alive
            log.exception("cleanup before the forced exit failed")
        finally:
            os._exit(status)
