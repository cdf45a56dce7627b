"""The prompt input: a multi-line TextArea where Enter submits and a paste is data.

Keys as terminals send them reach this widget through tui/terminal.py's parser, which tells
Shift+Enter and Alt+Enter apart from Enter. Enter is handled here, in the widget's own key
handler, not as a priority binding: keys reach a widget in the order they were typed, so a
fast Enter cannot overtake the last characters typed before it.

A bracketed paste is inserted whole and never submits. Its line breaks become LF; other
control characters and ESC are shown as visible escapes (``\\e``, ``\\x07``...: the one
table is ``screen_safe``), since what the user pasted goes to the model as shown. A very
large paste (more than PASTE_COLLAPSE_LINES lines or PASTE_COLLAPSE_CHARS characters) shows
as one placeholder, ``[pasted N lines #k]``, which stands for the whole text: that is what
is submitted. The placeholder edits as one piece (Backspace or Delete removes all of it,
typing never lands inside it) and Ctrl+E on it expands it into the text it stands for. A
prompt recalled from the history (Up, Down) shows this run's collapsed pastes collapsed
again (``load_recalled``).

While a turn runs, Enter steers it (the text reaches it at its next safe point) and Ctrl+G
sends the text as a follow-up, after the turn; idle, both send (tui/main_screen.py).

PageUp and PageDown (a page) and Shift+Up and Shift+Down (``SHIFT_SCROLL_LINES`` rows)
scroll the transcript, not the input: the prompt posts ``ScrollTranscript``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Final

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from zcoder.base.plural import counted
from zcoder.tui.terminal import paste_text
from zcoder.tui.widgets.prompt_habits import PromptHabits

# A paste longer than this shows collapsed: the prompt is at most 10 rows high, and a
# collapsed block keeps the draft around it readable.
PASTE_COLLAPSE_LINES: Final = 20
PASTE_COLLAPSE_CHARS: Final = 2000
RECALLED_PASTES: Final = 20
"""How many of this run's collapsed pastes a recalled prompt collapses again (the newest)."""

# Ctrl+Enter too: where a terminal tells it from Enter (kitty protocol, tmux's extended keys)
# it would otherwise do nothing at all.
NEWLINE_KEYS: Final = ("shift+enter", "alt+enter", "ctrl+j", "ctrl+enter")
EXPAND_KEY: Final = "ctrl+e"
SHIFT_SCROLL_LINES: Final = 3
"""Rows the transcript moves for Shift+Up or Shift+Down typed in the prompt (a wheel notch)."""
# Keys typed in the prompt that scroll the transcript (pages, lines): the prompt is where
# the focus stays, and its own uses of them (a page of a 10-row input, a selection made
# line by line) are worth less than reading back while typing, as in Claude Code and Codex.
TRANSCRIPT_KEYS: Final = {
    "pageup": (-1, 0),
    "pagedown": (1, 0),
    "shift+up": (0, -SHIFT_SCROLL_LINES),
    "shift+down": (0, SHIFT_SCROLL_LINES),
}
QUEUE_KEY: Final = "ctrl+g"
"""Send as a follow-up: it waits for the running turn's end (Enter steers that turn)."""
HINT: Final = "Enter send · Shift+Enter / Alt+Enter / Ctrl+J new line"
TURN_HINT: Final = "Enter steer · Ctrl+G queue · Alt+Enter new line"
HINT_WITH_PASTE: Final = "Enter send · Alt+Enter / Ctrl+J new line · Ctrl+E on a paste: expand"
DRAFT_CLEARED_HINT: Final = "draft cleared · ↑ brings it back"

_PLACEHOLDER: Final = re.compile(r"\[pasted \d+ lines? #(\d+)\]")


def line_count(text: str) -> int:
    """Lines as a reader counts them: a final line break ends a line, it starts none."""
    return len(text.splitlines()) or 1


@dataclass(frozen=True)
class PastedBlock:
    number: int
    text: str

    @property
    def placeholder(self) -> str:
        lines = line_count(self.text)
        return f"[pasted {counted(lines, 'line')} #{self.number}]"


