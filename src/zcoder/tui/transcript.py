"""The transcript: its entries (user, assistant, tool, relay, system, error, and shell:
a command the user typed) and the scrolling container that holds them.

Commands (run_command calls and the user's ``!commands``) are ``CommandEntry``s: their
output streams in while they run, the entry shows its last lines, and the whole output
(tui/command_output.py) is one key away (tui/output_screen.py).

All text from the model, tools and peers is rendered as ``rich.text.Text``, never as
markup, and passes ``screen_safe`` first.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.timer import Timer
from textual.widgets import Static

from zcoder.relay.display import visible
from zcoder.tui.command_output import CommandOutput
from zcoder.tui.diff_view import diff_text
from zcoder.tui.widgets import screen_safe

MAX_TOOL_PREVIEW_LINES = 12
FULL_OUTPUT_KEY = "ctrl+t"
FULL_OUTPUT_KEY_LABEL = "Ctrl+T"
COMMAND_REFRESH_SECONDS = 0.08
"""A running command's entry is redrawn at most this often, however fast it prints."""
PREVIEW_LINE_CHARS = 400
"""A longer output line is cut in the entry's preview (the full output has all of it)."""


class Entry(Static):
    """One transcript entry; ``role`` is its CSS class."""

    DEFAULT_CSS = """
    Entry { margin: 0 0 1 0; padding: 0 1; }
    Entry.user { border-left: thick $accent; }
    Entry.assistant { border-left: thick $success; }
    Entry.tool { color: $text-muted; border-left: thick $secondary; }
    Entry.system { color: $text-muted; text-style: italic; }
    Entry.error { color: $error; border-left: thick $error; }
    Entry.relay { border: round magenta; background: $boost; padding: 0 1; }
    Entry.receipt { border-left: thick magenta; color: $text-muted; }
    Entry.thinking { color: $text-muted; text-style: italic; }
    Entry.diff { border-left: thick $warning; }
    """

    def __init__(self, role: str, body: Text) -> None:
        super().__init__(body, classes=role)
        self.role = role
        self.plain = body.plain  # what the entry says, for tests and copy

    def show_text(self, body: Text) -> None:
        self.plain = body.plain
        self.update(body)


def _label(text: str, style: str) -> Text:
    return Text(text, style=style)


def user_text(text: str) -> Text:
    return Text.assemble(_label("you\n", "bold"), screen_safe(text))


def assistant_text(text: str, *, partial: bool = False) -> Text:
    label = "assistant (stopped, partial)\n" if partial else "assistant\n"
    return Text.assemble(_label(label, "bold green"), screen_safe(text))


THINKING_PREVIEW_CHARS = 240


def thinking_text(text: str) -> Text:
    """The model's reasoning while it streams: only its latest part, on a few lines."""
    tail = " ".join(text.split())[-THINKING_PREVIEW_CHARS:]
    return Text.assemble(_label("thinking… ", "bold"), screen_safe(tail))


def system_text(text: str) -> Text:
    return Text(screen_safe(text))


def error_text(text: str) -> Text:
    return Text.assemble(_label("error: ", "bold"), screen_safe(text))


def relay_text(project: str, pid: int | str, workspace: str, instance_id: str, body: str) -> Text:
    head = f"⇄ relayed task from {visible(project)} (pid {pid}) · {visible(workspace)}"
    return Text.assemble(
        _label(head + "\n", "bold magenta"),
        _label(f"instance {visible(instance_id)}\n", "dim"),
        screen_safe(body),
    )


def _status_icon(status: str) -> str:
    return {"running": "…", "completed": "✓", "failed": "✗", "interrupted": "■"}.get(status, "·")


def _tool_header(name: str, arguments: dict[str, Any], status: str) -> Text:
    args = screen_safe(json.dumps(arguments, ensure_ascii=False))
    if len(args) > 300:
        args = args[:299] + "…"
    return Text.assemble(
        _label(f"{_status_icon(status)} {screen_safe(name)}", "bold"),
        " ",
        args,
        _label(f" — {status}", "italic"),
    )


def tool_text(
    name: str, arguments: dict[str, Any], status: str, output: str = "", diff: str = ""
) -> Text:
    """A tool call; ``diff`` is an edit's capped diff (tool metadata), shown coloured."""
    text = _tool_header(name, arguments, status)
    if output:
        lines = screen_safe(output).rstrip().split("\n")
        shown = lines[:MAX_TOOL_PREVIEW_LINES]
        text.append("\n" + "\n".join(shown))
        if len(lines) > len(shown):
            text.append(f"\n… {len(lines) - len(shown)} more lines", style="dim")
    if diff:
        text.append("\n")
        text.append_text(diff_text(diff))
    return text


def receipt_text_for_user(outcome: str, who: str, summary: str) -> str:
    """What a receipt says in the transcript (and in the saved session)."""
    return f"{who}: {outcome}" + (f" — {summary}" if summary else "")


def receipt_text(text: str) -> Text:
    return Text.assemble(_label("⇄ receipt ", "bold magenta"), screen_safe(text))


def _shell_header(command: str, status: str) -> Text:
    shown = screen_safe(command)
    if len(shown) > 300:
        shown = shown[:299] + "…"
    return Text.assemble(
        _label(f"{_status_icon(status)} $ ", "bold"),
        _label(shown, "bold"),
        _label(f" — {status}", "italic"),
    )


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
            plural = "" if earlier == 1 else "s"
            text.append(
                f"\n… {earlier:,} earlier line{plural} · {FULL_OUTPUT_KEY_LABEL} shows the "
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


def _saved_status(metadata: dict[str, Any]) -> str:
    status = str(metadata.get("status", "completed"))
    return "interrupted" if metadata.get("not_executed") else status


def entry_for_event(role: str, text: str, metadata: dict[str, Any]) -> Entry:
    """The one mapping from a saved transcript event to what the screen shows."""
    if role == "user":
        return Entry("user", user_text(text))
    if role == "assistant":
        return Entry("assistant", assistant_text(text, partial=bool(metadata.get("partial"))))
    if role == "tool" and metadata.get("user_command"):
        entry = CommandEntry.for_user(str(metadata.get("command", "")), _saved_status(metadata))
        entry.finish(entry.command_status, text)
        return entry
    if (
        role == "tool"
        and metadata.get("name") == "run_command"
        and not metadata.get("not_executed")
    ):
        entry = CommandEntry.for_tool(
            "run_command", dict(metadata.get("arguments") or {}), _saved_status(metadata)
        )
        entry.finish(entry.command_status, text)
        return entry
    if role == "tool":
        status = _saved_status(metadata)
        return Entry(
            "tool",
            tool_text(
                str(metadata.get("name", "tool")),
                dict(metadata.get("arguments") or {}),
                status,
                text,
                str(metadata.get("diff") or ""),
            ),
        )
    if role == "relay":
        return Entry(
            "relay",
            relay_text(
                str(metadata.get("sender_project", "?")),
                metadata.get("sender_pid", "?"),
                str(metadata.get("sender_workspace", "?")),
                str(metadata.get("sender_instance_id", "?")),
                text,
            ),
        )
    if role == "receipt":
        return Entry("receipt", receipt_text(text))
    if role == "error":
        return Entry("error", error_text(text))
    return Entry("system", system_text(text))


class Transcript(VerticalScroll):
    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1; }
    """

    def add(self, entry: Entry) -> Entry:
        at_end = self.is_vertical_scroll_end or self.max_scroll_y == 0
        self.mount(entry)
        if at_end:
            self.call_after_refresh(self.scroll_end, animate=False)
        return entry

    def clear(self) -> None:
        self.remove_children()
