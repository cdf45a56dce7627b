"""The dialogs where a person decides: command approval and send confirmation.

Both are ``GuardedDialog``s, built so that what is approved is what was seen, and so
that keys meant for something else cannot answer them:

* The whole command or message is shown, wrapped, never clipped. Longer content scrolls
  inside the dialog (arrows, PageUp/PageDown, Home/End, the wheel); the dialog states its
  size and where the view is, and ``y`` does nothing until the end has been on screen.
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
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Static

from zcoder.relay import Peer
from zcoder.relay.names import explicit_name
from zcoder.relay.sanitize import visible
from zcoder.tools import ApprovalDecision, CommandApprovalRequest
from zcoder.tui.widgets import content_text, screen_safe

__all__ = [
    "ARM_SECONDS",
    "MIN_DIALOG_HEIGHT",
    "MIN_DIALOG_WIDTH",
    "ApprovalScreen",
    "ConfirmSendScreen",
    "GuardedDialog",
    "content_text",
]

ARM_SECONDS: Final = 0.5
"""How long a dialog must be on screen with no key pressed before it takes an answer."""
WAITING_TEXT: Final = "waiting… keys you type now go back to your prompt"

# Smaller than this, a dialog cannot show its content, its position and its keys: it
# refuses instead (the command is denied, the message is not sent).
MIN_DIALOG_WIDTH: Final = 40
MIN_DIALOG_HEIGHT: Final = 12

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
GuardedDialog #position { color: $text-muted; height: 1; }
GuardedDialog #keys { text-style: bold; height: 2; }
GuardedDialog #keys.waiting { color: $warning; text-style: italic; }
"""


def size_text(text: str) -> str:
    lines = text.count("\n") + 1
    return f"{lines:,} line{'s' if lines != 1 else ''} · {len(text):,} characters"


T = TypeVar("T")