class PromptInput(TextArea):
    """Multi-line input: Enter submits; Shift+Enter, Alt+Enter, Ctrl+J or a backslash
    before Enter add a newline."""

    DEFAULT_CSS = """
    PromptInput { height: auto; min-height: 3; max-height: 10; border: round $accent; }
    PromptInput { border-subtitle-color: $text-muted; border-subtitle-align: left; }
    """

    class Submitted(Message):
        """``queue``: sent with Ctrl+G, to wait for the running turn's end (Enter steers it)."""

        def __init__(self, text: str, *, queue: bool = False) -> None:
            super().__init__()
            self.text = text
            self.queue = queue

    class EditQueued(Message):
        """Up in an empty input: take the last queued prompt back to edit it."""

    class ScrollTranscript(Message):
        """PageUp/PageDown or Shift+Up/Down typed in the prompt: the transcript scrolls
        by ``pages`` pages or ``lines`` rows (negative: back)."""

        def __init__(self, pages: int, lines: int) -> None:
            super().__init__()
            self.pages = pages
            self.lines = lines

    def __init__(self, text: str = "", **kwargs: Any) -> None:
        super().__init__(text, **kwargs)
        self._pasted: dict[int, PastedBlock] = {}  # this draft's collapsed pastes
        # The texts of the pastes collapsed in this run, newest last: a prompt recalled
        # from the history shows them collapsed again (load_recalled).
        self._collapsed: list[str] = []
        self.turn_running = False
        """A turn runs (the chat pane says so): Enter steers it, the hint says how."""
        self.typing_hook: Callable[[], None] | None = None
        """Called on every key the prompt gets (the app holds a streaming reply's redraws
        meanwhile: tui/widgets/transcript.py, TYPING_HOLD)."""
        self.border_subtitle = HINT

    @cached_property
    def habits(self) -> PromptHabits:
        """Up/Down recall, Ctrl+R search, Tab completion (tui/widgets/prompt_habits.py); it also
        takes Up in the empty prompt back to the last queued prompt (EditQueued)."""
        return PromptHabits(
            self,
            refresh_hint=self.refresh_hint,
            edit_queued=lambda: self.post_message(self.EditQueued()),
            load_recalled=self.load_recalled,
        )

    async def _on_key(self, event: events.Key) -> None:
        if self.typing_hook is not None:
            self.typing_hook()
        if self.habits.handle_key(event):
            return
        if (step := TRANSCRIPT_KEYS.get(event.key)) is not None:
            event.stop()
            event.prevent_default()
            self.post_message(self.ScrollTranscript(*step))
            return
        for handler in (self._enter_key, self._pasted_block_key):
            if handler(event):
                event.stop()
                event.prevent_default()
                return
        if await self._own_binding(event):
            return
        await super()._on_key(event)

    async def _own_binding(self, event: events.Key) -> bool:
        """Run a key the text area binds itself (cursor moves, deletions, selection) here,
        in the order the prompt got its keys. Textual runs a focused widget's bindings
        when the key has bubbled back up to the app, and by then the keys typed after it
        may be in already: under load, Left Left '!' put the '!' in before the cursor
        moved, and End (the app's, tui/app.py) moved it before the Lefts."""
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                event.stop()
                event.prevent_default()
                return True
        return False

    # -- Enter: submit, or a new line -----------------------------------------------------

    def _enter_key(self, event: events.Key) -> bool:
        if event.key in NEWLINE_KEYS:
            self.insert("\n")
            return True
        if event.key == QUEUE_KEY:
            self.submit(queue=True)
            return True
        if event.key != "enter":
            return False
        start, end = self.selection
        row, column = end
        if start == end and column > 0 and self.document[row][column - 1] == "\\":
            # A backslash before Enter, as in a shell: the backslash becomes the new line.
            self.replace("\n", (row, column - 1), end)
            return True
        self.submit()
        return True

    def submit(self, *, queue: bool = False) -> None:
        """Post the draft (collapsed pastes expanded to the text they stand for) and clear
        the input at once, so keys typed after Enter start the next draft."""
        text = self.expanded_text()
        if not text.strip():
            return
        self.post_message(self.Submitted(text, queue=queue))  # before the clear's Changed message
        self.clear()
        self._pasted = {}
        self.refresh_hint()

    def take_draft(self) -> str:
        """Ctrl+C with a draft: clear the input and return the draft (pastes expanded) for
        the history, so Up brings it back; "" when the input holds nothing."""
        text = self.expanded_text()
        if not text.strip():
            return ""
        self.clear()
        self._pasted = {}
        self.border_subtitle = DRAFT_CLEARED_HINT  # until the input changes again
        return text

    def expanded_text(self) -> str:
        """The draft with every collapsed paste replaced by its text."""

        def expand(match: re.Match[str]) -> str:
            block = self._pasted.get(int(match[1]))
            return block.text if block is not None and block.placeholder == match[0] else match[0]

        return _PLACEHOLDER.sub(expand, self.text)

    # -- paste ----------------------------------------------------------------------------

    async def _on_paste(self, event: events.Paste) -> None:
        """Insert the whole paste as text (never keys): collapsed when it is very large."""
        event.stop()
        event.prevent_default()
        if self.read_only:
            return
        text = paste_text(event.text)
        if not text:
            return
        if line_count(text) > PASTE_COLLAPSE_LINES or len(text) > PASTE_COLLAPSE_CHARS:
            number = max(self._pasted, default=0) + 1
            block = PastedBlock(number, text)
            self._pasted[number] = block
            self._collapsed = [*self._collapsed[-(RECALLED_PASTES - 1) :], text]
            text = block.placeholder
            self.refresh_hint()
        self._insert_outside_block(text)

    def _insert_outside_block(self, text: str) -> None:
        self._leave_block()
        start, end = self.selection
        with self._own_undo_step():
            result = self.replace(text, start, end, maintain_selection_offset=False)
        self.move_cursor(result.end_location)

    def load_recalled(self, text: str) -> None:
        """A prompt from the history (Up, Down) in the input: the pastes of this run that
        were collapsed in it are collapsed again, each standing for its text as before
        (a draft cleared with Ctrl+C comes back as it was typed, not expanded)."""
        for pasted in reversed(self._collapsed):
            if pasted not in text:
                continue
            block = next((b for b in self._pasted.values() if b.text == pasted), None)
            if block is None:
                block = PastedBlock(max(self._pasted, default=0) + 1, pasted)
                self._pasted[block.number] = block
            text = text.replace(pasted, block.placeholder)
        self.load_text(text)
        self.refresh_hint()

    # -- collapsed pastes: one piece, expanded on request ---------------------------------

    def _pasted_block_key(self, event: events.Key) -> bool:
        if not self._pasted:
            return False
        start, end = self.selection
        if start != end:
            return False
        row, column = end
        if event.key == EXPAND_KEY:
            # On the block: the cursor anywhere from just before it to just after it.
            found = self._block_on_row(row, lambda first, last: first <= column <= last)
            if found is None:
                return False  # Ctrl+E elsewhere: the end of the line, as usual
            block, first, last = found
            with self._own_undo_step():
                self.replace(block.text, (row, first), (row, last))
            return True
        if event.key in ("backspace", "delete"):
            gone = column - 1 if event.key == "backspace" else column  # the character removed
            found = self._block_on_row(row, lambda first, last: first <= gone < last)
            if found is None:
                return False
            _block, first, last = found
            with self._own_undo_step():
                self.delete((row, first), (row, last))
            return True
        if event.is_printable:
            self._leave_block()  # typing goes after the block, never into it
        return False

    def _leave_block(self) -> None:
        start, end = self.selection
        if start != end or not self._pasted:
            return
        row, column = end
        found = self._block_on_row(row, lambda first, last: first < column < last)
        if found is not None:
            self.move_cursor((row, found[2]))

    def _block_on_row(
        self, row: int, covers: Callable[[int, int], bool]
    ) -> tuple[PastedBlock, int, int] | None:
        """The collapsed paste on ``row`` whose columns (first, last) satisfy ``covers``."""
        if not 0 <= row < self.document.line_count:
            return None
        for match in _PLACEHOLDER.finditer(self.document[row]):
            block = self._pasted.get(int(match[1]))
            known = block is not None and block.placeholder == match[0]
            if known and block is not None and covers(match.start(), match.end()):
                return block, match.start(), match.end()
        return None

    # -- undo and redo ------------------------------------------------------------------

    @contextmanager
    def _own_undo_step(self) -> Iterator[None]:
        """Edits that Ctrl+Z undoes alone (a paste, an expand), not with the typing around."""
        self.history.checkpoint()
        yield
        self.history.checkpoint()

    # Textual 8.2.8 resizes the TextArea before it moves the cursor back when undoing: if
    # the scroll bar goes (a multi-line paste undone), it scrolls to a cursor row the
    # shortened text no longer has and raises, which ends zcoder (Textual issue 6686, fix
    # unmerged). The cursor is parked at the start first; the undo then sets it anew.
    def undo(self) -> None:
        if self.history.undo_stack:
            self.move_cursor((0, 0))
        super().undo()

    def redo(self) -> None:
        if self.history.redo_stack:
            self.move_cursor((0, 0))
        super().redo()

    def on_text_area_changed(self, _event: TextArea.Changed) -> None:
        self.habits.text_changed()  # a paste or an edit ends a search or Tab's listing
        # Pastes are still kept after an expand or a delete (Ctrl+Z brings them back); a
        # cleared draft's hint lasts until the input changes.
        if self._pasted or (self.text and self.border_subtitle == DRAFT_CLEARED_HINT):
            self.refresh_hint()

    def refresh_hint(self) -> None:
        """The bottom border's hint: the keys (Tab's choices replace it while listed)."""
        text = self.text if self._pasted else ""
        shown = any(block.placeholder in text for block in self._pasted.values())
        plain = TURN_HINT if self.turn_running else HINT
        self.border_subtitle = HINT_WITH_PASTE if shown else plain
