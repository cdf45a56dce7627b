"""``GuardedDialog``: the base of every dialog where a person decides (command approval
and send confirmation, tui/dialogs/approval.py; edits and /undo, tui/dialogs/edit.py;
quitting with relayed messages queued, tui/parts/quit_ui.py).

Each is built so that what is approved is what was seen, and so that keys meant for
something else cannot answer it:

* The whole command or message is shown, wrapped, never clipped. Longer content scrolls
  inside the dialog (arrows, PageUp/PageDown, Home/End, the wheel); the dialog states its
  size and where the view is, and ``y`` does nothing until every row of it has been drawn
  on the screen, whole (``ContentView`` records the rows Textual's compositor actually
  draws, clipped by the dialog and by the screen; a layout that was measured but never
  drawn counts for nothing). A resize that wraps the content anew starts the count again,
  unless all of it had been seen already.
  Long runs of blanks are shown as a visible marker with their length, so padding cannot
  push a tail out of sight.
* The dialog is *armed* only after it has been on screen for ``ARM_SECONDS`` with no key
  pressed; every key in that window restarts it. Characters typed in the window were
  meant for the prompt: they are given back to it, not lost. Escape always refuses.

Every dialog answers through ``dismiss``; Escape is always the safe answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar, Final, Generic, TypeVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.errors import NoWidget
from textual.geometry import Region
from textual.message import Message
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.timer import Timer
from textual.widgets import Static

from zcoder.base.plural import counted
from zcoder.tui.widgets.shared import content_text

__all__ = [
    "ARM_SECONDS",
    "MIN_DIALOG_HEIGHT",
    "MIN_DIALOG_WIDTH",
    "ContentView",
    "GuardedDialog",
    "YesNoDialog",
    "content_text",
]

ARM_SECONDS: Final = 0.5
"""How long a dialog must be on screen with no key pressed before it takes an answer."""
WAITING_TEXT: Final = "waiting… keys you type now go back to your prompt"

# Smaller than this, a dialog cannot show its content, its position and its keys: it
# refuses instead (the command is denied, the message is not sent).
MIN_DIALOG_WIDTH: Final = 40
MIN_DIALOG_HEIGHT: Final = 12

# How often a dialog looks whether its content's scroll has come to rest (tui: ContentView).
REST_CHECK_SECONDS: Final = 0.05

# How often, and how long apart, the content is measured again while it is not laid out.
MAX_MEASURE_RETRIES: Final = 50
MEASURE_RETRY_SECONDS: Final = 0.05

DIALOG_CSS = """
GuardedDialog { align: center middle; }
GuardedDialog > .dialog {
    width: 90%; max-width: 120; height: auto; max-height: 90%;
    border: thick $warning; background: $panel; padding: 0 1;
}
GuardedDialog .title { text-style: bold; }
GuardedDialog .meta { color: $text-muted; }
GuardedDialog .warning { color: $error; text-style: bold; }
GuardedDialog #content {
    height: auto; min-height: 1;
    background: $boost; padding: 0 1; margin: 1 0 0 0;
}
GuardedDialog #content:focus { background-tint: $foreground 5%; }
GuardedDialog #position { color: $text-muted; height: auto; }
GuardedDialog #keys { text-style: bold; height: auto; }
GuardedDialog #keys.waiting { color: $text-disabled; text-style: none; }
GuardedDialog #hint { height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
GuardedDialog #hint.waiting { color: $warning; text-style: italic; }
"""


def size_text(text: str) -> str:
    lines = text.count("\n") + 1
    return f"{counted(lines, 'line')} · {counted(len(text), 'character')}"


T = TypeVar("T")


class ContentView(Static):
    """A dialog's content, which keeps count of its rows that were drawn on the screen.

    Textual's compositor asks a widget for exactly the part of it that is visible: its
    region cut by every container around it and by the screen (``render_lines(crop)``).
    Only rows asked for with their full width count: a row cut at the side was not seen
    whole. The count is of the current wrapping; when the width changes the rows are
    others, and the count starts again, unless every row had been seen (then every
    character of the content has been on screen). Rows count only while ``counting``: the
    dialog turns it on once it is armed and its layout has settled, so a row drawn for a
    moment on the way to the final layout (then pushed out of it) does not count. Nor do
    rows drawn while the view glides (End or PageDown animate the scroll): only where
    the view comes to rest is it shown long enough to be read.
    """

    class Seen(Message):
        """Rows not seen before were drawn."""

    def __init__(self, content: Text) -> None:
        super().__init__(content)
        self._seen: set[int] = set()
        self._width = 0
        self.all_seen = False
        self.counting = False
        self._rest_timer: Timer | None = None

    @property
    def unseen(self) -> int:
        """Rows of the current wrapping never drawn whole (0 once all were seen)."""
        return 0 if self.all_seen else max(0, self.size.height - len(self._seen))

    def unseen_around(self, first: int, end: int) -> tuple[bool, bool]:
        """Whether rows never seen lie above the rows in view (``first`` to ``end``), and
        whether some lie below them: which way the user still has to scroll."""
        if self.all_seen:
            return False, False
        total = self.size.height
        above = any(row not in self._seen for row in range(min(first, total)))
        below = any(row not in self._seen for row in range(max(end, 0), total))
        return above, below

    def render_lines(self, crop: Region) -> list[Strip]:
        lines = super().render_lines(crop)
        self._drawn(crop)
        return lines

    def _redraw_at_rest(self) -> None:
        """Draw again once the glide is over: where it stops is counted then (its last
        frames may change nothing, so no draw would come by itself)."""
        if self._rest_timer is not None:
            return

        def check() -> None:
            self._rest_timer = None
            if self._gliding():
                self._redraw_at_rest()
            else:
                self.refresh()

        self._rest_timer = self.set_timer(REST_CHECK_SECONDS, check)

    def _gliding(self) -> bool:
        scroller = self.parent
        animator = self.app.animator
        return any(animator.is_being_animated(scroller, axis) for axis in ("scroll_y", "scroll_x"))

    def _drawn(self, crop: Region) -> None:
        width, total = self.size
        if width <= 0 or total <= 0 or self.all_seen or not self.counting:
            return
        if width != self._width:
            self._width = width
            self._seen.clear()
        if crop.x > 0 or crop.right < width:
            return
        if self._gliding():
            self._redraw_at_rest()
            return
        new = set(range(max(0, crop.y), min(total, crop.bottom))) - self._seen
        if not new:
            return
        self._seen |= new
        self.all_seen = len(self._seen) >= total
        self.post_message(self.Seen())


class GuardedDialog(ModalScreen[T], Generic[T]):
    """A dialog that takes no answer before it is armed and its content was seen whole.

    Subclasses give the title, the lines above the content, the content itself, the keys
    line, and ``answer_for(key)``: the answer a key gives, or None for a key that is not
    an answer. ``refusal`` is what Escape (and a dialog closed unanswered) means.
    """

    DEFAULT_CSS = DIALOG_CSS
    ESC_HINT: ClassVar[str] = "Esc refuses"
    """The last row once all was seen and nothing scrolls: what Escape answers."""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "refuse", "Refuse", show=True),
    ]

    def __init__(
        self,
        refusal: T,
        *,
        give_back: Callable[[str], object] | None = None,
        arm_seconds: float = ARM_SECONDS,
    ) -> None:
        super().__init__()
        self.refusal = refusal
        self.give_back = give_back
        self.arm_seconds = arm_seconds
        self.armed = False
        self.given_back: list[str] = []
        self._last_key = time.monotonic()
        self._arm_timer: Timer | None = None
        self._nudged = False  # an answer was tried before all of the content was seen
        self._content_rows = 0
        self._measure_retries = 0
        self._scrolls = False
        self._rows_in_view: tuple[int, int] | None = None  # (first, end) of the content
        self._settled = False  # the layout stopped changing (the rows in view are final)
        self.frame = Vertical(classes="dialog")
        self.content = VerticalScroll(id="content")
        self.view = ContentView(Text())  # filled in compose: subclasses set their state last
        self.position = Static("", id="position")
        self.keys = Static("", id="keys")
        self.hint = Static("", id="hint")

    @property
    def seen_all(self) -> bool:
        """Every row of the content has been drawn on the screen, whole."""
        return self.view.all_seen

    # -- what subclasses provide ------------------------------------------------------

    def title_text(self) -> Text:
        raise NotImplementedError

    def meta(self) -> list[Static]:
        return []

    def body(self) -> str:
        raise NotImplementedError

    def body_prefix(self) -> str:
        return ""

    def body_renderable(self) -> Text:
        """The content as shown; a subclass may colour it (a diff), never hide any of it."""
        return content_text(self.body(), self.body_prefix())

    def keys_text(self) -> str:
        raise NotImplementedError

    def answer_for(self, key: str) -> T | None:
        raise NotImplementedError

    # -- layout -----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with self.frame:
            yield Static(self.title_text(), classes="title")
            yield from self.meta()
            with self.content:
                self.view.update(self.body_renderable())
                yield self.view
            yield self.position
            yield self.keys
            yield self.hint

    def on_mount(self) -> None:
        self.content.focus()
        self._restart_arming()
        self.watch(self.content, "scroll_y", self._view_changed, init=False)
        self.call_after_refresh(self._view_changed)
        self._show_keys()

    def on_resize(self, _event: events.Resize) -> None:
        self._unsettle()  # until the new layout has settled
        self.call_after_refresh(self._view_changed)

    def on_content_view_seen(self, event: ContentView.Seen) -> None:
        event.stop()
        self._view_changed()

    # -- the view of the content ------------------------------------------------------

    def _fit(self) -> bool:
        """Give the content the rows the rest of the dialog leaves; True when it changed.

        The frame's height follows its content up to 90% of the screen; the content gets
        what the title, the details, the position and the keys leave, so those are never
        pushed off the dialog. Rows that do not fit are not drawn, and so not counted.
        """
        if self.frame.outer_size.height <= 0:
            return False
        others = sum(
            child.outer_size.height + child.styles.margin.height
            for child in self.frame.children
            if child is not self.content
        )
        overhead = self.frame.styles.gutter.height + others + self.content.styles.margin.height
        rows = max(1, int(self.size.height * 0.9) - overhead)
        if self._content_rows != rows:
            self._unsettle()
            self._content_rows = rows
            self.content.styles.max_height = rows
            return True
        return False

    def _in_view(self) -> tuple[int, int] | None:
        """(first, end) of the content's rows visible now, as the compositor places them:
        the content's region cut by the dialog and the screen. None before it is placed."""
        try:
            placed = self.find_widget(self.view)
        except NoWidget:
            return None
        visible = placed.region.intersection(placed.clip)
        if visible.height <= 0:
            return None
        first = visible.y - placed.region.y
        return first, first + visible.height

    def _view_changed(self, *_args: Any) -> None:
        if self._fit():
            self.call_after_refresh(self._view_changed)  # measure again once laid out
            return
        size = size_text(self.body())
        total = self.view.size.height
        in_view = self._in_view() if total > 0 else None
        if in_view is None:
            self._set(self.position, size)
            # Not laid out yet (a new size is applied on a later refresh): look again.
            if self._measure_retries < MAX_MEASURE_RETRIES:
                self._measure_retries += 1
                self.set_timer(MEASURE_RETRY_SECONDS, self._view_changed)
            return
        self._measure_retries = 0
        self._settled = True
        self._start_counting()
        first, end = in_view
        self._rows_in_view = in_view
        self._scrolls = end - first < total
        if self.seen_all and not self._scrolls:
            where = "all shown"
        else:
            # Never more than was drawn: the rows in view now, and what was never seen.
            unseen = self.view.unseen
            seen = "all seen" if self.seen_all else f"{unseen:,} not seen yet"
            rows = f"row {end}" if end == first + 1 else f"rows {first + 1}–{end}"
            where = f"{rows} of {total} · {seen}"
        self._set(self.position, f"{size} · {where}")
        self._show_keys()

    def _set(self, line: Static, text: str) -> None:
        """Show ``text`` in the position or keys line; a change of its height gives the
        content other rows, so the view is measured again once laid out."""
        if str(line.content) != text:
            line.update(Text(text))
            self.call_after_refresh(self._view_changed)

    def _unsettle(self) -> None:
        self._settled = False
        self.view.counting = False

    def _start_counting(self) -> None:
        """Armed and settled: rows drawn from now on count as seen. The view is drawn
        again at once, in the same frame as the armed keys."""
        if self.armed and self._settled and not self.view.counting:
            self.view.counting = True
            self.view.refresh()

    def _scroll_keys(self) -> str:
        """The keys that reach what was never seen, from where the view is now."""
        above, below = (
            self.view.unseen_around(*self._rows_in_view)
            if self._rows_in_view is not None
            else (False, True)
        )
        if above and below:
            return "↑ ↓ PgUp PgDn wheel"
        return "↑ PgUp wheel" if above else "↓ PgDn wheel"

    def _show_keys(self) -> None:
        """The answer keys, then one row: that the dialog waits, or what to do next.

        The keys take the same rows armed or not (while waiting they are greyed, their
        brackets round: ``(y)``), so arming moves nothing: the rows in view when the
        dialog starts taking answers are the rows that were in view while it waited.
        """
        waiting = not self.armed
        self.keys.set_class(waiting, "waiting")
        self.hint.set_class(waiting, "waiting")
        keys = self.keys_text()
        if waiting:
            keys = keys.replace("[", "(").replace("]", ")")  # as long, so wrapped the same
            hint = WAITING_TEXT
        elif not self.seen_all:
            hint = f"scroll to see it all: {self._scroll_keys()}"
            if self._nudged:
                hint = "not yet: " + hint
        elif self._scrolls:
            hint = "↑ ↓ PgUp PgDn Home End scroll"
        else:
            hint = self.ESC_HINT
        self._set(self.keys, keys)
        self.hint.update(Text(hint))

    # -- arming -----------------------------------------------------------------------

    def _restart_arming(self) -> None:
        self._last_key = time.monotonic()
        if self._arm_timer is not None:
            self._arm_timer.stop()
        self._arm_timer = self.set_timer(self.arm_seconds, self._try_arm)

    def _try_arm(self) -> None:
        waited = time.monotonic() - self._last_key
        if waited + 1e-3 < self.arm_seconds:
            self._arm_timer = self.set_timer(self.arm_seconds - waited, self._try_arm)
            return
        self._arm_timer = None
        self.armed = True
        self._start_counting()
        self._show_keys()

    # -- keys -------------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        # A key reaches the screen from the focused content before the bindings are
        # looked up (the app does that once the key has bubbled up to it), so stopping
        # it here keeps it from every non-priority binding. While the dialog is not
        # armed, every key is absorbed here and restarts the wait.
        if event.key == "escape":
            return  # always the safe answer: the binding refuses
        if not self.armed:
            event.stop()
            event.prevent_default()
            self._restart_arming()
            if event.is_printable and event.character:
                self.given_back.append(event.character)
                if self.give_back is not None:
                    self.give_back(event.character)
            return
        answer = self.answer_for(event.key)
        if answer is None:
            return  # scrolling keys and the like go on to the content's bindings
        event.stop()
        event.prevent_default()
        if answer != self.refusal:
            self._view_changed()
            if not self.seen_all:
                self._nudged = True
                self._show_keys()
                self.app.bell()
                return
        self.dismiss(answer)

    def action_refuse(self) -> None:
        self.dismiss(self.refusal)


class YesNoDialog(GuardedDialog[bool]):
    """A question ``y`` answers yes; ``n``, Enter and Escape no (send confirmation, a
    plan to run)."""

    def __init__(self, *, give_back: Callable[[str], object] | None = None) -> None:
        super().__init__(False, give_back=give_back)

    def answer_for(self, key: str) -> bool | None:
        if key == "y":
            return True
        if key in ("n", "enter"):
            return False
        return None