class GuardedDialog(ModalScreen[T], Generic[T]):
    """A dialog that takes no answer before it is armed and its content was seen whole.

    Subclasses give the title, the lines above the content, the content itself, the keys
    line, and ``answer_for(key)``: the answer a key gives, or None for a key that is not
    an answer. ``refusal`` is what Escape (and a dialog closed unanswered) means.
    """

    DEFAULT_CSS = DIALOG_CSS
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
        self.seen_end = False
        self.given_back: list[str] = []
        self._last_key = time.monotonic()
        self._arm_timer: Timer | None = None
        self._nudged = False  # an answer was tried before the end was seen
        self._content_rows = 0
        self._measure_retries = 0
        self._geometry_scrolls = False
        self.frame = Vertical(classes="dialog")
        self.content = VerticalScroll(id="content")
        self.position = Static("", id="position")
        self.keys = Static("", id="keys")

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
                yield Static(self.body_renderable())
            yield self.position
            yield self.keys

    def on_mount(self) -> None:
        self.content.focus()
        self._restart_arming()
        self.watch(self.content, "scroll_y", self._view_changed, init=False)
        self.call_after_refresh(self._view_changed)
        self._show_keys()

    def on_resize(self, _event: events.Resize) -> None:
        self.call_after_refresh(self._view_changed)

    # -- the view of the content ------------------------------------------------------

    def _fit(self) -> bool:
        """Give the content the rows the rest of the dialog leaves; True when it changed.

        The frame's height follows its content up to 90% of the screen; the content gets
        what the title, the details, the position and the keys leave, so those are never
        pushed off the dialog, and the content is never cut off below its scroll region.
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
            self._content_rows = rows
            self.content.styles.max_height = rows
            return True
        return False

    def _geometry(self) -> tuple[int, int, int] | None:
        """(first row shown, rows shown, rows in all), once the content was laid out.

        None while the content is not laid out or not wholly inside the dialog: rows that
        a clipped scroll region claims to show are not on screen, so they do not count.
        """
        content = self.content
        shown = content.scrollable_content_region.height
        total = content.virtual_size.height
        if shown <= 0 or total <= 0:
            return None
        inner = self.frame.content_region
        if not inner.contains_region(content.region) or not self.region.contains_region(
            self.frame.region
        ):
            return None
        return round(content.scroll_y), shown, total

    def _view_changed(self, *_args: Any) -> None:
        if self._fit():
            self.call_after_refresh(self._view_changed)  # measure again once laid out
            return
        geometry = self._geometry()
        size = size_text(self.body())
        if geometry is None:
            self.position.update(Text(size))
            # Not laid out yet (a new size is applied on a later refresh): look again.
            if self._measure_retries < MAX_MEASURE_RETRIES:
                self._measure_retries += 1
                self.set_timer(MEASURE_RETRY_SECONDS, self._view_changed)
            return
        self._measure_retries = 0
        top, shown, total = geometry
        bottom = min(total, top + shown)
        self._geometry_scrolls = total > shown
        if bottom >= total:
            self.seen_end = True
        if total <= shown:
            where = "all shown"
        else:
            where = f"rows {top + 1}–{bottom} of {total} ({100 * bottom // total}%)"
        self.position.update(Text(f"{size} · {where}", no_wrap=True, overflow="ellipsis"))
        self._show_keys()

    def _show_keys(self) -> None:
        """Two rows: the answer keys (or that the dialog is waiting), then what to do next."""
        self.keys.set_class(not self.armed, "waiting")
        if not self.armed:
            first, second = WAITING_TEXT, "Esc refuses"
        else:
            first = self.keys_text()
            if not self.seen_end:
                second = "scroll to the end to answer: ↓ PgDn End or the wheel"
                if self._nudged:
                    second = "not yet: " + second
            elif self._geometry_scrolls:
                second = "↑ ↓ PgUp PgDn Home End scroll"
            else:
                second = ""
        self.keys.update(Text(f"{first}\n{second}", no_wrap=True, overflow="ellipsis"))

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
            if not self.seen_end:
                self._nudged = True
                self._show_keys()
                self.app.bell()
                return
        self.dismiss(answer)

    def action_refuse(self) -> None:
        self.dismiss(self.refusal)


class ApprovalScreen(GuardedDialog[ApprovalDecision]):
    """run_command approval: y once, a for the rest of the process (when offered), n/Esc."""

    def __init__(
        self, request: CommandApprovalRequest, *, give_back: Callable[[str], object] | None = None
    ) -> None:
        super().__init__(ApprovalDecision.DENY, give_back=give_back)
        self.request = request

    def title_text(self) -> Text:
        sender = self.request.requested_by
        if sender:
            return Text(f"Run this command? — asked by a task relayed from {visible(sender)}")
        return Text("Run this command?")

    def meta(self) -> list[Static]:
        r = self.request
        widgets = [
            Static(
                Text(
                    f"in {screen_safe(str(r.cwd))} · timeout {r.timeout_seconds:g} s"
                    f" · {r.profile.value}"
                ),
                classes="meta",
            )
        ]
        if r.warning:
            widgets.append(Static(Text(f"warning: {screen_safe(r.warning)}"), classes="warning"))
        return widgets

    def body(self) -> str:
        return self.request.command

    def body_prefix(self) -> str:
        return "$ "

    def keys_text(self) -> str:
        r = self.request
        if r.allow_always:
            return "[y] run once   [a] allow commands for this process   [n]/Esc deny"
        if r.requested_by is not None:
            return "[y]/[a] run this one command   [n]/Esc deny   (a relayed task asks each time)"
        return "[y] run this command   [n]/Esc deny"

    def answer_for(self, key: str) -> ApprovalDecision | None:
        if key == "y":
            return ApprovalDecision.ONCE
        if key == "a":
            # Offered: the process-wide grant. In a relayed task's dialog `a` approves this
            # one command (the seed's rule); in sysadmin it is not an answer at all.
            if self.request.allow_always:
                return ApprovalDecision.ALWAYS
            return ApprovalDecision.ONCE if self.request.requested_by is not None else None
        if key == "n":
            return ApprovalDecision.DENY
        return None


class ConfirmSendScreen(GuardedDialog[bool]):
    """y/N before every send_agent_message delivery, with the exact target and message."""

    def __init__(
        self, peer: Peer, message: str, *, give_back: Callable[[str], object] | None = None
    ) -> None:
        super().__init__(False, give_back=give_back)
        self.peer = peer
        self.message = message

    def title_text(self) -> Text:
        return Text("Send this message to another zcoder agent?")

    def meta(self) -> list[Static]:
        p = self.peer
        named = explicit_name(p)
        who = f"{named} ({visible(p.project)})" if named else visible(p.project)
        return [
            Static(
                Text(
                    f"to {who} (pid {p.pid}) · instance {visible(p.instance_id)}\n"
                    f"   {visible(p.workspace)}"
                ),
                classes="meta",
            )
        ]

    def body(self) -> str:
        return self.message

    def keys_text(self) -> str:
        return "[y] send   [N]/Esc/Enter do not send"

    def answer_for(self, key: str) -> bool | None:
        if key == "y":
            return True
        if key in ("n", "enter"):
            return False
        return None
