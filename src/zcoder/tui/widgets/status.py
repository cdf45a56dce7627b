"""The header bar: status badge, model, project, profile, context meter and relay state.

The status badge is what the user trusts to know whether zcoder is working, and on what:
``Waiting for model`` until the model streams anything, ``Thinking`` while its reasoning
streams, ``Writing reply`` while the reply's text does, ``Running command`` or ``Tool:
name`` while a tool runs (tui/parts/agent_view.py says which). While something is under way the
badge spins and counts the seconds of that step (``⠋ Waiting for model 12s``). The
spinner's timer runs only while something is under way; an idle header is drawn once per
change and never again.

Narrow terminals drop the header's lesser parts, in ``REDUCTIONS`` order, so the badge,
the model and the relay state stay on screen down to 40 columns (the model name is cut
with an ellipsis before anything of the badge is lost). The terminal's title follows
the state (tui/state/terminal_title.py), not the spinner.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from rich.text import Text
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget

from zcoder.agent.status import ContextUsage, Status
from zcoder.tui.messages import HeaderFields
from zcoder.tui.state.terminal_title import TerminalTitle
from zcoder.tui.widgets.shared import screen_safe

__all__ = [
    "ACTIVE_STATUSES",
    "CHECKING_GOAL",
    "MODEL_MIN_CELLS",
    "REDUCTIONS",
    "RUNNING_COMMAND",
    "SPINNER_FRAMES",
    "SPINNER_SECONDS",
    "WAITING_FOR_MODEL",
    "WAITING_FOR_YOU",
    "WORKED_NOTE_SECONDS",
    "WRITING_REPLY",
    "HeaderBar",
    "HeaderState",
    "elapsed_text",
    "git_branch",
    "header_line",
    "is_active",
    "meter_text",
    "turn_summary",
]

SPINNER_FRAMES: Final = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPINNER_SECONDS: Final = 0.125
"""How often the badge is drawn again while busy: eight frames a second."""
WAITING_FOR_MODEL: Final = "Waiting for model"
"""The badge from a request's start until the model streams anything (a local model reads
the whole prompt first)."""
WRITING_REPLY: Final = "Writing reply"
"""The badge while the reply's text streams (``Thinking`` only while reasoning streams)."""
RUNNING_COMMAND: Final = "Running command"
"""The badge while a run_command call runs (other tools: ``Tool: name``)."""
CHECKING_GOAL: Final = "Checking goal"
"""The badge while a goal's independent check runs (tui/parts/goal_ui.py)."""
ACTIVE_STATUSES: Final = frozenset(
    {
        Status.THINKING.value,
        Status.WARMING_UP.value,
        WAITING_FOR_MODEL,
        WRITING_REPLY,
        RUNNING_COMMAND,
        "Compacting",
        CHECKING_GOAL,
    }
)
"""Statuses that mean "wait, something is under way" (and every ``Tool: name``)."""
WAITING_FOR_YOU: Final = "Waiting for you"
"""The badge and the title while a dialog waits for the user's answer."""
WORKED_NOTE_SECONDS: Final = 3.0
"""A turn at least this long says in the transcript how long it took (a stopped turn
always says it was stopped)."""
MODEL_MIN_CELLS: Final = 4
"""The fewest cells the model name is cut to (with its ellipsis) before it is dropped."""

BADGE_STYLES: Final = {
    Status.READY.value: "bold black on green",
    Status.WARMING_UP.value: "bold black on yellow",
    Status.THINKING.value: "bold black on cyan",
    Status.ERROR.value: "bold white on red",
    Status.STOPPED.value: "bold black on yellow",
    Status.BLOCKED.value: "bold white on red",
    Status.LOOP_STOPPED.value: "bold white on red",
    Status.INCOMPLETE.value: "bold black on yellow",
    WAITING_FOR_YOU: "bold black on yellow",
}
DEFAULT_BADGE_STYLE: Final = "bold black on cyan"
MODE_STYLES: Final = {"ask": "dim", "accept-edits": "bold magenta", "plan": "bold black on blue"}
"""The permission mode's word in the header: plan mode stands out (nothing gets written)."""

