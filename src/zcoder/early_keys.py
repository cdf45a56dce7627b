"""Keys typed while the interactive zcoder starts: kept for the prompt, never echoed.

From the moment the shell starts zcoder until its app reads the terminal, the terminal is
in the shell's cooked mode: what the user types is echoed onto the screen by the terminal
itself (and left in the shell's screen after zcoder exits), and line editing holds it.
That can be seconds: ``--gguf`` (``make demo``) loads a model before the app starts.

``hold`` is called as soon as zcoder knows it will run its app (zcoder.cli): echo and line
editing go off, so keys typed from then on stay unseen in the terminal's input queue,
byte for byte, until the app reads them into the prompt (its driver, tui/terminal.py,
reads nothing before the prompt has the focus). Ctrl+C still interrupts the start (ISIG
stays on). The terminal's own settings are put back when zcoder exits however it exits
in Python (``atexit``), and the app's driver restores those, not the held ones, when it
stops or suspends (``original``).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import termios
from typing import Any

__all__ = ["hold", "original", "release"]

_held: tuple[int, list[Any]] | None = None  # the terminal's descriptor and its settings


def hold(fd: int | None = None) -> bool:
    """Echo and line editing off on the terminal (standard input by default), if it is
    one; whether they were turned off now."""
    global _held
    if _held is not None:
        return False
    if fd is None:
        fd = sys.stdin.fileno()
    try:
        if not os.isatty(fd):
            return False
        before = termios.tcgetattr(fd)
        held = termios.tcgetattr(fd)
        held[3] &= ~(termios.ECHO | termios.ECHONL | termios.ICANON)
        held[6][termios.VMIN], held[6][termios.VTIME] = 1, 0
        termios.tcsetattr(fd, termios.TCSANOW, held)  # TCSANOW: typed keys stay queued
    except (termios.error, OSError, ValueError):  # not a terminal that lets us: no hold
        return False
    _held = (fd, before)
    atexit.register(release)
    return True


def original() -> list[Any] | None:
    """The terminal's settings from before ``hold`` (a copy), or None when nothing is
    held: what the app's driver puts back when it stops."""
    if _held is None:
        return None
    attributes = list(_held[1])
    attributes[6] = list(attributes[6])
    return attributes


def release() -> None:
    """Put the terminal's own settings back (idempotent)."""
    global _held
    held, _held = _held, None
    if held is None:
        return
    with contextlib.suppress(termios.error, OSError):
        termios.tcsetattr(held[0], termios.TCSANOW, held[1])
