"""The terminal's title: ``zcoder · <project> · <state>``, so a window or tmux pane says
whether this zcoder works or waits for you.

The title is set with OSC 2 (inside tmux it is the pane's title) and only when the state
changes, never per spinner frame. The terminal's own title is pushed on its title stack
at start (``CSI 22;0t``) and popped at exit (``CSI 23;0t``); a terminal without the stack
ignores both and keeps zcoder's last title.

The project's name comes from the file system: every control character is made a
visible escape (``\\e``, ``\\x07``, ``\\x9c``...) so that nothing in it can end the OSC
early and write to the terminal.
"""

from __future__ import annotations

from typing import Any, Final

from zcoder.base.sanitize import visible

__all__ = [
    "MAX_TITLE_CHARS",
    "TITLE_POP",
    "TITLE_PUSH",
    "TerminalTitle",
    "title_sequence",
    "title_text",
]

TITLE_PUSH: Final = "\x1b[22;0t"
"""XTWINOPS: save the icon name and the window title on the terminal's title stack."""
TITLE_POP: Final = "\x1b[23;0t"
"""XTWINOPS: restore them from the stack."""
MAX_TITLE_CHARS: Final = 120
"""Longer titles are cut (with an ellipsis): no terminal shows more."""


def title_text(project: str, state: str) -> str:
    """``zcoder · project · state``, one line with no control character in it."""
    text = visible(f"zcoder · {project} · {state}")
    if len(text) > MAX_TITLE_CHARS:
        text = text[: MAX_TITLE_CHARS - 1] + "…"
    return text


def title_sequence(title: str) -> str:
    """The OSC 2 that sets the window (or tmux pane) title; ``title`` is made safe here
    too, whoever built it."""
    return f"\x1b]2;{visible(title)}\x07"


class TerminalTitle:
    """Writes the title through the app's driver: pushed at start, set on each change of
    state, popped at exit. Headless apps (tests under Pilot) write nothing."""

    def __init__(self, project: str) -> None:
        self.project = project
        self.current: str | None = None
        self.written: list[str] = []  # what was sent, in order (for tests and debugging)
        self._app: Any = None

    def start(self, app: Any) -> None:
        """Save the terminal's title; ``app`` is the Textual app whose driver writes."""
        self._app = app
        self._write(TITLE_PUSH)

    def show(self, state: str) -> None:
        title = title_text(self.project, state)
        if title == self.current or self._app is None:
            return
        self.current = title
        self._write(title_sequence(title))

    def restore(self) -> None:
        if self._app is not None:
            self._write(TITLE_POP)
            self._app = None

    def _write(self, data: str) -> None:
        app = self._app
        if app is None:
            return
        self.written.append(data)
        # Textual has no public way to write to the terminal; its own bell and clipboard
        # go through the driver the same way. Headless drivers write nothing.
        driver = getattr(app, "_driver", None)
        if driver is not None and not app.is_headless:
            driver.write(data)
