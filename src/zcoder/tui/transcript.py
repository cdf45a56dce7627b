"""The transcript: its entries (user, assistant, tool, relay, system, error, and shell:
a command the user typed) and the scrolling container that holds them.

Commands (run_command calls and the user's ``!commands``) are ``CommandEntry``s: their
output streams in while they run, the entry shows its last lines, and the whole output
(tui/command_output.py) is one key away (tui/output_screen.py).

All text from the model, tools and peers passes ``screen_safe`` first and is never read as
Rich markup: entries are ``rich.text.Text``, except assistant replies, which are drawn as
markdown (tui/markdown_view.py) from that same screen-safe text.

The transcript follows new output (Textual's anchor) until the user scrolls up; it follows
again once they are back at the end, or press End.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.timer import Timer
from textual.widget import AwaitMount, Widget
from textual.widgets import Static

from zcoder.relay.display import from_words, sender_words
from zcoder.relay.sanitize import visible
from zcoder.tui.command_output import CommandOutput
from zcoder.tui.diff_view import diff_text
from zcoder.tui.markdown_view import BlocksView, MarkdownBlocks
from zcoder.tui.widgets import screen_safe

MAX_TOOL_PREVIEW_LINES = 12
FULL_OUTPUT_KEY = "ctrl+t"
FULL_OUTPUT_KEY_LABEL = "Ctrl+T"
COMMAND_REFRESH_SECONDS = 0.08
"""A running command's entry is redrawn at most this often, however fast it prints."""
PREVIEW_LINE_CHARS = 400
"""A longer output line is cut in the entry's preview (the full output has all of it)."""
SAVED_ENTRIES_SHOWN = 30
"""A reopened session draws only its newest entries; older ones wait behind a marker
(``EarlierEntries``). Drawing thousands of entries at once took seconds to a minute."""
EARLIER_BATCH = 100
"""How many older entries one click (or Enter) on the marker draws."""

SavedEvent = tuple[str, str, dict[str, Any]]
"""A saved transcript event as the screen needs it: role, text, metadata."""


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


def _assistant_label(partial: bool) -> Text:
    return _label("assistant (stopped, partial)" if partial else "assistant", "bold green")


def assistant_text(text: str, *, partial: bool = False) -> Text:
    """An assistant reply as plain text (what ``Entry.plain`` holds for it)."""
    return Text.assemble(_assistant_label(partial), "\n", screen_safe(text))


# While a reply streams, its markdown is drawn again at most this often (seconds); the
# text itself (``plain``) is always current, and the last update is always drawn. A block
# that grows long (a big code block: highlighted again on each redraw) is redrawn less
# often, in proportion, up to REPLY_REDRAW_MAX.
REPLY_REDRAW_INTERVAL = 0.08
REPLY_REDRAW_MAX = 0.5
# While the user types, a streaming reply is not redrawn until this long after their last
# key: each redraw of a growing reply lays out and repaints the transcript (tens of ms on a
# slow machine), and a key typed meanwhile waits for it, so a held redraw lets the key's
# echo have a frame of its own. One held for TYPING_REDRAW_MAX is drawn right after a key's
# echo, the moment the next key is least likely. People pause longer than TYPING_HOLD
# between most keys (60 words a minute is a key every 0.2 s), so the reply keeps moving
# between them; only a fast burst holds it, never for more than TYPING_REDRAW_MAX.
TYPING_HOLD = 0.15
TYPING_REDRAW_MAX = 5.0
# While a reply streams, settled blocks are closed into a part of their own once they
# hold this many characters (see AssistantEntry).
REPLY_PART_CHARS = 1500


