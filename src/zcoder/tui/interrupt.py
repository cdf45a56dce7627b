"""What Ctrl+C does: the first press stops what runs, a second soon after quits.

* With a draft in the prompt (and no dialog open), a press clears the draft and does
  nothing else: the draft goes into the prompt history, so Up brings it back (the app
  does this before asking ``CtrlC``).

* While a turn runs (or a dialog is open), the first press stops it — a dialog is closed
  the way Escape closes it, as a refusal; Ctrl+C never approves anything — and the user
  is told that another press quits.
* A second press within ``QUIT_WINDOW_SECONDS`` of the first quits, whatever runs.
* When nothing runs, one press quits.

The clock is monotonic and injectable, so the window is tested without sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from enum import Enum
from typing import Final

__all__ = ["QUIT_AGAIN_TEXT", "QUIT_WINDOW_SECONDS", "CtrlC", "Press"]

QUIT_WINDOW_SECONDS: Final = 2.0
"""A second Ctrl+C this soon after one that stopped something quits."""
QUIT_AGAIN_TEXT: Final = "Press Ctrl+C again to quit"


class Press(Enum):
    STOP = "stop"  # stop the turn, close the dialog
    QUIT = "quit"


class CtrlC:
    """Decides what each Ctrl+C means."""

    def __init__(
        self,
        *,
        window: float = QUIT_WINDOW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.window = window
        self.clock = clock
        self._stopped_at: float | None = None

    def press(self, *, running: bool) -> Press:
        """One Ctrl+C; ``running``: a turn runs or a dialog is open."""
        now = self.clock()
        last, self._stopped_at = self._stopped_at, None
        if last is not None and now - last <= self.window:
            return Press.QUIT
        if running:
            self._stopped_at = now
            return Press.STOP
        return Press.QUIT
