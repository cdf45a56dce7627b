"""Transcript entries: the ``Entry`` widget and the text of each kind of entry.

Everything from the model, tools and peers passes ``screen_safe`` here and is never read
as Rich markup: an entry's body is a ``rich.text.Text``. Assistant replies
(tui/widgets/assistant_entry.py) and commands (tui/widgets/command_entry.py) are entries of
their own kinds; the transcript that holds them all is tui/widgets/transcript.py.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.widgets import Static

from zcoder.agent.headings import call_heading
from zcoder.base.plural import counted
from zcoder.base.sanitize import visible
from zcoder.relay import from_words, sender_words
from zcoder.tui.state.command_output import CommandOutput
from zcoder.tui.widgets.diff_view import diff_text
from zcoder.tui.widgets.shared import screen_safe

MAX_TOOL_PREVIEW_LINES = 12


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


def user_text(text: str, *, steering: bool = False) -> Text:
    """The user's words; ``steering``: typed while a turn ran, landed at a safe point."""
    label = _label("you ↪ steering\n", "bold yellow") if steering else _label("you\n", "bold")
    return Text.assemble(label, screen_safe(text))


def _assistant_label(partial: bool) -> Text:
    return _label("assistant (stopped, partial)" if partial else "assistant", "bold green")


def assistant_text(text: str, *, partial: bool = False) -> Text:
    """An assistant reply as plain text (what ``Entry.plain`` holds for it)."""
    return Text.assemble(_assistant_label(partial), "\n", screen_safe(text))


THINKING_PREVIEW_CHARS = 240


def thinking_text(text: str) -> Text:
    """The model's reasoning while it streams: only its latest part, on a few lines."""
    tail = " ".join(text.split())[-THINKING_PREVIEW_CHARS:]
    return Text.assemble(_label("thinking… ", "bold"), screen_safe(tail))


def system_text(text: str) -> Text:
    return Text(screen_safe(text))


def error_text(text: str) -> Text:
    return Text.assemble(_label("error: ", "bold"), screen_safe(text))


def relay_text(
    project: str,
    pid: int | str,
    workspace: str,
    instance_id: str,
    body: str,
    *,
    kind: str = "",
    steered: bool = False,
) -> Text:
    # Who sent it, as the receiver verified it (zcoder.relay.standing): an interactive
    # instance, `zcoder send` (its working directory), or an unverified sender.
    if not kind:  # a session saved before senders were verified
        head = f"⇄ relayed task from {visible(project)} (pid {pid}) · {visible(workspace)}"
    else:
        label = sender_words(kind, project, pid, workspace)
        head = f"⇄ relayed task {visible(from_words(kind, label))}"
    if steered:  # a trusted peer's words that reached the running turn
        head = head.replace("⇄ relayed task", "⇄ ↪ steering relayed", 1)
    return Text.assemble(
        _label(head + "\n", "bold magenta"),
        _label(f"instance {visible(instance_id)}\n", "dim"),
        screen_safe(body),
    )


def _status_icon(status: str) -> str:
    return {"running": "…", "completed": "✓", "failed": "✗", "interrupted": "■"}.get(status, "·")


ARGUMENTS_HINT = "Ctrl+T: all arguments"
"""Said after a call's heading when the heading leaves some of its arguments out."""


def _tool_header(name: str, arguments: dict[str, Any], status: str) -> Text:
    heading = screen_safe(call_heading(name, arguments))
    if name == "run_command":
        heading = "$ " + heading
    if len(heading) > 300:
        heading = heading[:299] + "…"
    said = status
    if name == "run_command" and arguments.get("background") is True and status == "completed":
        said = "started in the background"  # it goes on running: /jobs shows it
    text = Text.assemble(
        _label(f"{_status_icon(status)} ", "bold"),
        _label(heading, "bold"),
        _label(f" — {said}", "italic"),
    )
    if name != "run_command" and not _heading_says_all(name, arguments):
        text.append(f" · {ARGUMENTS_HINT}", style="dim")
    return text


def _heading_says_all(name: str, arguments: dict[str, Any]) -> bool:
    """Whether the heading shows every argument (a path alone, say). A command's entry
    shows the command; Ctrl+T shows its output."""
    heading = call_heading(name, arguments)
    return all(
        isinstance(value, str) and "\n" not in value and (value in heading or value == ".")
        for value in arguments.values()
    )


def arguments_text(arguments: dict[str, Any]) -> str:
    """Every argument of a call, one per line; text of several lines as an indented block.
    Made safe to show (screen_safe)."""
    lines = []
    for key, value in arguments.items():
        if isinstance(value, str) and "\n" in value:
            lines.append(f"{key}:")
            lines += ["    " + line for line in value.removesuffix("\n").split("\n")]
        elif isinstance(value, str):
            lines.append(f"{key}: {value}")
        else:
            lines.append(f"{key}: {json.dumps(value, ensure_ascii=False)}")
    return screen_safe("\n".join(lines))


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
            text.append(f"\n… {counted(len(lines) - len(shown), 'more line')}", style="dim")
    if diff:
        text.append("\n")
        text.append_text(diff_text(diff))
    return text


class ToolEntry(Entry):
    """A tool call other than a command: its heading (zcoder.agent.headings), its result's
    first lines and an edit's diff. The full-output screen (Ctrl+T) shows all of its
    arguments and its whole result, as it shows a command's output."""

    user_command = False
    trailer = ""

    def __init__(self, name: str, arguments: dict[str, Any], status: str = "running") -> None:
        self.tool_name = name
        self.arguments = dict(arguments)
        self.command = call_heading(name, arguments)
        self.command_status = status
        self.output = CommandOutput()
        super().__init__("tool", tool_text(name, self.arguments, status))

    def finish(self, status: str, result: str, diff: str = "") -> None:
        self.command_status = status
        self.output = CommandOutput()
        self.output.feed(result)
        self.show_text(tool_text(self.tool_name, self.arguments, status, result, diff))

    def full_text(self) -> str:
        """All of the arguments, then the whole result kept."""
        parts = ["arguments", arguments_text(self.arguments) or "(none)", "", "result"]
        return "\n".join(parts) + "\n" + self.output.text()


def receipt_text(text: str, *, progress: bool = False) -> Text:
    """A receipt, or a progress notice (``started``, ``steered``), from a peer."""
    label = "⇄ progress " if progress else "⇄ receipt "
    return Text.assemble(_label(label, "bold magenta"), screen_safe(text))


def _shell_header(command: str, status: str) -> Text:
    shown = screen_safe(command)
    if len(shown) > 300:
        shown = shown[:299] + "…"
    return Text.assemble(
        _label(f"{_status_icon(status)} $ ", "bold"),
        _label(shown, "bold"),
        _label(f" — {status}", "italic"),
    )