class AssistantEntry(Entry):
    """An assistant reply drawn as markdown: its label, then its blocks.

    A finished reply (or one reloaded from a session) is one widget for all its blocks. A
    streaming one is drawn in parts: the blocks after the last part that was closed and
    the block still growing are one widget, drawn again as text arrives; once the settled
    blocks in it reach ``REPLY_PART_CHARS`` they become a closed part whose lines Textual
    keeps. So an update of a long reply redraws a few dozen lines, and the number of
    widgets Textual lays out on each update stays small. Blocks are one blank line apart
    in both forms, so a reply looks the same streamed and reloaded.
    """

    DEFAULT_CSS = """
    AssistantEntry > .reply-label { height: 1; }
    AssistantEntry > .reply-block { height: auto; }
    AssistantEntry > .reply-block.closed { margin-bottom: 1; }
    """

    def __init__(self, text: str = "", *, partial: bool = False, streaming: bool = False) -> None:
        # The entry itself only holds its parts: its own content stays empty.
        super().__init__("assistant", Text())
        self.partial = partial
        self.plain = assistant_text(text, partial=partial).plain
        self.blocks = MarkdownBlocks()
        self.blocks.update(screen_safe(text))
        self._streaming = streaming
        self._label = Static(_assistant_label(partial), classes="reply-label")
        self._parts: list[Static] = []  # closed parts, while streaming
        self._closed_blocks = 0  # settled blocks in closed parts
        self._resets = self.blocks.resets
        self._last = Static(classes="reply-block")  # the last block, or every block
        self._timer: Timer | None = None
        self._pending = text  # the newest text, drawn or not
        self._drawn_at = time.monotonic()  # when the reply was last drawn
        self._stale = False  # _pending arrived during the redraw interval
        self._show_last()

    def compose(self) -> ComposeResult:
        yield self._label
        yield self._last

    def on_mount(self) -> None:
        self._sync_parts()

    def stream(self, text: str) -> None:
        """The reply so far: drawn now, or at the end of the current redraw interval, or
        once the user has stopped typing (TYPING_HOLD)."""
        self.plain = assistant_text(text, partial=self.partial).plain
        self._pending = text
        if self._timer is not None:
            self._stale = True
            return
        hold = self._typing_hold()
        if hold > 0:
            self._stale = True
            self._timer = self.set_timer(hold, self._redraw_pending)
            return
        self._draw_now(text)

    def _draw_now(self, text: str) -> None:
        self._draw(text)
        self._drawn_at = time.monotonic()
        if self.is_attached:
            growing = sum(len(block) for block in self.blocks.tail)
            interval = REPLY_REDRAW_INTERVAL * max(1.0, growing / REPLY_PART_CHARS)
            self._timer = self.set_timer(min(interval, REPLY_REDRAW_MAX), self._redraw_pending)

    def draw_if_overdue(self) -> None:
        """Just after a key's echo was drawn (the moment the next key is least likely): a
        reply whose redraw was held for TYPING_REDRAW_MAX or more is drawn now."""
        if not self._stale or time.monotonic() - self._drawn_at < TYPING_REDRAW_MAX:
            return
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._stale = False
        self._draw_now(self._pending)

    def finish(self, text: str, *, partial: bool = False) -> None:
        """The whole reply: drawn at once."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._stale = False
        if partial != self.partial:
            self.partial = partial
            self._label.update(_assistant_label(partial))
        self.plain = assistant_text(text, partial=partial).plain
        self._draw(text)

    def _typing_hold(self) -> float:
        """How long to hold the next redraw for the user's typing; 0: draw now."""
        transcript = self.parent
        if not isinstance(transcript, Transcript) or not self.is_attached:
            return 0.0
        return max(0.0, transcript.typed_at + TYPING_HOLD - time.monotonic())

    def flush(self) -> None:
        """Draw the newest text now (the stream ended without a final message)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self._stale:
            self._stale = False
            self._draw(self._pending)

    def _redraw_pending(self) -> None:
        self._timer = None
        if self._stale:
            self._stale = False
            self.stream(self._pending)

    def _draw(self, text: str) -> None:
        self._pending = text
        self.blocks.update(screen_safe(text))
        self._sync_parts()
        self._show_last()

    def _sync_parts(self) -> None:
        """Close the settled blocks of the growing part once they are long enough."""
        if not self._streaming or not self.is_mounted:
            return
        if self._resets != self.blocks.resets:  # the text was replaced, not extended
            self._resets = self.blocks.resets
            for part in self._parts:
                part.remove()
            self._parts, self._closed_blocks = [], 0
        settled = self.blocks.settled
        if sum(len(block) for block in settled[self._closed_blocks :]) < REPLY_PART_CHARS:
            return
        view = BlocksView(self.blocks, start=self._closed_blocks, stop=len(settled), tail=False)
        part = Static(view, classes="reply-block closed")
        self._closed_blocks = len(settled)
        self._parts.append(part)
        self.mount(part, before=self._last)

    def _show_last(self) -> None:
        if self._streaming:
            view = BlocksView(self.blocks, start=self._closed_blocks, tail=True)
        else:
            view = BlocksView(self.blocks)
        self._last.update(view)


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
    project: str, pid: int | str, workspace: str, instance_id: str, body: str, *, kind: str = ""
) -> Text:
    # Who sent it, as the receiver verified it (zcoder.relay.standing): an interactive
    # instance, `zcoder send` (its working directory), or an unverified sender.
    if not kind:  # a session saved before senders were verified
        head = f"⇄ relayed task from {visible(project)} (pid {pid}) · {visible(workspace)}"
    else:
        label = sender_words(kind, project, pid, workspace)
        head = f"⇄ relayed task {visible(from_words(kind, label))}"
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
    return f"{who} {outcome}" + (f": {summary}" if summary else "")


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
                kind=str(metadata.get("sender_kind", "")),
            ),
        )
    if role == "receipt":
        return Entry("receipt", receipt_text(text))
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


class Transcript(VerticalScroll):
    """The entries, following new output unless the user scrolled up to read.

    Following is Textual's anchor: an anchored container stays at its end as its content
    grows (entries added, a reply streaming), and releases itself when the user scrolls up
    (wheel, keys, scrollbar); it anchors again when they scroll back to the end. Nothing
    here scrolls per entry or per chunk, so what the user reads never moves.
    ``hint`` (composed by the app under the transcript) says output arrived below.
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
        self.scroll_to(y=max(0, target), animate=False)

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
