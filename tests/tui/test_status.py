"""Status you can trust: the header at every width, the spinner and its count, the turn's
length, the terminal's title and Ctrl+C.

The header is read as drawn (the row the compositor gets from the widget), at the sizes a
user has. Times come from an injected clock: nothing here waits for seconds to pass.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from rich.text import Text

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.fixtures.model_requests import stopped_requests
from tests.tui.conftest import answer, entries, idle, submit, transcript_text, wait_until
from zcoder.agent import ContextUsage
from zcoder.tools import ApprovalDecision
from zcoder.tui.app import ZcoderApp
from zcoder.tui.dialogs.approval import ApprovalScreen
from zcoder.tui.dialogs.model_picker import ModelPicker
from zcoder.tui.state.interrupt import QUIT_AGAIN_TEXT, CtrlC, Press
from zcoder.tui.state.terminal_title import (
    TITLE_POP,
    TITLE_PUSH,
    TerminalTitle,
    title_sequence,
    title_text,
)
from zcoder.tui.widgets.status import (
    REDUCTIONS,
    SPINNER_FRAMES,
    HeaderState,
    elapsed_text,
    header_line,
    turn_summary,
)

pytestmark = pytest.mark.timeout(60)

LONG_MODEL = "qwen3-coder:30b-a3b-instruct-q4_K_M"


class FakeClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def state(**changes: object) -> HeaderState:
    base = HeaderState(
        version="0.9.1",
        model=LONG_MODEL,
        host="127.0.0.1:11434",
        project="billing-service",
        branch="feature/invoices",
        profile="coding",
        relay="ready",
        context=ContextUsage(used=3200, window=32768, measured=True),
    )
    for key, value in changes.items():
        setattr(base, key, value)
    return base


# -- the header's row, width by width ------------------------------------------------------


def test_a_wide_header_shows_everything() -> None:
    row = header_line(state(), 200, spinner="⠋", elapsed=12).plain
    for part in (
        "zcoder 0.9.1",
        f"{LONG_MODEL}@127.0.0.1:11434",
        "billing-service (feature/invoices)",
        "coding",
        "⠋ Ready 12s",
        "ctx 3.2k/32k 10%",
        "relay: ready",
    ):
        assert part in row


@pytest.mark.parametrize("width", range(20, 201))
def test_the_badge_and_relay_state_survive_every_width(width: int) -> None:
    """Down to where the badge itself no longer fits with the relay state, both stay whole,
    and the row never overflows."""
    s = state(status="Thinking")
    row = header_line(s, width, spinner="⠙", elapsed=75)
    assert row.cell_len <= width
    if width >= len(" ⠙ Thinking 1m 15s ") + len(" relay: ready"):
        assert "⠙ Thinking 1m 15s" in row.plain
        assert "relay: ready" in row.plain


def test_lesser_parts_go_in_the_defined_order() -> None:
    s = state(status="Thinking")
    wide = header_line(s, 0, spinner="⠋", elapsed=5).plain
    seen_gone: list[str] = []
    markers = {
        "version": "0.9.1",
        "host": "@127.0.0.1",
        "branch": "(feature/invoices)",
        "profile": "coding",
        "meter_detail": "3.2k/32k",
        "project": "billing-service",
        "name": "zcoder",
        "meter": "ctx",
        "separators": " │ ",
    }
    for marker in markers.values():
        assert marker in wide
    for width in range(len(wide), 30, -1):
        row = header_line(s, width, spinner="⠋", elapsed=5).plain
        for name, marker in markers.items():
            if marker not in row and name not in seen_gone:
                seen_gone.append(name)
    assert seen_gone == [name for name in REDUCTIONS if name in markers]


def test_a_long_model_name_is_cut_with_an_ellipsis_before_the_badge_loses_anything() -> None:
    row = header_line(state(status="Thinking"), 44, spinner="⠋", elapsed=9).plain
    assert "⠋ Thinking 9s" in row and "relay: ready" in row
    assert re.search(r"qwen3-co\S*…", row), row


def test_the_layout_does_not_jump_when_the_count_gains_a_digit() -> None:
    s = state(status="Thinking")
    for width in (60, 80, 100):
        shapes = {
            header_line(s, width, spinner="⠋", elapsed=seconds).plain.replace(
                elapsed_text(seconds), "#"
            )
            for seconds in (0, 5, 9, 10, 42, 59)
        }
        assert len(shapes) == 1, shapes


def test_waiting_relayed_tasks_stay_visible_when_narrow() -> None:
    s = state(queued=3, waiting=True)
    assert "relay: ready · 3 queued · waiting for you" in header_line(s, 200).plain
    assert "relay: ready · 3 waiting" in header_line(s, 58).plain


def test_held_relayed_tasks_are_shown_as_held_not_queued() -> None:
    s = state(queued=0, held=2)
    row = header_line(s, 200).plain
    assert "relay: ready · 2 held" in row and "queued" not in row
    both = header_line(state(queued=1, held=2), 200).plain
    assert "relay: ready · 1 queued · 2 held" in both


def test_names_from_outside_cannot_drive_the_terminal() -> None:
    s = state(model="evil\x1b]2;pwned\x07", project="proj\x1b[2J", branch="b\x9bx")
    row = header_line(s, 0).plain
    assert "\x1b" not in row and "\x07" not in row and "\x9b" not in row
    assert "evil\\e]2;pwned\\x07" in row


def test_elapsed_and_turn_summary() -> None:
    assert [elapsed_text(s) for s in (-1, 0, 9.9, 59, 60, 65, 3599, 3600, 7380)] == [
        "0s",
        "0s",
        "9s",
        "59s",
        "1m 00s",
        "1m 05s",
        "59m 59s",
        "1h 00m",
        "2h 03m",
    ]
    assert turn_summary(1.0, stopped=False) is None
    assert turn_summary(12.4, stopped=False) == "✻ Worked for 12s"
    assert turn_summary(0.2, stopped=True) == "✻ Stopped after 0s"


# -- the terminal's title -----------------------------------------------------------------


def test_the_title_cannot_be_ended_early_by_a_project_name() -> None:
    hostile = "p\x07\x1b]2;owned\x1b\\\x9c\x9d\n\tx"
    title = title_text(hostile, "Ready")
    sequence = title_sequence(title)
    assert sequence.startswith("\x1b]2;zcoder · p") and sequence.endswith("\x07")
    inner = sequence[len("\x1b]2;") : -1]
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in inner), inner
    assert "\\x07" in inner and "\\e]2;owned" in inner


def test_the_title_is_written_on_change_only_and_restored() -> None:
    class Driver:
        def __init__(self) -> None:
            self.out: list[str] = []

        def write(self, data: str) -> None:
            self.out.append(data)

    class App:
        is_headless = False

        def __init__(self) -> None:
            self._driver = Driver()

    app = App()
    title = TerminalTitle("proj")
    title.show("Ready")  # before start: nothing is written
    title.start(app)
    title.show("Thinking")
    title.show("Thinking")
    title.show("Ready")
    title.restore()
    title.show("Thinking")  # after the restore: nothing
    assert app._driver.out == [
        TITLE_PUSH,
        "\x1b]2;zcoder · proj · Thinking\x07",
        "\x1b]2;zcoder · proj · Ready\x07",
        TITLE_POP,
    ]


# -- Ctrl+C's window, on an injected clock -------------------------------------------------


def test_ctrl_c_window() -> None:
    clock = FakeClock()
    ctrl_c = CtrlC(clock=clock)
    assert ctrl_c.press(running=False) is Press.WARN  # idle: one press only warns
    clock.now += 1.99
    assert ctrl_c.press(running=False) is Press.QUIT  # a second within two seconds quits
    assert ctrl_c.press(running=True) is Press.STOP
    clock.now += 1.99
    assert ctrl_c.press(running=True) is Press.QUIT  # within two seconds
    ctrl_c = CtrlC(clock=clock)
    assert ctrl_c.press(running=True) is Press.STOP
    clock.now += 2.01
    assert ctrl_c.press(running=True) is Press.STOP  # too late: it stops the next turn
    clock.now += 2.01
    assert ctrl_c.press(running=False) is Press.WARN  # too late: it warns again
    clock.now += 0.5
    assert ctrl_c.press(running=False) is Press.QUIT
    clock.now += 0.1
    # The press after a quit decision starts afresh (no window left over).
    assert ctrl_c.press(running=True) is Press.STOP
    ctrl_c.forget()  # a press that cleared a draft in between
    assert ctrl_c.press(running=False) is Press.WARN


def test_ctrl_c_window_is_the_constant_as_it_is_when_made(monkeypatch) -> None:
    from zcoder.tui.state import interrupt

    monkeypatch.setattr(interrupt, "QUIT_WINDOW_SECONDS", 600.0)
    clock = FakeClock()
    ctrl_c = CtrlC(clock=clock)
    assert ctrl_c.window == 600.0
    assert ctrl_c.press(running=False) is Press.WARN
    clock.now += 599
    assert ctrl_c.press(running=False) is Press.QUIT


# -- the real app ---------------------------------------------------------------------------


def turn_requests(fake: FakeOllama) -> list[Any]:
    """The turns' chat requests. A warm-up cut short by the turn may be recorded with no
    body at all (None): it is not one of them."""
    return [body for body in fake.chat_bodies if body]


def header_row(app: ZcoderApp) -> str:
    """The header's row as drawn."""
    return app.header.render_line(0).text


