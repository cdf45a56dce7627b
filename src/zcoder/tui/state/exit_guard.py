"""Leaving when told to, even when the terminal is gone.

SIGTERM and SIGHUP (the terminal closed, tmux killed its pane) ask the app to exit with
128 + the signal. Textual's exit writes to the terminal to restore it; with the terminal
gone, that write can block forever (Textual 8.2.8's writer queue), and a handler that
needs the event loop never runs again. So the handlers here are plain signal handlers, and
each request also starts a last-resort timer: if the app has not exited EXIT_GRACE_SECONDS
later, zcoder's own cleanup runs (the relay's files and socket removed, the session lock
released, tmux's option restored) and the process ends with the same status. A second
signal does that at once.

The last resort itself must end the process whatever a lock or a child process does. It
runs in a signal handler (the main thread, interrupted anywhere: inside a tmux call, holding
a lock the cleanup wants) or in the guard's thread, so: a watchdog thread, started with the
first request, ends the process at a deadline (the grace period plus LAST_RESORT_SECONDS;
a second signal brings it to LAST_RESORT_SECONDS from then) with ``os._exit``, taking no
lock on its way; the last resort never blocks on a lock (a cleanup already under way is left
to finish, not joined); and each step of the cleanup is bounded on its own (tmux calls, the
tmux option's lock taken without waiting).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Final

log = logging.getLogger(__name__)

EXIT_GRACE_SECONDS: Final = 3.0
LAST_RESORT_SECONDS: Final = 5.0
"""How long the last resort's cleanup may take before the process ends without it."""
WATCHDOG_TICK_SECONDS: Final = 0.1
"""How often the watchdog looks at its deadline, which a second signal may bring closer."""
SIGNALS: Final = (signal.SIGTERM, signal.SIGHUP)


class ExitGuard:
    """The SIGTERM and SIGHUP handlers of the process, and their last resort.

    One guard is active in a process (the one installed last, as the signal handlers
    are the process's); its two threads are the process's too, started once and idle
    until a request wakes them.
    """

    def __init__(
        self,
        exit_app: Callable[[int], None],
        cleanup: Callable[[], None],
        *,
        grace: float = EXIT_GRACE_SECONDS,
        last_resort_grace: float = LAST_RESORT_SECONDS,
    ) -> None:
        self.exit_app = exit_app  # thread-safe: asks the app to exit with that status
        self.cleanup = cleanup  # idempotent: what must not be left behind
        self.grace = grace
        self.last_resort_grace = last_resort_grace
        # Plain values and non-blocking acquires only: a signal handler may run in the
        # middle of any of this, in the thread that was doing it.
        self._requested = False
        self._status = 0
        self._end_at = math.inf  # when the watchdog ends the process (time.monotonic)
        self._cleaning = threading.Lock()

    def install(self) -> None:
        """Become the SIGTERM and SIGHUP handler (call from the main thread).

        The guard's threads start here if they are not running yet: a signal handler must
        not start threads (Thread.start takes locks the interrupted thread may hold)."""
        _Threads.activate(self)
        for signum in SIGNALS:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self.request(128 + signum)

    def request(self, status: int) -> None:
        """Exit with ``status``: gracefully if the app can, else after the grace period."""
        if self._requested:
            self._last_resort(status)
            return
        self._requested = True
        self._status = status
        self._end_at = time.monotonic() + self.grace + self.last_resort_grace
        _Threads.activate(self)  # a guard used without install (installed: nothing to do)
        _Threads.wake()
        with contextlib.suppress(Exception):
            self.exit_app(status)

    def wait_then_end(self) -> None:
        """The guard's thread, after the first request: EXIT_GRACE_SECONDS for the app,
        then the last resort."""
        threading.Event().wait(self.grace)
        log.warning("the app did not exit within %.0f s; ending the process", self.grace)
        self._last_resort(self._status)

    def _last_resort(self, status: int) -> None:
        """The cleanup, then the end. The watchdog ends the process LAST_RESORT_SECONDS
        from now at the latest, whatever the cleanup waits for."""
        self._status = status
        self._end_at = min(self._end_at, time.monotonic() + self.last_resort_grace)
        # A second signal may have interrupted the first one's handler before it woke the
        # watchdog (and this cleanup may never return): wake it from here too.
        _Threads.wake()
        if not self._cleaning.acquire(blocking=False):
            # A cleanup is under way: in another thread, or in this one, interrupted by
            # this signal. Waiting for it could be waiting for ourselves: the watchdog ends
            # the process if that cleanup does not.
            return
        try:
            self.cleanup()
        except Exception:  # ending regardless: nothing here may keep the process alive
            log.exception("cleanup before the forced exit failed")
        finally:
            os._exit(status)

    def watch(self) -> None:
        """The watchdog's thread, after the first request: ends the process at
        ``_end_at``. It only sleeps and reads two values: no lock, no I/O, nothing another
        thread (or a signal handler) can hold."""
        while True:
            left = self._end_at - time.monotonic()
            if left <= 0:
                os._exit(self._status)
            time.sleep(min(left, WATCHDOG_TICK_SECONDS))


class _Threads:
    """The guard's two threads, once per process. They wait for a byte on a pipe: a write
    is all a signal handler does to wake them, and it takes no lock (an Event's would be
    held by the very handler a second signal interrupts)."""

    active: ExitGuard | None = None
    wake_r = wake_w = -1

    @classmethod
    def activate(cls, guard: ExitGuard) -> None:
        cls.active = guard
        if cls.wake_w >= 0:
            return
        cls.wake_r, cls.wake_w = os.pipe()
        os.set_blocking(cls.wake_w, False)
        # The threads start with SIGTERM and SIGHUP blocked (a thread inherits the mask),
        # so that the kernel never hands those signals to them: a signal that lands in a
        # thread blocked in a system call does not wake the main thread, whose handler
        # would then run only when its own wait ends.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
        try:
            for name, job in (
                ("zcoder-exit-watchdog", ExitGuard.watch),
                ("zcoder-exit-guard", ExitGuard.wait_then_end),
            ):
                threading.Thread(target=cls._run, args=(job,), name=name, daemon=True).start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    @classmethod
    def wake(cls) -> None:
        """Wake both threads (a byte each); safe in a nested signal handler."""
        with contextlib.suppress(OSError):  # a full pipe: they are awake already
            os.write(cls.wake_w, b"\0\0")

    @classmethod
    def _run(cls, job: Callable[[ExitGuard], None]) -> None:
        os.read(cls.wake_r, 1)
        guard = cls.active
        if guard is not None:
            job(guard)
