"""Calling the user back: a turn ended, or a question waits, while zcoder's terminal does
not have focus (ZCODER_NOTIFY).

Focus comes from the terminal's focus reports (``CSI ? 1004 h``, which Textual's driver
asks for: ``ESC [ I`` focus in, ``ESC [ O`` focus out; Textual keeps ``app.app_focus``).
A terminal that never reports focus is taken to have it, so nothing is said there.

``desktop`` (the default) writes a desktop notification through the terminal and rings
the bell; ``bell`` rings only the bell; ``off`` says nothing. The notification is OSC 777
(``ESC ] 777 ; notify ; TITLE ; BODY BEL``: WezTerm, Ghostty, foot, kitty, rxvt's notify
extension, VTE with its patch) or, for iTerm2, which takes only OSC 9, ``ESC ] 9 ; BODY
BEL``; a terminal that knows neither ignores it. Inside tmux an OSC reaches the terminal
outside only through tmux's passthrough (``ESC P tmux; ... ESC \\``, every ESC doubled),
which tmux allows only with ``allow-passthrough on``; without it only the bell is sent
(tmux passes a bell on, and marks the window). The words are zcoder's own, never a model's
or a peer's text, and made visible and short (``zcoder.base.sanitize``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from typing import Any, Final

from zcoder.base.sanitize import bounded, visible

__all__ = ["BELL", "MAX_NOTICE_CHARS", "Notifier", "notification", "tmux_wrapped"]

BELL: Final = "\x07"
MAX_NOTICE_CHARS: Final = 80


def _clean(text: str, limit: int) -> str:
    # ";" separates OSC 777's fields; a visible text has no control left to end the OSC.
    return bounded(visible(text).replace(";", ","), limit)


def tmux_wrapped(sequence: str) -> str:
    """``sequence`` in tmux's passthrough: DCS ``tmux;``, each ESC doubled, ST."""
    return "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"


def notification(
    mode: str, title: str, body: str, *, iterm: bool = False, tmux: str | None = None
) -> str:
    """What to write for ``mode`` (off, bell, desktop). ``iterm``: OSC 9 in place of OSC
    777. ``tmux``: None outside tmux, else its ``allow-passthrough`` as its format says
    (``1`` or ``0`` for tmux 3.3's flag; ``on``, ``all`` or ``off`` for 3.4's choice;
    ``""`` unknown): the OSC is wrapped, or left out when tmux would drop it."""
    if mode == "off":
        return ""
    if mode != "desktop":
        return BELL
    title, body = _clean(title, 40), _clean(body, MAX_NOTICE_CHARS)
    osc = f"\x1b]9;{title}: {body}\x07" if iterm else f"\x1b]777;notify;{title};{body}\x07"
    if tmux is not None:
        osc = tmux_wrapped(osc) if tmux in ("1", "on", "all") else ""
    return osc + BELL


def _tmux_passthrough(env: Mapping[str, str]) -> str | None:
    """None outside tmux; else the pane's ``allow-passthrough`` (``""`` when unknown)."""
    if not env.get("TMUX"):
        return None
    tmux = shutil.which("tmux")
    pane = env.get("TMUX_PANE", "")
    if tmux is None or not pane:
        return ""
    try:
        done = subprocess.run(
            [tmux, "display-message", "-p", "-t", pane, "#{allow-passthrough}"],
            capture_output=True,
            text=True,
            timeout=2,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


class Notifier:
    """Writes the call-back through the app's driver when the terminal has no focus.
    Headless apps (tests under Pilot) write nothing; ``written`` keeps what was sent."""

    def __init__(self, mode: str, title: str, env: Mapping[str, str] | None = None) -> None:
        self.mode = mode
        self.title = title
        self.env = dict(os.environ if env is None else env)
        self.written: list[str] = []
        self._app: Any = None
        self._tmux: str | None = None
        self._asked_tmux = False
        terminal = self.env.get("LC_TERMINAL", "") + self.env.get("TERM_PROGRAM", "")
        self.iterm = "iterm" in terminal.lower()  # iTerm2 sets both (LC_ passes ssh)

    def start(self, app: Any) -> None:
        self._app = app

    def call_back(self, body: str) -> None:
        """Tell the user ``body`` (zcoder's words), unless the terminal has focus."""
        app = self._app
        if app is None or self.mode == "off" or getattr(app, "app_focus", True):
            return
        if not self._asked_tmux and self.mode == "desktop":
            self._tmux, self._asked_tmux = _tmux_passthrough(self.env), True
        data = notification(self.mode, self.title, body, iterm=self.iterm, tmux=self._tmux)
        self.written.append(data)
        driver = getattr(app, "_driver", None)  # as TerminalTitle and Textual's bell write
        if driver is not None and not app.is_headless:
            driver.write(data)
