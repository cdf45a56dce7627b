"""The transcript: its entries (user, assistant, tool, relay, system, error, and shell:
a command the user typed) and the scrolling container that holds them.

Commands (run_command calls and the user's ``!commands``) are ``CommandEntry``s: their
output streams in while they run, the entry shows its last lines, and the whole output
(tui/state/command_output.py) is one key away (tui/dialogs/output.py).

All text from the model, tools and peers passes ``screen_safe`` first and is never read as
Rich markup: entries are ``rich.text.Text``, except assistant replies, which are drawn as
markdown (tui/widgets/markdown_view.py) from that same screen-safe text.

The transcript follows new output (Textual's anchor) until the user scrolls up; it follows
again once they are back at the end, or press End.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.widget import AwaitMount, Widget
from textual.widgets import Static

from zcoder.tui.widgets.assistant_entry import AssistantEntry
from zcoder.tui.widgets.command_entry import FULL_OUTPUT_KEY, FULL_OUTPUT_KEY_LABEL, CommandEntry
from zcoder.tui.widgets.entries import (
    MAX_TOOL_PREVIEW_LINES,
    Entry,
    ToolEntry,
    assistant_text,
    error_text,
    receipt_text,
    relay_text,
    system_text,
    thinking_text,
    tool_text,
    user_text,
)
from zcoder.tui.widgets.plan_view import tool_entry
from zcoder.tui.widgets.subagent_entry import SubagentEntry

__all__ = [
    "FULL_OUTPUT_KEY",
    "FULL_OUTPUT_KEY_LABEL",
    "MAX_TOOL_PREVIEW_LINES",
    "AssistantEntry",
    "CommandEntry",
    "EarlierEntries",
    "Entry",
    "FollowHint",
    "ToolEntry",
    "Transcript",
    "assistant_text",
    "entry_for_event",
    "error_text",
    "receipt_text",
    "relay_text",
    "system_text",
    "thinking_text",
    "tool_text",
    "user_text",
]

SAVED_ENTRIES_SHOWN = 30
"""A reopened session draws only its newest entries; older ones wait behind a marker
(``EarlierEntries``). Drawing thousands of entries at once took seconds to a minute."""
EARLIER_BATCH = 100
"""How many older entries one click (or Enter) on the marker draws."""

SavedEvent = tuple[str, str, dict[str, Any]]
"""A saved transcript event as the screen needs it: role, text, metadata."""


def _saved_status(metadata: dict[str, Any]) -> str:
    status = str(metadata.get("status", "completed"))
    return "interrupted" if metadata.get("not_executed") else status


def entry_for_event(role: str, text: str, metadata: dict[str, Any]) -> Entry:
    """The one mapping from a saved transcript event to what the screen shows."""
    if role == "user":
        return Entry("user", user_text(text, steering=bool(metadata.get("steering"))))
    if role == "assistant":
        return AssistantEntry(text, partial=bool(metadata.get("partial")))
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
        tool = tool_entry(str(metadata.get("name", "tool")), dict(metadata.get("arguments") or {}))
        if isinstance(tool, SubagentEntry):
            tool.take(metadata)
        tool.finish(_saved_status(metadata), text, str(metadata.get("diff") or ""))
        return tool
    if role == "relay":
        return Entry(
            "relay",
            relay_text(
                str(metadata.get("sender_project", "?")),
                metadata.get("sender_pid", "?"),
                str(metadata.get("sender_workspace", "?")),
                str(metadata.get("sender_instance_id", "?")),
                text,
                kind=str(metadata.get("sender_kind", "")),
                steered=bool(metadata.get("steering")),
            ),
        )
    if role == "receipt":
        return Entry("receipt", receipt_text(text, progress="progress" in metadata))
    if role == "error":
        return Entry("error", error_text(text))
    return Entry("system", system_text(text))


class EarlierEntries(Static, can_focus=True):
    """Above a reopened session's newest entries: how many older ones are not drawn yet.
    A click, or Enter once focused, draws the next EARLIER_BATCH of them above the ones
    shown; the marker goes once none is left."""

    DEFAULT_CSS = """
    EarlierEntries { margin: 0 0 1 0; padding: 0 1; color: $text-muted; text-style: italic; }
    EarlierEntries:focus { text-style: italic reverse; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "show_more", "Show earlier")]

    def __init__(self, older: Sequence[SavedEvent]) -> None:
        self.older = list(older)
        super().__init__(self._label())

    def _label(self) -> str:
        count = len(self.older)
        batch = min(count, EARLIER_BATCH)
        return (
            f"▲ {count:,} earlier entr{'ies' if count != 1 else 'y'} not shown · click or "
            f"Enter to show {'the' if batch == count else 'the next'} {batch:,}"
        )

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.action_show_more()

    def action_show_more(self) -> None:
        batch = self.older[-EARLIER_BATCH:]
        del self.older[-EARLIER_BATCH:]
        parent = self.parent
        if batch and isinstance(parent, Widget):
            parent.mount_all([entry_for_event(*saved) for saved in batch], after=self)
        if self.older:
            self.update(self._label())
        else:
            self.remove()


