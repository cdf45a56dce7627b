"""Commands in the app: output streaming into the entry, its tail on screen, the whole
output one key away (Ctrl+T, /output), and the user's own ``!commands``."""

from __future__ import annotations

import pytest
from rich.text import Text
from textual.widgets import Log, Static

from tests.fixtures.fake_ollama import Turn, call
from tests.tui.conftest import entries, idle, submit, wait_until
from zcoder.agent.prompts import INTERRUPTED
from zcoder.agent.user_command import USER_STOPPED
from zcoder.sessions import SessionStore
from zcoder.tui.dialogs.output import OutputScreen
from zcoder.tui.widgets.transcript import CommandEntry

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 40)


def commands(app) -> list[CommandEntry]:
    return list(app.transcript.query(CommandEntry))


def shown_output(entry: CommandEntry) -> list[str]:
    """The lines under the entry's header."""
    return entry.plain.splitlines()[1:]


async def run_until_step_1(pilot, app, fake) -> None:
    """A turn runs a command that prints "step 1", waits for a file "go" in the
    workspace, then prints "step 2"; returns once "step 1" is shown (--yes: not asked)."""
    command = "echo step 1; while [ ! -e go ]; do sleep 0.02; done; echo step 2"
    fake.enqueue(Turn.tool_calls(call("run_command", {"command": command})), Turn.text("done"))
    await submit(pilot, app, "run it")
    await wait_until(pilot, lambda: commands(app) and shown_output(commands(app)[0]))


def viewed(app) -> str:
    """The text of the open full-output view."""
    assert isinstance(app.screen, OutputScreen)
    return "\n".join(app.screen.lines)


async def test_the_entry_shows_output_while_the_command_runs(
    fake, make_config, app_factory, workspace
):
    app = app_factory(make_config(yes=True))
    async with app.run_test(size=SIZE) as pilot:
        await run_until_step_1(pilot, app, fake)
        [entry] = commands(app)
        assert shown_output(entry) == ["step 1"]
        assert entry.running and "— running" in entry.plain
        (workspace / "go").touch()
        await idle(pilot, app)
        assert shown_output(entry) == ["step 1", "step 2", "[exit code 0]"]
        assert "— completed" in entry.plain


async def test_a_long_output_shows_its_tail_and_all_of_it_is_one_key_away(
    fake, make_config, app_factory
):
    fake.enqueue(
        Turn.tool_calls(call("run_command", {"command": "seq 1 5000"})),
        Turn.tool_calls(call("run_command", {"command": "echo second"})),
        Turn.text("done"),
    )
    app = app_factory(make_config(yes=True))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "count")
        await idle(pilot, app)
        first, _second = commands(app)
        lines = first.plain.splitlines()
        assert lines[1] == "… 4,988 earlier lines · Ctrl+T shows the whole output"
        assert lines[2:] == [str(n) for n in range(4989, 5001)] + ["[exit code 0]"]

        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: isinstance(app.screen, OutputScreen))
        assert viewed(app) == "second\n[exit code 0]"  # the newest command
        await pilot.press("p")
        assert viewed(app) == "".join(f"{n}\n" for n in range(1, 5001)) + "[exit code 0]"
        view = app.screen.query_one(Log)
        await wait_until(pilot, lambda: view.max_scroll_y > 0 and view.is_vertical_scroll_end)
        await pilot.press("home")  # the keys scroll it
        await wait_until(pilot, lambda: view.scroll_y == 0)
        await pilot.press("n")
        assert viewed(app) == "second\n[exit code 0]"
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, OutputScreen))
        assert app.header_state.status == "Ready"  # Escape closed the view, stopped nothing

        await submit(pilot, app, "/output")
        await wait_until(pilot, lambda: isinstance(app.screen, OutputScreen))
        await pilot.press("ctrl+t")  # the same key closes it
        await wait_until(pilot, lambda: not isinstance(app.screen, OutputScreen))


async def test_the_key_says_so_when_no_command_ran(make_config, app_factory):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert not isinstance(app.screen, OutputScreen)
        assert "No command or tool call in this session yet." in entries(app, "system")[-1].plain


async def test_a_flood_of_output_is_kept_bounded_and_the_entry_bounded(
    fake, make_config, app_factory
):
    # About 4.9 MB in 600,000 lines: the screen keeps 1,000,000 characters, head and tail.
    command = "seq 1 600000"
    fake.enqueue(Turn.tool_calls(call("run_command", {"command": command})), Turn.text("ok"))
    app = app_factory(make_config(yes=True))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "flood")
        await idle(pilot, app, timeout=40)
        [entry] = commands(app)
        assert entry.output.lines == 600000
        assert len(entry.plain.splitlines()) == 1 + 1 + 12 + 1
        assert entry.plain.splitlines()[-2] == "600000"
        kept = entry.full_text()
        assert kept.startswith("1\n2\n3\n") and kept.endswith("599999\n600000\n[exit code 0]")
        assert "characters not kept here" in kept
        assert len(kept) < 1_000_200


