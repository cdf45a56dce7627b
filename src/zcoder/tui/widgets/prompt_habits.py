"""The prompt's shell habits: Up/Down recall, Ctrl+R search, Tab completion.

``PromptHabits`` sees each key before the prompt input does (``PromptInput._on_key``)
and says whether it took it. The rules themselves are in tui/state/recall.py (walking the
history, searching it), tui/state/completion.py (what Tab offers) and tui/state/history.py
(the file).

- Up on the input's first row (as displayed, wrapped lines count) shows the previous
  prompt, the cursor at the end of its first line so Up again goes on; Down on the last
  row goes forward, the cursor at the end, and past the newest brings back the draft.
  Up in an empty input while prompts are queued takes the last queued one back first
  (tui/widgets/queued.py).
- Ctrl+R searches the prompts, newest first, as you type (case ignored unless the query
  has a capital). The input shows the match with the found text selected; its border says
  what is searched. Ctrl+R or Up: an older match (at once, the previous search again);
  Ctrl+S or Down: a newer one; Backspace shortens the query. Enter, Tab or Right (and any
  editing key) accept the match into the input to edit it: it is not sent until Enter is
  pressed again. Escape or Ctrl+G cancel and bring back what was there before. While the
  search is open Escape is its own: it does not stop the running turn. A paste or any
  other change to the text while searching ends the search, keeping the text as it is.
- Tab completes the word before the cursor: one choice is taken at once; several extend
  to their common start and are listed in the input's lower border, and Tab again steps
  through them (Shift+Tab backwards). Tab never moves the focus out of the input; with
  nothing to complete it does nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import events
from textual.widgets import TextArea
from textual.widgets.text_area import Selection

from zcoder.slash.registry import commands
from zcoder.tui.state.completion import Candidate, complete
from zcoder.tui.state.history import PromptHistory
from zcoder.tui.state.recall import Match, Recall, search, search_newer
from zcoder.tui.widgets.shared import screen_safe

SEARCH_KEYS_HINT = "Ctrl+R older · Enter edit · Esc cancel"
# Keys that end the search by accepting the match, and are then done (not passed on).
_ACCEPT_KEYS = frozenset({"enter", "tab", "shift+tab", "right"})
_CANCEL_KEYS = frozenset({"escape", "ctrl+g"})


@dataclass
class _Search:
    query: str
    before_text: str  # the input before the search, back on cancel
    before_selection: Selection
    match: Match | None = None
    failing: bool = False  # the query (or the last Ctrl+R) found nothing more
    shown: str = ""  # what the search put in the input


@dataclass
class _Cycle:
    """Tab's state while it lists or steps through several choices."""

    row: int
    start: int
    end: int  # the cursor's column after the last replacement
    candidates: tuple[Candidate, ...]
    index: int  # -1 while only listed
    text: str  # the input's text after the last replacement