@pytest.mark.parametrize("width", [160, 100, 80, 60, 40])
async def test_the_drawn_header_keeps_status_model_and_relay(fake, make_config, app_factory, width):
    app = app_factory(make_config(model=LONG_MODEL))
    async with app.run_test(size=(width, 15)) as pilot:
        await wait_until(pilot, lambda: fake.load_requests and app.header_state.status == "Ready")
        await wait_until(pilot, lambda: "relay: ready" in header_row(app))
        clock = FakeClock()
        app.header.clock = clock
        app.header.refresh_state(status="Thinking")
        clock.now += 7
        await pilot.pause(0.3)
        row = header_row(app)
        assert len(row) <= width - 2  # the header's padding: one cell each side
        assert re.search(rf"[{SPINNER_FRAMES}] Thinking 7s", row), row
        assert "relay: ready" in row
        assert "qwen3" in row, row
        if width >= 160:
            assert LONG_MODEL in row and "zcoder 0." in row
        if width <= 80:
            assert "zcoder 0." not in row  # the version went first
        if width == 100:
            assert LONG_MODEL in row
        if width <= 60:
            assert "…" in row  # the model was cut, not the badge


async def test_the_spinner_counts_a_slow_models_wait_and_stops_when_idle(
    fake, make_config, app_factory
):
    fake.enqueue(Turn.stall(), Turn.text("late reply"))
    app = app_factory(make_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: app.header_state.status == "Ready")
        assert not app.header.spinning  # idle: no timer at all
        clock = FakeClock()
        app.header.clock = clock
        await submit(pilot, app, "think hard")
        await wait_until(
            pilot, lambda: turn_requests(fake) and app.header_state.status == "Waiting for model"
        )
        assert app.header.spinning
        frames = set()
        counts = []
        for _ in range(3):
            clock.now += 4.06
            await pilot.pause(0.3)
            row = header_row(app)
            match = re.search(rf"([{SPINNER_FRAMES}]) Waiting for model (\d+)s", row)
            assert match, row
            frames.add(match.group(1))
            counts.append(match.group(2))
        assert counts == ["4", "8", "12"]
        assert len(frames) > 1  # it spins
        await pilot.press("escape")
        await idle(pilot, app)
        assert not app.header.spinning
        assert app.header_state.status == "Stopped"
        assert "✻ Stopped after 12s" in transcript_text(app)
        # Idle, the header is not drawn again (not by the relay poll either).
        drawn = []
        original = app.header.render

        def render() -> Text:
            drawn.append(1)
            row: Text = original()
            return row

        app.header.render = render
        await pilot.pause(1.5)
        assert drawn == []


