"""The whole output of a command, or a tool call's arguments and result, one key away
(Ctrl+T, or /output).

Opens on the newest of the transcript's commands (a run_command call or a ``!command``) and
other tool calls (all their arguments, then their result); ``p`` and ``n`` go to older and
newer ones. The output is shown in a ``Log``: it draws only
the lines in view, so the largest output the transcript keeps (a million characters, maybe
half a million lines) opens at once. It scrolls (arrows, PageUp/PageDown, Home/End, the
wheel), can be selected with the mouse and copied, and starts at its end, where a command
says how it went. While the command runs, its new output is added: at the end if the view
was there, else the view stays where the reader left it.
"""

from __future__ import annotations

import time
from typing import ClassVar, Final

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Log, Static

from zcoder.tui.state.command_output import as_printed
from zcoder.tui.widgets.shared import screen_safe
from zcoder.tui.widgets.transcript import FULL_OUTPUT_KEY, CommandEntry, ToolEntry

__all__ = ["FOLLOW_SECONDS", "OutputScreen", "readable_lines"]

FOLLOW_SECONDS: Final = 0.3
"""How often the screen looks for new output of a command that is still running."""
FOLLOW_COST_FACTOR: Final = 4
"""A reload that took t seconds is not repeated for FOLLOW_COST_FACTOR × t: a flood of
output is followed less often, and the screen stays responsive."""
KEYS_TEXT: Final = (
    "Esc/q close · p older command · n newer command · arrows, PgUp/PgDn, Home/End scroll"
)


def readable_lines(text: str) -> list[str]:
    """Output as a terminal would have left it on screen, made safe to show, by line."""
    return [screen_safe(as_printed(line)) for line in text.replace("\r\n", "\n").split("\n")]


class OutputScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    OutputScreen { align: center middle; }
    OutputScreen > Vertical {
        width: 96%; height: 92%; border: thick $secondary; background: $panel; padding: 0 1;
    }
    OutputScreen .title { text-style: bold; height: auto; }
    OutputScreen Log {
        height: 1fr; background: $boost; overflow-x: auto; overflow-y: scroll;
    }
    OutputScreen .keys { color: $text-muted; height: auto; }
    """
    # The horizontal scroll bar only when a line is wider than the view (a Log always has
    # one): in a small terminal it took a row from an output that fits, which then opened
    # scrolled past its first line. The keys wrap rather than being cut.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding(FULL_OUTPUT_KEY, "close", "Close", show=False),
        Binding("p", "older", "Older command"),
        Binding("n", "newer", "Newer command"),
    ]

    def __init__(self, commands: list[CommandEntry | ToolEntry], index: int | None = None) -> None:
        super().__init__()
        if not commands:
            raise ValueError("there is no command output to show")
        self.commands = commands
        self.index = len(commands) - 1 if index is None else index
        self._shown: tuple[int, int, str, str] | None = None  # what is on screen
        self._next_follow = 0.0
        self._title = Static(classes="title")
        self._view = Log(auto_scroll=False)

    @property
    def command(self) -> CommandEntry | ToolEntry:
        return self.commands[self.index]

    @property
    def lines(self) -> list[str]:
        """The lines on screen (for tests)."""
        return list(self._view.lines)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield self._title
            yield self._view
            yield Static(KEYS_TEXT, classes="keys")

    def on_mount(self) -> None:
        self._show()
        self._view.focus()
        self.set_interval(FOLLOW_SECONDS, self._follow)

    def _state(self) -> tuple[int, int, str, str]:
        command = self.command
        return (self.index, command.output.total, command.command_status, command.trailer)

    def _show(self, *, keep_place: bool = False) -> None:
        started = time.monotonic()
        command = self.command
        what = f"$ {command.command}" if command.user_command else command.tool_name
        if not command.user_command and command.command:
            what += f": {command.command}"
        first_line = what.split("\n", 1)[0]
        if len(first_line) > 200 or "\n" in what:
            first_line = first_line[:199] + "…"
        self._title.update(
            Text(
                f"{screen_safe(first_line)} — {command.command_status} "
                f"({self.index + 1} of {len(self.commands)})"
            )
        )
        self._shown = self._state()
        view = self._view
        place = view.scroll_offset
        view.clear()
        view.write_lines(readable_lines(command.full_text().removesuffix("\n")), scroll_end=False)
        if keep_place:
            view.scroll_to(place.x, place.y, animate=False, immediate=True)
        else:
            # Again once laid out: on opening, the view's height is not known yet.
            view.scroll_end(animate=False, immediate=True)
            self.call_after_refresh(view.scroll_end, animate=False, immediate=True)
        cost = time.monotonic() - started
        self._next_follow = time.monotonic() + FOLLOW_COST_FACTOR * cost

    def _follow(self) -> None:
        """A running command's new output (and its end) shows up while the screen is open."""
        if self._state() == self._shown or time.monotonic() < self._next_follow:
            return
        self._show(keep_place=not self._view.is_vertical_scroll_end)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_older(self) -> None:
        if self.index > 0:
            self.index -= 1
            self._show()

    def action_newer(self) -> None:
        if self.index < len(self.commands) - 1:
            self.index += 1
            self._show()
