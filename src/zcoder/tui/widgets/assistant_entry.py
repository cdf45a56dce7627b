"""An assistant reply in the transcript, drawn as markdown while it streams and after.

Redrawing a growing reply is the transcript's most expensive work, so it is paced
(REPLY_REDRAW_INTERVAL, longer for long blocks), held while the user types (TYPING_HOLD),
and split into parts that are closed as they settle (REPLY_PART_CHARS).
"""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.timer import Timer
from textual.widgets import Static

from zcoder.tui.widgets.entries import Entry, _assistant_label, assistant_text
from zcoder.tui.widgets.markdown_view import BlocksView, MarkdownBlocks
from zcoder.tui.widgets.shared import screen_safe

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
        # The transcript holding it says when the user last typed (Transcript.typed_at);
        # read by name, so that this module need not import the transcript's.
        typed_at = getattr(self.parent, "typed_at", None)
        if not isinstance(typed_at, float) or not self.is_attached:
            return 0.0
        return max(0.0, typed_at + TYPING_HOLD - time.monotonic())

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