async def test_a_long_turn_says_how_long_it_worked(fake, make_config, app_factory):
    fake.enqueue(Turn.text("done"), Turn.text("quick"))
    app = app_factory(make_config())
    async with app.run_test(size=(120, 30)) as pilot:
        clock = FakeClock()
        app.header.clock = clock
        original_started = app.header.turn_started

        def started() -> None:
            original_started()
            clock.now += 65  # the turn's end is read 65 s after its start

        app.header.turn_started = started
        await submit(pilot, app, "slow one")
        await idle(pilot, app)
        assert "✻ Worked for 1m 05s" in transcript_text(app)
        app.header.turn_started = original_started
        await submit(pilot, app, "fast one")
        await idle(pilot, app)
        assert transcript_text(app).count("✻") == 1  # a quick turn adds no line


async def two_prompts_under_a_fake_clock(
    pilot: Any, app: ZcoderApp, first: str, second: str
) -> FakeClock:
    """Ctrl+C's clock replaced by one the test moves; then the two prompts, the second
    queued behind the first. The clock, to move."""
    clock = FakeClock()
    app.ctrl_c.clock = clock
    await submit(pilot, app, first)
    app.prompt_input.load_text(second)
    await pilot.press("ctrl+g")  # a follow-up, after the turn
    await pilot.pause()
    return clock