async def test_escape_during_a_command_keeps_its_output_on_screen_and_in_the_session(
    fake, make_config, app_factory
):
    command = "echo long-1; echo long-2; sleep 300"
    fake.enqueue(Turn.tool_calls(call("run_command", {"command": command})))
    app = app_factory(make_config(yes=True))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "run it")
        await wait_until(
            pilot, lambda: commands(app) and "long-2" in shown_output(commands(app)[0])
        )
        await pilot.press("escape")
        await idle(pilot, app)
        [entry] = commands(app)
        assert shown_output(entry) == ["long-1", "long-2", f"[{INTERRUPTED}]"]
        assert "— interrupted" in entry.plain
        session = app.session_id
        shown = entry.plain
    with SessionStore(make_config().home) as store:
        data = store.load(session, make_config().workspace, "coding")
    [event] = [e for e in data.events if e.role == "tool"]
    assert event.text == f"long-1\nlong-2\n[{INTERRUPTED}]"
    # Reopened, the entry is the same.
    app2 = app_factory(make_config(), resume=session)
    async with app2.run_test(size=SIZE) as pilot:
        await pilot.pause()
        [again] = commands(app2)
        assert again.plain == shown


async def test_a_bang_command_runs_shows_and_becomes_context(
    fake, make_config, app_factory, workspace
):
    app = app_factory(make_config())  # the "ask" policy: a !command is not asked about
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "! printf 'sh%s\\n' ell-out; exit 4")
        await idle(pilot, app)
        # The warm-up's request is in (a prompt started before it would cancel it, and the
        # fake would record a request without a body).
        await wait_until(pilot, lambda: fake.load_requests)
        [entry] = entries(app, "shell")
        assert entry.plain.splitlines() == [
            "✗ $ printf 'sh%s\\n' ell-out; exit 4 — failed",
            "shell-out",
            "[exit code 4]",
        ]
        assert not entries(app, "user")
        assert fake.chat_bodies == []
        assert app.prompt_input.text == ""

        fake.enqueue(Turn.text("it printed shell-out"))
        await submit(pilot, app, "what did it print?")
        await idle(pilot, app)
        [body] = fake.chat_bodies
        contents = [m["content"] for m in body["messages"]]
        assert sum("shell-out" in c for c in contents) == 1
        assert contents[-1] == "what did it print?"
        session = app.session_id
        shown = entry.plain
    app2 = app_factory(make_config(), resume=session)
    async with app2.run_test(size=SIZE) as pilot:
        await pilot.pause()
        [again] = entries(app2, "shell")
        assert again.plain == shown


async def test_a_lone_bang_does_nothing(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        before = len(entries(app))
        await submit(pilot, app, "  ! ")
        await pilot.pause()
        assert len(entries(app)) == before
        assert not app.busy
        assert fake.chat_bodies == []


async def test_a_bang_command_during_a_turn_is_queued_and_escape_stops_it(
    fake, make_config, app_factory, workspace
):
    fake.enqueue(Turn.stall(before="thinking hard", seconds=30))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: fake.load_requests)  # the warm-up's request is in
        await submit(pilot, app, "a long question")
        await wait_until(pilot, lambda: "thinking hard" in entries(app, "assistant")[-1].plain)
        await submit(pilot, app, "!echo queued-out; sleep 300")
        assert app.scheduler.prompts() == ("!echo queued-out; sleep 300",)
        assert not entries(app, "shell")
        await pilot.press("escape")  # stops the turn; the queued command is held
        await idle(pilot, app)
        await submit(pilot, app, "/queue resume")  # and starts
        await wait_until(
            pilot, lambda: commands(app) and "queued-out" in shown_output(commands(app)[0])
        )
        assert app.busy
        await pilot.press("escape")  # stops the command
        await idle(pilot, app)
        [entry] = commands(app)
        assert entry.user_command
        assert shown_output(entry) == ["queued-out", f"[{USER_STOPPED}]"]
        record = app.agent.messages[-1]
        assert record["role"] == "user" and "queued-out" in record["content"]
        assert len(fake.chat_bodies) == 1


async def test_output_arriving_in_a_burst_is_drawn_once(make_config, app_factory, monkeypatch):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        entry = app.show(CommandEntry.for_user("yes"))
        await pilot.pause()
        assert isinstance(entry, CommandEntry)
        drawn: list[str] = []
        original = entry.show_text

        def counting(body: Text) -> None:
            drawn.append(body.plain)
            original(body)

        monkeypatch.setattr(entry, "show_text", counting)
        for n in range(10000):
            entry.append(f"y {n}\n")
        assert drawn == []  # nothing drawn per piece
        await wait_until(pilot, lambda: drawn)
        await pilot.pause(0.3)
        assert len(drawn) == 1
        assert drawn[0].splitlines()[-1] == "y 9999"


async def test_the_full_output_view_follows_a_running_command(
    fake, make_config, app_factory, workspace
):
    app = app_factory(make_config(yes=True))
    async with app.run_test(size=SIZE) as pilot:
        await run_until_step_1(pilot, app, fake)
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: isinstance(app.screen, OutputScreen))
        assert viewed(app) == "step 1"
        (workspace / "go").touch()
        await wait_until(pilot, lambda: viewed(app) == "step 1\nstep 2\n[exit code 0]")
        assert "completed" in str(app.screen.query_one(".title", Static).render())


async def test_the_help_of_diff_says_what_it_shows(make_config, app_factory):
    # It read "the files changed this session: the net diff of each", as if cut off.
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "/help")
        await wait_until(pilot, lambda: "/diff" in "".join(e.plain for e in entries(app)))
        help_text = " ".join(" ".join(e.plain.split()) for e in entries(app, "system"))
        assert (
            "/diff show every file the agent changed this session, as one diff per file: from "
            "before its first edit to what is on disk now"
        ) in help_text