REDUCTIONS: Final = (
    "version",  # "zcoder 0.1.0" -> "zcoder"
    "host",  # "model@host" -> "model"
    "branch",  # "project (branch)" -> "project"
    "profile",
    "ask_mode",  # the default mode's word; another mode is always shown
    "meter_detail",  # "ctx 3.2k/32k 10%" -> "ctx 10%"
    "project",
    "name",  # "zcoder"
    "meter",
    "goal_detail",  # "goal 3 turns · 12k/50k" -> "goal 12k/50k"
    "separators",  # " │ " -> "│" (parts stay apart: "1 job│goal 2 · 9k/50k")
    "relay_detail",  # "relay: ready · 3 queued · waiting for you" -> "relay: ready · 3 waiting"
)
"""What a narrow header gives up, first to last. The badge, the model (cut to fit) and the
relay state are never in this list."""


def is_active(status: str) -> bool:
    """True while zcoder waits for the model or a tool: the badge spins and counts."""
    return status in ACTIVE_STATUSES or status.startswith(f"{Status.TOOL.value}:")


def elapsed_text(seconds: float) -> str:
    """``0s``, ``12s``, ``1m 05s``, ``2h 03m``: whole seconds, never negative."""
    whole = max(0, int(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60:02d}s"
    return f"{whole // 3600}h {whole % 3600 // 60:02d}m"


def turn_summary(seconds: float, *, stopped: bool) -> str | None:
    """The transcript's line at the end of a turn, or None for a quick one."""
    if stopped:
        return f"✻ Stopped after {elapsed_text(seconds)}"
    if seconds >= WORKED_NOTE_SECONDS:
        return f"✻ Worked for {elapsed_text(seconds)}"
    return None


def git_branch(workspace: Path) -> str | None:
    """The checked-out branch, read from .git/HEAD (no git process at start-up)."""
    for directory in (workspace, *workspace.parents):
        head = directory / ".git" / "HEAD"
        try:
            text = head.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        if text.startswith("ref: refs/heads/"):
            return text.removeprefix("ref: refs/heads/")
        return text[:10] or None
    return None


_CHANGING: Final = (
    "model", "status", "relay", "queued", "held", "waiting", "context", "asking", "jobs",
    "goal", "mode",
)  # fmt: skip
"""The header's fields that change while zcoder runs (``HeaderBar``'s reactives)."""


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
    queued: int = 0  # relayed tasks waiting their turn to run
    held: int = 0  # relayed tasks held for the user (/agents held)
    waiting: bool = False  # queued relayed tasks wait for the user (the auto-turn limit)
    context: ContextUsage | None = None  # the meter: tokens used of the window
    asking: bool = False  # a dialog waits for the user's answer
    jobs: int = 0  # background commands running (tools/jobs.py)
    goal: tuple[str, str] = ("", "")  # the goal's words, long and short (agent/goal.py)
    mode: str = "ask"  # the permission mode (zcoder.tools.modes.Mode's value); "": none here

    @property
    def label(self) -> str:
        """What the badge says (without the spinner and the seconds)."""
        return WAITING_FOR_YOU if self.asking else self.status

    @property
    def title_state(self) -> str:
        """The state the terminal's title names: the badge, or that the user is awaited."""
        if self.asking or (self.waiting and not is_active(self.status)):
            return WAITING_FOR_YOU
        return self.status


def header_line(
    state: HeaderState,
    width: int,
    *,
    spinner: str = "",
    elapsed: float | None = None,
) -> Text:
    """The header's one row for ``width`` cells (0: unknown, everything is shown).

    The lesser parts are dropped in ``REDUCTIONS`` order until the row fits; then the
    model is cut with an ellipsis; the badge comes whole whatever the width.
    """
    badge = state.label
    if spinner:
        badge = f"{spinner} {badge}"
    # The layout is chosen for the widest count of the same kind ("59s", "9m 59s"), so the
    # header does not change shape each time the count gains a digit.
    fit_badge = badge
    if elapsed is not None:
        count = elapsed_text(elapsed)
        badge = f"{badge} {count}"
        fit_badge = f"{fit_badge} {re.sub(r'[0-9]', '9', count).rjust(3, '9')}"
    text = Text()
    for level in range(len(REDUCTIONS) + 1):
        dropped = frozenset(REDUCTIONS[:level])
        if width <= 0 or _assemble(state, fit_badge, dropped, model=None).cell_len <= width:
            return _assemble(state, badge, dropped, model=None)
    # Everything lesser is gone: the model gets what the badge and the relay state leave.
    dropped = frozenset(REDUCTIONS)
    without = _assemble(state, fit_badge, dropped, model="")
    room = width - without.cell_len
    if room >= MODEL_MIN_CELLS:
        return _assemble(state, badge, dropped, model=room)
    text = _assemble(state, badge, dropped, model=0)
    text.truncate(width, overflow="ellipsis")
    return text


def _assemble(
    state: HeaderState, badge: str, dropped: frozenset[str], *, model: int | str | None
) -> Text:
    """One form of the row. ``model``: None for the whole name, a width to cut it to,
    "" for the room its separator takes, 0 for no model at all."""
    sep = Text("│" if "separators" in dropped else " │ ", style="dim")
    parts: list[Text] = []
    if "name" not in dropped:
        name = "zcoder" if "version" in dropped else f"zcoder {state.version}"
        parts.append(Text(name, style="bold"))
    if model != 0:
        name = state.model if "host" in dropped else f"{state.model}@{state.host}"
        shown = Text(screen_safe(name))
        if isinstance(model, int):
            shown.truncate(model, overflow="ellipsis")
        elif model == "":
            shown = Text()
        parts.append(shown)
    if "project" not in dropped:
        with_branch = state.branch and "branch" not in dropped
        parts.append(
            Text(screen_safe(state.project + (f" ({state.branch})" if with_branch else "")))
        )
    if "profile" not in dropped:
        parts.append(Text(state.profile))
    status = Text(
        f" {screen_safe(badge)} ", style=BADGE_STYLES.get(state.label, DEFAULT_BADGE_STYLE)
    )
    if state.context is not None and "meter" not in dropped:
        meter, meter_style = meter_text(state.context, short="meter_detail" in dropped)
        status.append(" ")
        status.append(meter, style=meter_style)
    if state.jobs:  # beside the badge: it stays however narrow the header
        status.append(f" {state.jobs} job{'s' if state.jobs != 1 else ''}", style="bold")
    parts.append(status)
    if state.goal[0]:
        parts.append(Text(state.goal[1 if "goal_detail" in dropped else 0], style="bold"))
    if state.mode and (state.mode != "ask" or "ask_mode" not in dropped):
        parts.append(Text(state.mode.replace("-", " "), style=MODE_STYLES.get(state.mode, "")))
    relay = Text(f"relay: {state.relay}")
    if state.queued:
        if "relay_detail" in dropped:
            word = "waiting" if state.waiting else "queued"
            relay.append(f" · {state.queued} {word}", style="bold magenta")
        else:
            relay.append(f" · {state.queued} queued", style="bold magenta")
            if state.waiting:
                relay.append(" · waiting for you", style="bold black on yellow")
    if state.held:
        relay.append(f" · {state.held} held", style="bold magenta")
    parts.append(relay)
    text = sep.join(parts)
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text


class HeaderBar(Widget):
    """zcoder · model@host · project (branch) · profile · [status] meter · mode · relay
    state · queued (· waiting for you), narrowed by ``header_line``.

    What changes is a reactive (``status``, ``model``, ``relay``, ``queued``, ``held``,
    ``waiting``, ``context``, ``asking``, ``mode``): the main screen sets them from the messages the
    parts post (``HeaderFields``, ``ModelChanged``, tui/messages.py) and from a turn's start
    and end. A field set to the value it has changes nothing: the relay poll sets the
    relay's fields every second and an idle header is not drawn again. ``state`` is what
    is shown, as one ``HeaderState``."""

    DEFAULT_CSS = """
    HeaderBar { height: 1; background: $primary-background; color: $text; padding: 0 1; }
    """

    model: reactive[str] = reactive("")
    status: reactive[str] = reactive("Ready")
    relay: reactive[str] = reactive("off")
    queued: reactive[int] = reactive(0)
    held: reactive[int] = reactive(0)
    waiting: reactive[bool] = reactive(False)
    context: reactive[ContextUsage | None] = reactive(None)
    asking: reactive[bool] = reactive(False)
    jobs: reactive[int] = reactive(0)
    goal: reactive[tuple[str, str]] = reactive(("", ""))
    mode: reactive[str] = reactive("ask")

    def __init__(
        self,
        state: HeaderState,
        *,
        terminal_title: TerminalTitle | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self._fixed = state  # version, host, project, branch, profile: set once
        self.terminal_title = terminal_title
        self.clock = clock
        self._label = ""
        self._since = clock()  # when the badge last changed what it says
        self._spinner: Timer | None = None
        self._turn_started: float | None = None
        for name in _CHANGING:
            self.set_reactive(getattr(HeaderBar, name), getattr(state, name))

    @property
    def state(self) -> HeaderState:
        """What the header shows now."""
        return dataclasses.replace(self._fixed, **{name: getattr(self, name) for name in _CHANGING})

    # -- what the header shows ------------------------------------------------------------

    def on_mount(self) -> None:
        if self.terminal_title is not None:
            self.terminal_title.start(self.app)
        self._sync()

    def on_unmount(self) -> None:
        self._stop_spinner()
        if self.terminal_title is not None:
            self.terminal_title.restore()

    def on_header_fields(self, message: HeaderFields) -> None:
        """Fields a part changed (tui/messages.py); a warm-up's Ready (``idle_only``)
        does not undo a turn that started since."""
        message.stop()
        if not (message.idle_only and self._turn_started is not None):
            self.refresh_state(**message.changes)

    def refresh_state(self, **changes: Any) -> None:
        """Set the fields in ``changes``; only those that change anything are drawn. The
        fields set once (``project``, ``profile``...) may change too (``--connect`` learns
        them from the remote host), drawn at once."""
        fixed = {key: value for key, value in changes.items() if key not in _CHANGING}
        for key, value in changes.items():
            if key in _CHANGING:
                setattr(self, key, value)
        if fixed:
            self._fixed = dataclasses.replace(self._fixed, **fixed)
            if self.is_mounted:
                self._sync()

    def _sync(self) -> None:
        """The spinner, the title and the drawing follow the state."""
        state = self.state
        label = state.label
        if label != self._label:
            self._label, self._since = label, self.clock()
        if is_active(label):
            self._start_spinner()
        else:
            self._stop_spinner()
        if self.terminal_title is not None:
            self.terminal_title.show(state.title_state)
        self.refresh()

    # Every field's change is drawn the same way.
    watch_model = watch_status = watch_relay = watch_queued = _sync
    watch_held = watch_context = watch_asking = watch_jobs = watch_goal = _sync
    watch_held = watch_context = watch_asking = watch_mode = _sync

    def watch_waiting(self) -> None:
        self._sync()
        if self.is_mounted:
            self.app.refresh_bindings()  # the continue key is in the footer only then

    @property
    def spinning(self) -> bool:
        """True while the spinner's timer runs (only while something is under way)."""
        return self._spinner is not None

    def render(self) -> Text:
        state = self.state
        spinner, elapsed = "", None
        if is_active(state.label):
            elapsed = max(0.0, self.clock() - self._since)
            spinner = SPINNER_FRAMES[int(elapsed / SPINNER_SECONDS) % len(SPINNER_FRAMES)]
        return header_line(state, self.content_size.width, spinner=spinner, elapsed=elapsed)

    def _start_spinner(self) -> None:
        if self._spinner is None and self.is_mounted:
            self._spinner = self.set_interval(SPINNER_SECONDS, self._tick)

    def _tick(self) -> None:
        self.refresh()  # the next frame and count; nothing else changes

    def _stop_spinner(self) -> None:
        if self._spinner is not None:
            self._spinner.stop()
            self._spinner = None

    # -- a turn's length --------------------------------------------------------------

    def turn_started(self) -> None:
        """A turn began: the badge spins at once, before the agent says what it does."""
        self._turn_started = self.clock()
        if not is_active(self.status):
            self.refresh_state(status=WAITING_FOR_MODEL)

    def turn_ended(self, *, stopped: bool, failed: bool) -> float:
        """The turn's worker ended: its length in seconds. A badge the agent left
        spinning (the turn ended before it could say so) says how it ended."""
        started, self._turn_started = self._turn_started, None
        if is_active(self.status):
            if stopped:
                final = Status.STOPPED.value
            else:
                final = Status.ERROR.value if failed else Status.READY.value
            self.refresh_state(status=final)
        return 0.0 if started is None else max(0.0, self.clock() - started)


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


def meter_text(usage: ContextUsage, *, short: bool = False) -> tuple[str, str]:
    """``ctx 3.2k/32k 10%`` (``~`` before an estimate), and its style; ``short``:
    ``ctx 10%``."""
    used = ("~" if not usage.measured else "") + _short(usage.used)
    percent = usage.percent
    if usage.window is None or percent is None:
        return f"ctx {used}", "dim"
    style = "dim"
    if percent >= METER_FULL_PERCENT:
        style = "bold white on red"
    elif percent >= METER_WARN_PERCENT:
        style = "bold black on yellow"
    if short:
        return f"ctx {percent}%", style
    return f"ctx {used}/{_short(usage.window)} {percent}%", style
