"""The whole output of a command, one key away (Ctrl+T, or /output).

Opens on the newest command of the transcript (a run_command call or a ``!command``);
``p`` and ``n`` go to older and newer ones. The output is read-only text that scrolls
(arrows, PageUp/PageDown, the wheel), can be selected and copied, and starts at its end,
where a command says how it went. While the command runs, new output is added as it comes.
"""

from __future__ import annotations

from typing import ClassVar, Final

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from zcoder.tui.command_output import as_printed
from zcoder.tui.transcript import FULL_OUTPUT_KEY, CommandEntry
from zcoder.tui.widgets import screen_safe

__all__ = ["FOLLOW_SECONDS", "OutputScreen", "readable"]

FOLLOW_SECONDS: Final = 0.3
"""How often the screen adds the new output of a command that is still running."""
KEYS_TEXT: Final = "Esc/q close · p older command · n newer command · arrows, PgUp/PgDn scroll"


def readable(text: str) -> str:
    """Output as a terminal would have left it on screen, made safe to show."""
    lines = text.replace("\r\n", "\n").split("\n")
    return screen_safe("\n".join(as_printed(line) for line in lines))


class OutputScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    OutputScreen { align: center middle; }
    OutputScreen > Vertical {
        width: 96%; height: 92%; border: thick $secondary; background: $panel; padding: 0 1;
    }
    OutputScreen .title { text-style: bold; height: auto; }
    OutputScreen TextArea { height: 1fr; }
    OutputScreen .keys { color: $text-muted; height: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding(FULL_OUTPUT_KEY, "close", "Close", show=False),
        Binding("p", "older", "Older command"),
        Binding("n", "newer", "Newer command"),
    ]

    def __init__(self, commands: list[CommandEntry], index: int | None = None) -> None:
        super().__init__()
        if not commands:
            raise ValueError("there is no command output to show")
        self.commands = commands
        self.index = len(commands) - 1 if index is None else index
        self._shown: tuple[int, int, str, str] | None = None  # what is on screen
        self._title = Static(classes="title")
        self._view = TextArea(read_only=True, soft_wrap=True, show_line_numbers=False)

    @property
    def command(self) -> CommandEntry:
        return self.commands[self.index]

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
                f"(command {self.index + 1} of {len(self.commands)})"
            )
        )
        self._shown = self._state()
        view = self._view
        cursor, scroll = view.cursor_location, view.scroll_offset
        view.load_text(readable(command.full_text()))
        if keep_place:
            view.move_cursor(cursor)
            view.scroll_to(scroll.x, scroll.y, animate=False)
        else:
            view.move_cursor(view.document.end)
            view.scroll_end(animate=False)

    def _follow(self) -> None:
        """A running command's new output (and its end) shows up while the screen is open;
        the view stays at the end if it was there, else where the reader left it."""
        if self._state() == self._shown:
            return
        self._show(keep_place=self._view.cursor_location != self._view.document.end)

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
