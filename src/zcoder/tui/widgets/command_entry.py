"""A command in the transcript: a run_command call or a ``!command`` the user typed.

Its output streams in while it runs (redrawn at most every COMMAND_REFRESH_SECONDS); the
entry shows the last lines, and the whole output (tui/state/command_output.py) is one key away
(FULL_OUTPUT_KEY, tui/dialogs/output.py).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.timer import Timer

from zcoder.base.plural import counted
from zcoder.tui.state.command_output import CommandOutput
from zcoder.tui.widgets.entries import MAX_TOOL_PREVIEW_LINES, Entry, _shell_header, _tool_header
from zcoder.tui.widgets.shared import screen_safe

FULL_OUTPUT_KEY = "ctrl+t"
FULL_OUTPUT_KEY_LABEL = "Ctrl+T"
COMMAND_REFRESH_SECONDS = 0.08
"""A running command's entry is redrawn at most this often, however fast it prints."""
PREVIEW_LINE_CHARS = 400
"""A longer output line is cut in the entry's preview (the full output has all of it)."""


class CommandEntry(Entry):
    """A command and its output: a run_command call (role "tool") or a command the user
    typed (role "shell").

    Output arrives in pieces (``append``) and is redrawn at most every
    ``COMMAND_REFRESH_SECONDS``; the entry shows the last ``MAX_TOOL_PREVIEW_LINES`` lines
    and how many came before, and ``output`` keeps all of it (bounded) for the
    full-output screen. ``finish`` keeps what was printed and adds how the command ended.
    """

    DEFAULT_CSS = """
    CommandEntry.shell { color: $text; border-left: thick $warning; }
    """

    def __init__(
        self,
        role: str,
        *,
        command: str,
        name: str = "",
        arguments: dict[str, Any] | None = None,
        status: str = "running",
    ) -> None:
        self.command = command
        self.user_command = role == "shell"
        self.tool_name = name
        self.arguments = dict(arguments or {})
        self.command_status = status
        self.output = CommandOutput()
        self.trailer = ""  # how it ended, e.g. "[exit code 0]", shown below the output
        self._redraw: Timer | None = None
        super().__init__(role, self._body())

    @classmethod
    def for_tool(
        cls, name: str, arguments: dict[str, Any], status: str = "running"
    ) -> CommandEntry:
        return cls(
            "tool",
            command=str(arguments.get("command", "")),
            name=name,
            arguments=arguments,
            status=status,
        )

    @classmethod
    def for_user(cls, command: str, status: str = "running") -> CommandEntry:
        return cls("shell", command=command, status=status)

    @property
    def running(self) -> bool:
        return self.command_status == "running"

    def _header(self) -> Text:
        if self.user_command:
            return _shell_header(self.command, self.command_status)
        return _tool_header(self.tool_name, self.arguments, self.command_status)

    def _body(self) -> Text:
        text = self._header()
        lines, earlier = self.output.tail(MAX_TOOL_PREVIEW_LINES)
        if earlier:
            text.append(
                f"\n… {counted(earlier, 'earlier line')} · {FULL_OUTPUT_KEY_LABEL} shows the "
                "whole output",
                style="dim",
            )
        for line in lines:
            cut = line if len(line) <= PREVIEW_LINE_CHARS else line[: PREVIEW_LINE_CHARS - 1] + "…"
            text.append("\n" + screen_safe(cut))
        if self.trailer:
            text.append("\n" + screen_safe(self.trailer), style="bold")
        return text

    def append(self, text: str) -> None:
        """Output the command just printed; drawn with the next redraw."""
        self.output.feed(text)
        if self._redraw is None:
            self._redraw = self.set_timer(COMMAND_REFRESH_SECONDS, self._draw)

    def _draw(self) -> None:
        self._redraw = None
        # A transcript at its end stays there as the entry grows: the newest output shows.
        parent = self.parent
        follow = isinstance(parent, VerticalScroll) and (
            parent.is_vertical_scroll_end or parent.max_scroll_y == 0
        )
        self.show_text(self._body())
        if follow and isinstance(parent, VerticalScroll):
            parent.call_after_refresh(parent.scroll_end, animate=False)

    def finish(self, status: str, result: str) -> None:
        """The command ended: ``result`` is what the conversation records (its output,
        bounded, then how it ended on a last line in brackets)."""
        if self._redraw is not None:
            self._redraw.stop()
            self._redraw = None
        self.command_status = status
        if self.output.total == 0:
            self.output.feed(result)  # it printed nothing, or never ran (an error)
        else:
            last = result.rstrip().rsplit("\n", 1)[-1]
            self.trailer = last if last.startswith("[") and last.endswith("]") else ""
        self._draw()

    def full_text(self) -> str:
        """All of the output kept, and how the command ended."""
        text = self.output.text()
        return f"{text.rstrip()}\n{self.trailer}" if self.trailer else text
