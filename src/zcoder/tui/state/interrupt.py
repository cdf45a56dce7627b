"""What Ctrl+C does: the first press stops what runs, or says that a second one quits;
a second press soon after quits.

* With a draft in the prompt (and no dialog open), a press clears the draft and does
  nothing else: the draft goes into the prompt history, so Up brings it back (the app
  does this before asking ``CtrlC``).

* While a turn runs (or a dialog is open), the first press stops it — a dialog is closed
  the way Escape closes it, as a refusal; Ctrl+C never approves anything — and the user
  is told that another press quits.
* When nothing runs, the first press only says that another press quits (as Claude Code
  does): a Ctrl+C typed to clear a prompt already empty, or out of habit from a shell,
  does not end the session.
* A second press within ``QUIT_WINDOW_SECONDS`` of the first quits, whatever runs.

The clock is monotonic and injectable, so the window is tested without sleeping; the
window is read from ``QUIT_WINDOW_SECONDS`` when a ``CtrlC`` is made, so a test of the
real program can set it (tests/fixtures/zcoder_patched.py) instead of racing a clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from enum import Enum

__all__ = ["QUIT_AGAIN_TEXT", "QUIT_WINDOW_SECONDS", "CtrlC", "Press"]

QUIT_WINDOW_SECONDS = 2.0
"""A second Ctrl+C this soon after the first quits."""
QUIT_AGAIN_TEXT = "Press Ctrl+C again to quit"


class Press(Enum):
    STOP = "stop"  # stop the turn, close the dialog; another press quits
    WARN = "warn"  # nothing to stop: say that another press quits
    QUIT = "quit"


class CtrlC:
    """Decides what each Ctrl+C means."""

    def __init__(
        self,
        *,
        window: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``window``: QUIT_WINDOW_SECONDS (as it is now) unless given."""
        self.window = QUIT_WINDOW_SECONDS if window is None else window
        self.clock = clock
        self._pressed_at: float | None = None

    def press(self, *, running: bool) -> Press:
        """One Ctrl+C; ``running``: a turn runs or a dialog is open."""
        now = self.clock()
        last, self._pressed_at = self._pressed_at, None
        if last is not None and now - last <= self.window:
            return Press.QUIT
        self._pressed_at = now
        return Press.STOP if running else Press.WARN

    def forget(self) -> None:
        """A press that did neither (it cleared a draft): the next one starts afresh."""
        self._pressed_at = None
