"""The app's widgets: header bar, transcript entries, prompt input, sessions list.

All text from the model, tools and peers is rendered as plain ``rich.text.Text``, never as
markup, and passes ``screen_safe`` first: Rich drops only a few control characters (BEL,
CR...) and lets ESC through, so without it a relayed task, a model reply or a command's
output could write escape sequences to the terminal (clear it, retitle it, hide text).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import events
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import ListItem, ListView, Static, TextArea

from zcoder.agent import ContextUsage
from zcoder.relay.display import visible
from zcoder.relay.sanitize import visible_lines
from zcoder.sessions import SessionInfo

MAX_TOOL_PREVIEW_LINES = 12


def screen_safe(text: str) -> str:
    """Text that cannot drive the terminal nor hide anything; line breaks and tabs are kept.

    C0 and C1 controls, lone surrogates and invisible characters (zero-width, bidi, tags...:
    the one table is ``zcoder.relay.sanitize``) are made visible (``\\e``, ``\\x9b``,
    ``\\u200b``...) rather than sent to the terminal. CRLF becomes LF.
    """
    return visible_lines(text.replace("\r\n", "\n"))


@dataclass
class HeaderState:
    version: str
    model: str
    host: str
    project: str
    branch: str | None
    profile: str
    status: str = "Ready"
    relay: str = "off"
    queued: int = 0
    waiting: bool = False  # queued relayed tasks wait for the user (the auto-turn limit)
    context: ContextUsage | None = None  # the meter: tokens used of the window


class HeaderBar(Static):
    """zcoder · model@host · project (branch) · profile · [status] · relay state · queued
    (· waiting for you)."""

    DEFAULT_CSS = """
    HeaderBar { height: 1; background: $primary-background; color: $text; padding: 0 1; }
    """

    def __init__(self, state: HeaderState) -> None:
        super().__init__("")
        self.state = state

    def on_mount(self) -> None:
        self.refresh_state()

    def refresh_state(self, **changes: Any) -> None:
        for key, value in changes.items():
            setattr(self.state, key, value)
        s = self.state
        sep = Text(" │ ", style="dim")
        text = Text.assemble(
            (f"zcoder {s.version}", "bold"), sep, screen_safe(f"{s.model}@{s.host}"), sep
        )
        text.append(screen_safe(s.project + (f" ({s.branch})" if s.branch else "")))
        text.append_text(sep)
        text.append(s.profile)
        text.append_text(sep)
        badge_style = {
            "Ready": "bold black on green",
            "Warming Up": "bold black on yellow",
            "Thinking": "bold black on cyan",
            "Error": "bold white on red",
            "Stopped": "bold black on yellow",
            "Blocked": "bold white on red",
            "Loop stopped": "bold white on red",
            "Incomplete": "bold black on yellow",
        }.get(s.status, "bold black on cyan")
        text.append(screen_safe(f" {s.status} "), style=badge_style)
        if s.context is not None:
            meter, meter_style = meter_text(s.context)
            text.append(" ")
            text.append(meter, style=meter_style)
        text.append_text(sep)
        text.append(f"relay: {s.relay}")
        if s.queued:
            text.append(f" · {s.queued} queued", style="bold magenta")
            if s.waiting:
                text.append(" · waiting for you", style="bold black on yellow")
        self.update(text)


# The meter turns yellow where automatic compaction is near, red where the window is full.
METER_WARN_PERCENT = 75
METER_FULL_PERCENT = 90


def _short(tokens: int) -> str:
    if tokens >= 1024 and tokens % 1024 == 0:
        return f"{tokens // 1024}k"  # windows come in binary sizes: 32768 is "32k"
    if tokens < 1000:
        return str(tokens)
    if tokens < 10000:
        return f"{tokens / 1000:.1f}k"
    return f"{round(tokens / 1000)}k"


def meter_text(usage: ContextUsage) -> tuple[str, str]:
    """``ctx 3.2k/32k 10%`` (``~`` before an estimate), and its style."""
    used = ("~" if not usage.measured else "") + _short(usage.used)
    percent = usage.percent
    if usage.window is None or percent is None:
        return f"ctx {used}", "dim"
    style = "dim"
    if percent >= METER_FULL_PERCENT:
        style = "bold white on red"
    elif percent >= METER_WARN_PERCENT:
        style = "bold black on yellow"
    return f"ctx {used}/{_short(usage.window)} {percent}%", style


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
    Entry.thinking { color: $text-muted; text-style: italic; }
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


def tool_text(name: str, arguments: dict[str, Any], status: str, output: str = "") -> Text:
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
    return text


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


class PromptInput(TextArea):
    """Multi-line input: Enter submits, Shift+Enter or Alt+Enter (or Ctrl+J) adds a newline."""

    DEFAULT_CSS = """
    PromptInput { height: auto; min-height: 3; max-height: 10; border: round $accent; }
    """

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class EditQueued(Message):
        """Up in an empty input: take the last queued prompt back to edit it."""

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "up" and not self.text:
            event.stop()
            event.prevent_default()
            self.post_message(self.EditQueued())
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self.text))
            return
        if event.key in ("shift+enter", "alt+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        await super()._on_key(event)


class SessionItem(ListItem):
    def __init__(self, info: SessionInfo, current: bool) -> None:
        marker = "● " if current else "  "
        title = screen_safe(info.title)
        super().__init__(Static(Text(marker + title, no_wrap=True, overflow="ellipsis")))
        self.info = info


class SessionList(ListView):
    """Sessions of this workspace and profile, newest first."""

    DEFAULT_CSS = """
    SessionList { width: 30; border-right: solid $primary-background; }
    SessionList > SessionItem > Static { height: 1; width: 100%; }
    """

    def show(self, sessions: list[SessionInfo], current: str | None) -> None:
        self.clear()
        for info in sessions:
            self.append(SessionItem(info, info.id == current))