async def test_ctrl_c_stops_the_turn_then_a_second_press_quits(fake, make_config, app_factory):
    fake.enqueue(Turn.stall(before="partial"), Turn.stall())
    app = app_factory(make_config())
    async with app.run_test(size=(100, 30)) as pilot:
        clock = await two_prompts_under_a_fake_clock(pilot, app, "first", "queued second")
        await wait_until(pilot, lambda: any("partial" in e.plain for e in entries(app)))
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: stopped_requests(fake) == 1)
        assert app.is_running
        assert any(n.message == QUIT_AGAIN_TEXT for n in app._notifications)
        # Escape's notice about the queued prompt, held until /queue resume.
        await wait_until(pilot, lambda: "1 waiting input is held" in transcript_text(app))
        assert len(turn_requests(fake)) == 1
        clock.now += 1.9
        await pilot.press("ctrl+c")  # within two seconds: quits
        await wait_until(pilot, lambda: not app.is_running)
    assert app.return_value == 0


async def test_ctrl_c_when_idle_asks_for_a_second_press_then_quits(make_config, app_factory):
    app = app_factory(make_config())
    async with app.run_test(size=(100, 30)) as pilot:
        clock = FakeClock()
        app.ctrl_c.clock = clock
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        assert any(n.message == QUIT_AGAIN_TEXT for n in app._notifications)
        clock.now += 1.9
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: not app.is_running)
    assert app.return_value == 0


async def test_ctrl_c_after_the_window_stops_the_next_turn_instead(fake, make_config, app_factory):
    fake.enqueue(Turn.stall(), Turn.stall())
    app = app_factory(make_config())
    async with app.run_test(size=(100, 30)) as pilot:
        clock = await two_prompts_under_a_fake_clock(pilot, app, "one", "two")
        await wait_until(pilot, lambda: len(turn_requests(fake)) == 1)
        await pilot.press("ctrl+c")  # stops the first; the second is held
        await idle(pilot, app)
        await submit(pilot, app, "/queue resume")
        await wait_until(pilot, lambda: len(turn_requests(fake)) == 2 and app.busy)
        clock.now += 2.5
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: stopped_requests(fake) == 2)
        await idle(pilot, app)
        assert app.is_running
        assert app.header_state.status == "Stopped"


@pytest.mark.parametrize("armed", [False, True], ids=["unarmed", "armed"])
async def test_ctrl_c_in_an_approval_dialog_denies_and_stops(
    fake, make_config, app_factory, workspace, armed
):
    fake.enqueue(Turn.tool_calls(call("run_command", {"command": "touch PWNED"})))
    app = app_factory(make_config())
    acted = []
    app.scheduler.note_user_acted = lambda: acted.append(1)
    async with app.run_test(size=(100, 30)) as pilot:
        await submit(pilot, app, "do it")
        acted.clear()
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        dialog = app.screen
        assert app.header_state.asking and "Waiting for you" in header_row(app)
        if armed:
            await wait_until(pilot, lambda: dialog.armed)
        results = []
        original = dialog.dismiss

        def dismiss(result: object = None) -> object:
            results.append(result)
            return original(result)

        dialog.dismiss = dismiss
        await pilot.press("ctrl+c")
        await idle(pilot, app)
        assert not isinstance(app.screen, ApprovalScreen)
        assert results == [ApprovalDecision.DENY]
        assert app.header_state.status == "Stopped" and not app.header_state.asking
        assert app.is_running
        assert acted == []  # closed by the stop: not an answer of the user's
    assert not (workspace / "PWNED").exists()
    assert len(turn_requests(fake)) == 1  # the turn ended: the model was not asked again


async def test_ctrl_c_closes_the_model_picker_like_escape(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker))
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: not isinstance(app.screen, ModelPicker))
        assert app.is_running
        assert app.header_state.model == make_config().model