class PromptHabits:
    """``prompt`` is the prompt input (tui/widgets/prompt.py), which makes its habits: it gives
    them ``refresh_hint`` (draw its key hint again), ``edit_queued`` (Up in the empty
    prompt: take the last queued prompt back) and ``load_recalled`` (put a prompt from
    the history in the input, its large pastes collapsed again), so this module need not
    import it."""

    def __init__(
        self,
        prompt: TextArea,
        *,
        refresh_hint: Callable[[], None],
        edit_queued: Callable[[], object],
        load_recalled: Callable[[str], None] | None = None,
    ) -> None:
        self.prompt = prompt
        self._refresh_hint = refresh_hint
        self._edit_queued = edit_queued
        self._load_recalled = load_recalled or prompt.load_text
        self.history: PromptHistory | None = None
        self._entries: list[str] = []  # without a history file (tests, before mount)
        self.recall = Recall(self._entries)
        self.workspace: Path | None = None
        self.queued_waiting: Callable[[], bool] = lambda: False
        self._search: _Search | None = None
        self._last_query = ""
        self._cycle: _Cycle | None = None
        # What the input's borders say (plain), for tests: the search, Tab's choices.
        self.search_line = ""
        self.choices_line = ""

    def attach(
        self,
        history: PromptHistory,
        *,
        workspace: Path,
        queued_waiting: Callable[[], bool],
    ) -> None:
        self.history = history
        self.recall = Recall(history.entries)
        self.workspace = workspace
        self.queued_waiting = queued_waiting

    @property
    def entries(self) -> list[str]:
        return self.history.entries if self.history is not None else self._entries

    def remember(self, text: str) -> str | None:
        """The user sent ``text``: record it and end any walk through the history. Returns a
        notice for the user the first time the history file cannot be written."""
        self.recall.reset()
        if self.history is None:
            if text.strip() and (not self._entries or self._entries[-1] != text):
                self._entries.append(text)
            return None
        return self.history.add(text)

    @property
    def searching(self) -> bool:
        return self._search is not None

    def text_changed(self) -> None:
        """The input's text changed: by these habits, or else by the user (a paste, say),
        which ends a search (keeping the text) and Tab's listing."""
        text = self.prompt.text
        if self._search is not None and text != self._search.shown:
            self._end_search(accept=False, restore=False)
        if self._cycle is not None and text != self._cycle.text:
            self._end_cycle()

    # -- keys ---------------------------------------------------------------------------

    def handle_key(self, event: events.Key) -> bool:
        """Act on ``event`` if it is one of these habits' keys; True when it was taken."""
        self.text_changed()  # a change whose message has not come yet
        if self._search is not None:
            return self._consume(event, self._search_key(event))
        key = event.key
        if key not in ("tab", "shift+tab"):
            self._end_cycle()
        if key in ("tab", "shift+tab"):
            # Shift+Tab steps back through Tab's choices; with none listed it is not
            # taken (the screen's: the permission mode), Tab always is.
            return self._consume(event, self._tab(backwards=key == "shift+tab") or key == "tab")
        if key == "ctrl+r":
            self._start_search()
            return self._consume(event, True)
        if key == "up" and self._on_first_row():
            return self._consume(event, self._older())
        if key == "down" and self._on_last_row():
            return self._consume(event, self._newer())
        return False

    @staticmethod
    def _consume(event: events.Key, taken: bool) -> bool:
        if taken:
            event.stop()
            event.prevent_default()
        return taken

    # -- Up and Down --------------------------------------------------------------------

    def _on_first_row(self) -> bool:
        prompt = self.prompt
        return prompt.navigator.is_first_wrapped_line(prompt.cursor_location)

    def _on_last_row(self) -> bool:
        prompt = self.prompt
        return prompt.navigator.is_last_wrapped_line(prompt.cursor_location)

    def _older(self) -> bool:
        prompt = self.prompt
        if not prompt.text and not self.recall.walking and self.queued_waiting():
            self._edit_queued()
            return True
        text = self.recall.older(prompt.text)
        if text is None:
            return False  # the oldest: Up moves to the start of the line as usual
        self._show(text, at_end=False)
        return True

    def _newer(self) -> bool:
        text = self.recall.newer(self.prompt.text)
        if text is None:
            return False
        self._show(text, at_end=True)
        return True

    def _show(self, text: str, *, at_end: bool) -> None:
        """Put ``text`` in the input; the cursor at its end, or at its first line's end."""
        prompt = self.prompt
        self._load_recalled(text)
        end = prompt.document.end if at_end else (0, len(prompt.document.get_line(0)))
        prompt.move_cursor(end)
        prompt.scroll_cursor_visible()

    # -- Ctrl+R -------------------------------------------------------------------------

    def _start_search(self) -> None:
        prompt = self.prompt
        self._search = _Search("", prompt.text, prompt.selection, shown=prompt.text)
        self._show_search()

    def _search_key(self, event: events.Key) -> bool:
        state = self._search
        assert state is not None
        key = event.key
        if key in _CANCEL_KEYS:
            self._end_search(accept=False)
        elif key in _ACCEPT_KEYS:
            self._end_search(accept=True)
        elif key in ("ctrl+r", "up") and not state.query and self._last_query:
            state.query = self._last_query  # Ctrl+R Ctrl+R: the previous search again
            self._find(search(self.entries, state.query), restart=True)
        elif key in ("ctrl+r", "up"):
            before = state.match.index if state.match is not None else None
            self._find(search(self.entries, state.query, before=before))
        elif key in ("ctrl+s", "down"):
            after = state.match.index if state.match is not None else -1
            self._find(search_newer(self.entries, state.query, after=after))
        elif key == "backspace":
            state.query = state.query[:-1]
            self._find(search(self.entries, state.query), restart=True)
        elif event.is_printable and event.character:
            state.query += event.character
            self._find(search(self.entries, state.query), restart=True)
        else:
            self._end_search(accept=True)
            return False  # an editing or moving key: accepted, then it acts as usual
        return True

    def _find(self, match: Match | None, *, restart: bool = False) -> None:
        state = self._search
        assert state is not None
        if match is None:
            state.failing = bool(state.query)
            if restart or not state.query:
                state.match = None
                self._put(state.before_text, state.before_selection)
        else:
            state.failing = False
            state.match = match
            self._put_match(match)
        self._show_search()

    def _put_match(self, match: Match) -> None:
        prompt = self.prompt
        entry = self.entries[match.index]
        prompt.load_text(entry)
        prompt.selection = Selection(_location(entry, match.start), _location(entry, match.end))
        prompt.scroll_cursor_visible()
        assert self._search is not None
        self._search.shown = prompt.text

    def _put(self, text: str, selection: Selection) -> None:
        prompt = self.prompt
        prompt.load_text(text)
        prompt.selection = selection
        if self._search is not None:
            self._search.shown = prompt.text

    def _show_search(self) -> None:
        state = self._search
        assert state is not None
        title = Text()
        title.append("failing " if state.failing else "", style="bold red")
        title.append("search: ", style="bold")
        title.append(screen_safe(state.query) + "▏", style="reverse" if not state.query else "")
        title.append(f"  {SEARCH_KEYS_HINT}", style="dim")
        self.prompt.border_title = title
        self.search_line = title.plain

    def _end_search(self, *, accept: bool, restore: bool = True) -> None:
        state = self._search
        self._search = None
        self.prompt.border_title = None
        self.search_line = ""
        if state is not None and state.query:
            self._last_query = state.query
        if state is None or not restore:
            return
        prompt = self.prompt
        if accept and state.match is not None:
            self.recall.jump(state.match.index, state.before_text)
            prompt.move_cursor(prompt.document.end)
        else:
            self._put(state.before_text, state.before_selection)
        prompt.scroll_cursor_visible()

    # -- Tab ----------------------------------------------------------------------------

    def _tab(self, *, backwards: bool) -> bool:
        """Complete, or step through the choices listed; whether there was a listing to
        step back through (Shift+Tab) or anything done at all."""
        prompt = self.prompt
        row, column = prompt.cursor_location
        cycle = self._cycle
        if (
            cycle is not None
            and prompt.text == cycle.text
            and (row, column)
            == (
                cycle.row,
                cycle.end,
            )
        ):
            step = -1 if backwards else 1
            if cycle.index == -1 and backwards:
                cycle.index = 0
            cycle.index = (cycle.index + step) % len(cycle.candidates)
            self._replace(cycle, cycle.candidates[cycle.index].text)
            self._show_choices(cycle)
            return True
        self._end_cycle()
        if backwards:
            return False
        found = complete(
            prompt.document.get_line(row)[:column],
            first_row=row == 0,
            workspace=self.workspace,
            commands=commands().completion_entries(),
        )
        if found is None or not found.candidates:
            return False
        cycle = _Cycle(row, found.start, column, found.candidates, -1, prompt.text)
        if len(found.candidates) == 1:
            (only,) = found.candidates
            after = prompt.document.get_line(row)[column : column + 1]
            self._replace(cycle, only.text + (" " if only.final and after != " " else ""))
            self._cycle = None
            return True
        common = found.common_prefix()
        if len(common) > len(found.word) and common.startswith(found.word):
            self._replace(cycle, common)
        self._cycle = cycle
        self._show_choices(cycle)
        return True

    def _replace(self, cycle: _Cycle, text: str) -> None:
        prompt = self.prompt
        prompt.replace(text, (cycle.row, cycle.start), (cycle.row, cycle.end))
        cycle.end = cycle.start + len(text)
        prompt.move_cursor((cycle.row, cycle.end))
        cycle.text = prompt.text

    def _show_choices(self, cycle: _Cycle) -> None:
        hint = Text()
        shown = cycle.candidates
        first = max(0, cycle.index - 2)
        if first:
            hint.append("… ", style="dim")
        tail = f"({len(shown)}, Tab steps)"
        # The border holds what fits: choices are left out before the count is cut.
        room = self.prompt.size.width - 4 - len(tail)
        for number, candidate in enumerate(shown[first:], start=first):
            label = screen_safe(candidate.label)
            if number > cycle.index and len(hint.plain) + len(label) + 4 > room:
                hint.append("…  ", style="dim")
                break
            style = "reverse" if number == cycle.index else ""
            hint.append(label, style=style)
            hint.append("  ")
        hint.append(tail, style="dim")
        self.prompt.border_subtitle = hint
        self.choices_line = hint.plain

    def _end_cycle(self) -> None:
        if self._cycle is not None:
            self._cycle = None
            self._refresh_hint()  # the keys again
            self.choices_line = ""


def _location(text: str, index: int) -> tuple[int, int]:
    """The (row, column) of ``text[index]`` once ``text`` is in the input."""
    row = text.count("\n", 0, index)
    return row, index - (text.rfind("\n", 0, index) + 1)
