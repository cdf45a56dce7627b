"""The transcript: its entries (user, assistant, tool, relay, system, error) and the
scrolling container that holds them.

All text from the model, tools and peers is rendered as ``rich.text.Text``, never as
markup, and passes ``screen_safe`` first.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from zcoder.relay.display import visible
from zcoder.tui.diff_view import diff_text
from zcoder.tui.widgets import screen_safe

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


def tool_text(
    name: str, arguments: dict[str, Any], status: str, output: str = "", diff: str = ""
) -> Text:
    """A tool call; ``diff`` is an edit's capped diff (tool metadata), shown coloured."""
    args = screen_safe(json.dumps(arguments, ensure_ascii=False))
    if len(args) > 300:
        args = args[:299] + "…"
    icon = {"running": "…", "completed": "✓", "failed": "✗", "interrupted": "■"}.get(status, "·")
    text = Text.assemble(
        _label(f"{icon} {screen_safe(name)}", "bold"), " ", args, _label(f" — {status}", "italic")
    )
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


def entry_for_event(role: str, text: str, metadata: dict[str, Any]) -> Entry:
    """The one mapping from a saved transcript event to what the screen shows."""
    if role == "user":
        return Entry("user", user_text(text))
    if role == "assistant":
        return Entry("assistant", assistant_text(text, partial=bool(metadata.get("partial"))))
    if role == "tool":
        status = str(metadata.get("status", "completed"))
        if metadata.get("not_executed"):
            status = "interrupted"
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