async def test_the_title_follows_the_state_not_the_spinner(fake, make_config, app_factory):
    fake.enqueue(Turn.tool_calls(call("run_command", {"command": "true"})), Turn.text("ok"))
    app = app_factory(make_config())
    title = app.header.terminal_title
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.header_state.status == "Ready")
        await submit(pilot, app, "go")
        await answer(pilot, app, "y")
        await idle(pilot, app)
        await pilot.pause(0.5)
    project = make_config().workspace.name
    titles = [w for w in title.written if w.startswith("\x1b]2;")]
    states = [t.removeprefix(f"\x1b]2;zcoder · {project} · ").removesuffix("\x07") for t in titles]
    # Each change once, in order; the warm-up may or may not have been seen first.
    assert states[-7:] == [
        "Waiting for model",
        "Running command",
        "Waiting for you",
        "Running command",
        "Waiting for model",
        "Writing reply",
        "Ready",
    ]
    assert title.written[0] == TITLE_PUSH and title.written[-1] == TITLE_POP


def test_header_text_is_plain_rich_text() -> None:
    assert isinstance(header_line(state(), 80), Text)


async def test_ctrl_c_in_a_dialog_leaves_the_queued_prompt_running(
    fake, make_config, app_factory, workspace
):
    """The turn's dialog is closed by stopping the turn; no Escape is left over to stop
    the queued prompt that starts next."""
    fake.enqueue(
        Turn.tool_calls(call("run_command", {"command": "touch PWNED"})),
        Turn.text("the queued prompt is answered"),
    )
    app = app_factory(make_config())
    async with app.run_test(size=(100, 30)) as pilot:
        await submit(pilot, app, "do it")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        app.scheduler.queue_prompt("then this", last_accepted=0, oldest_waiting=None)
        await pilot.press("ctrl+c")  # holds the queued prompt, run on /queue resume
        await idle(pilot, app)
        await submit(pilot, app, "/queue resume")
        await wait_until(pilot, lambda: "the queued prompt is answered" in transcript_text(app))
        await idle(pilot, app)
        assert app.header_state.status == "Ready"
    assert not (workspace / "PWNED").exists()


async def test_the_badge_says_writing_reply_while_the_reply_streams(fake, make_config, app_factory):
    """Not "Thinking" while the reply's text is arriving (it stalls here mid-reply)."""
    fake.enqueue(Turn.stall(before="Here is the first half of my answer"))
    app = app_factory(make_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: app.header_state.status == "Ready")
        await submit(pilot, app, "answer slowly")
        await wait_until(pilot, lambda: "first half" in transcript_text(app))
        await wait_until(pilot, lambda: app.header_state.status == "Writing reply")
        assert "Writing reply" in header_row(app) and "Thinking" not in header_row(app)
        await pilot.press("escape")
        await idle(pilot, app)


async def test_the_badge_says_thinking_only_while_reasoning_streams(fake, make_config, app_factory):
    seen: list[str] = []
    fake.enqueue(Turn.thinking("let me weigh this " * 20, "the considered answer", delay=0.02))
    app = app_factory(make_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: app.header_state.status == "Ready")
        original = app.header.refresh_state

        def record(**changes: Any) -> None:
            if "status" in changes and (not seen or seen[-1] != changes["status"]):
                seen.append(changes["status"])
            original(**changes)

        app.header.refresh_state = record
        await submit(pilot, app, "think first")
        await wait_until(pilot, lambda: "the considered answer" in transcript_text(app))
        await idle(pilot, app)
    assert seen[:4] == ["Waiting for model", "Thinking", "Writing reply", "Ready"], seen


def test_a_narrow_header_keeps_the_job_count_and_the_goal_apart() -> None:
    # Without its separators' spaces it read "1 job goal 1 · 0/900k relay: busy".
    goal = ("goal 1 turn · 0/9k", "goal 1 · 0/9k")
    row = header_line(state(status="Writing reply", relay="busy", jobs=1, goal=goal), 60)
    assert row.cell_len <= 60
    assert "1 job│goal 1 · 0/9k│relay: busy" in row.plain, row.plain


async def test_a_new_session_is_ready_not_stopped_like_the_last_turn(
    fake, make_config, app_factory
):
    """The badge says how this session's last turn ended: after Escape stopped a turn,
    Ctrl+N's new session reads Ready (it kept `Stopped`)."""
    fake.enqueue(Turn.stall(before="partial"))
    app = app_factory(make_config())
    async with app.run_test(size=(100, 30)) as pilot:
        await submit(pilot, app, "first")
        await wait_until(pilot, lambda: any("partial" in e.plain for e in entries(app)))
        await pilot.press("escape")
        await idle(pilot, app)
        assert app.header_state.status == "Stopped"
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: "New session." in transcript_text(app))
        assert app.header_state.status == "Ready"