FOLLOW_HINT = "↓ new output below · End to follow (Ctrl+End while typing)"


class FollowHint(Static):
    """Under the transcript while output arrives below what the user is reading."""

    DEFAULT_CSS = """
    FollowHint {
        display: none; height: 1; width: 100%;
        background: $accent; color: $text; text-style: bold; text-align: center;
    }
    FollowHint.shown { display: block; }
    """

    def __init__(self, transcript: Transcript) -> None:
        super().__init__(FOLLOW_HINT)
        self.transcript = transcript

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.transcript.follow()


class Transcript(VerticalScroll, can_focus=False):
    """The entries, following new output unless the user scrolled up to read.

    Following is Textual's anchor: an anchored container stays at its end as its content
    grows (entries added, a reply streaming), and releases itself when the user scrolls up
    (wheel, keys, scrollbar); it anchors again when they scroll back to the end. Nothing
    here scrolls per entry or per chunk, so what the user reads never moves.
    ``hint`` (composed by the app under the transcript) says output arrived below.
    It never takes the focus (a click to scroll or select leaves it in the prompt, where
    typing goes on); the prompt's keys scroll it (PageUp, Shift+Up: widgets/prompt.py).
    """

    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.hint = FollowHint(self)
        self._unseen = False  # output arrived below while the user read older output
        self.typed_at = -math.inf
        """When the user last typed in the prompt (monotonic): a streaming reply's
        redraws wait for a pause (TYPING_HOLD)."""

    def note_typing(self) -> None:
        """A key went to the prompt: hold a streaming reply's redraws for a moment; one
        held too long is drawn right after this key's echo."""
        self.typed_at = time.monotonic()
        self.call_after_refresh(self._after_echo)

    def _after_echo(self) -> None:
        for child in reversed(self.children):
            if isinstance(child, AssistantEntry):  # the newest reply: the one streaming
                child.draw_if_overdue()
                return

    def on_mount(self) -> None:
        self.anchor()

    @property
    def following(self) -> bool:
        """The view stays at the end as output arrives."""
        # Textual keeps "anchored but released by the user" in a private flag (8.2.8).
        return self.is_anchored and not self._anchor_released

    def follow(self) -> None:
        """Go to the end and follow new output again."""
        self.anchor()
        self._show_hint()

    def scroll_by(self, *, pages: int = 0, lines: int = 0) -> None:
        """Keys typed in the prompt (PageUp/PageDown, Shift+Up/Down): ``pages`` pages and
        ``lines`` rows, negative back, at once (no glide). Going back lets go of the end,
        as the wheel does; reaching the end follows new output again."""
        step = pages * self.scrollable_content_region.height + lines
        if step == 0:
            return
        target = self.scroll_y + step
        if step > 0 and target >= self.max_scroll_y:
            self.follow()
            return
        # At once, not after the next refresh: a key's scroll must land before the next
        # key is handled (PageUp then Enter: Enter's follow() would be undone by it).
        self.scroll_to(y=max(0, target), animate=False, immediate=True)

    def add(self, entry: Entry) -> Entry:
        self.mount(entry)
        return entry

    def show_saved(self, saved: Sequence[SavedEvent]) -> AwaitMount | None:
        """A reopened session's transcript: its newest SAVED_ENTRIES_SHOWN entries, mounted
        at once, under an ``EarlierEntries`` marker standing for the older ones. Returns
        what to await for them to be mounted (None: there were none)."""
        older, newest = saved[:-SAVED_ENTRIES_SHOWN], saved[-SAVED_ENTRIES_SHOWN:]
        widgets: list[Static] = [EarlierEntries(older)] if older else []
        widgets.extend(entry_for_event(*event) for event in newest)
        return self.mount_all(widgets) if widgets else None

    def clear(self) -> None:
        """Remove every entry (another session is shown) and follow its end."""
        self.remove_children()
        self._unseen = False
        self.follow()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._show_hint()

    def watch_virtual_size(self, old_size: Size, new_size: Size) -> None:
        if new_size.height > old_size.height and not self.following:
            self._unseen = True
        self._show_hint()

    def _show_hint(self) -> None:
        if self.following:
            self._unseen = False
        self.hint.set_class(self._unseen, "shown")
