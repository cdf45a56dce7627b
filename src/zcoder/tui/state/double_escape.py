"""Escape twice on an empty prompt, while nothing runs, opens /rewind (as Claude Code's).

Escape keeps its other meanings: while a turn runs it stops it (and holds what waits,
tui/parts/turns.py); in a dialog, a search or the sessions list it is theirs. Only a
press with nothing running, no dialog open and nothing typed counts: the first one
primes (and the app says what a second does), a second within
``REWIND_WINDOW_SECONDS`` opens the list. A press that stopped a turn counts for
nothing, so Escape Escape on a running turn stops it and does not rewind.

The clock is monotonic and injectable; the window is read when a ``DoubleEscape`` is
made, so a test of the real program can set it (tests/fixtures/zcoder_patched.py). Two
ESC bytes arriving together reach the app as two presses once the terminal's ESC delay
has passed (zcoder.tui.terminal), well within the window.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

__all__ = ["REWIND_AGAIN_TEXT", "REWIND_WINDOW_SECONDS", "DoubleEscape"]

REWIND_WINDOW_SECONDS = 1.0
"""A second Escape this soon after the first opens /rewind."""
REWIND_AGAIN_TEXT = "Press Escape again to rewind to an earlier prompt"


class DoubleEscape:
    """Decides whether an Escape opens /rewind."""

    def __init__(
        self, *, window: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.window = REWIND_WINDOW_SECONDS if window is None else window
        self.clock = clock
        self._primed_until = -math.inf  # a press that counts until then opens /rewind

    def press(self, *, counts: bool) -> bool:
        """One Escape; ``counts``: idle, no dialog, an empty prompt. True: open /rewind."""
        now = self.clock()
        opens = counts and now <= self._primed_until
        self._primed_until = now + self.window if counts and not opens else -math.inf
        return opens

    @property
    def primed(self) -> bool:
        return self.clock() <= self._primed_until
