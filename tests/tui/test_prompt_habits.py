"""Up/Down recall, Ctrl+R search and Tab completion in the real app (Pilot: the logic; the
keys as a terminal sends them are tests/e2e/test_prompt_habits_e2e.py's)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures.fake_ollama import Turn
from tests.tui.conftest import entries, idle, submit, transcript_text, wait_until
from zcoder.slash.registry import commands
from zcoder.tui import ZcoderApp
from zcoder.tui.state.completion import command_words
from zcoder.tui.state.history import history_path

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 40)


def sent_prompts(fake: Any) -> list[str]:
    return [
        [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        for body in fake.chat_bodies
    ]


async def send_all(pilot: Any, app: ZcoderApp, fake: Any, *texts: str) -> None:
    for text in texts:
        if not text.startswith("/"):
            fake.enqueue(Turn.text("ok"))
        await submit(pilot, app, text)
        await idle(pilot, app)


async def start_a_long_turn(pilot: Any, app: ZcoderApp, fake: Any, prompt: str) -> None:
    """``prompt`` starts a turn that stalls until stopped; returns once it runs."""
    fake.enqueue(Turn.stall(before="working"))
    await submit(pilot, app, prompt)
    await wait_until(pilot, lambda: app.busy)


async def type_text(pilot: Any, text: str) -> None:
    await pilot.press(*("space" if c == " " else c for c in text))


def title(app: ZcoderApp) -> str:
    """The prompt's upper border as shown: the search line."""
    return app.prompt_input.habits.search_line


def subtitle(app: ZcoderApp) -> str:
    """The prompt's lower border as shown: Tab's choices."""
    return app.prompt_input.habits.choices_line


def cursor(app: ZcoderApp) -> tuple[int, int]:
    row, column = app.prompt_input.cursor_location
    return row, column


async def test_prompts_are_recalled_in_the_next_run_multi_line_exactly(
    fake, make_config, app_factory
):
    config = make_config()
    first = app_factory(config)
    async with first.run_test(size=SIZE) as pilot:
        await send_all(pilot, first, fake, "first prompt", "/context", "two\nlines  ")
    assert history_path(config.home, config.workspace).exists()

    second = app_factory(config)
    async with second.run_test(size=SIZE) as pilot:
        prompt = second.prompt_input
        await pilot.press("up")
        assert prompt.text == "two\nlines  "
        assert cursor(second) == (0, 3)  # the end of the first line: Up again goes on
        await pilot.press("up")
        assert prompt.text == "/context"
        await pilot.press("up")
        assert prompt.text == "first prompt"
        await pilot.press("up")  # the oldest: stays
        assert prompt.text == "first prompt"
        await pilot.press("down", "down")
        assert prompt.text == "two\nlines  "
        assert cursor(second) == (1, 7)  # the end: Down again goes on
        await pilot.press("down")
        assert prompt.text == ""
        # Sent again from the history: the model gets it exactly.
        await pilot.press("up", "up", "up")
        fake.enqueue(Turn.text("again"))
        await pilot.press("enter")
        await idle(pilot, second)
    assert sent_prompts(fake) == ["first prompt", "two\nlines  ", "first prompt"]


async def test_the_draft_comes_back_and_edits_stay_until_sent(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await send_all(pilot, app, fake, "alpha", "beta")
        prompt = app.prompt_input
        await type_text(pilot, "my draft")
        await pilot.press("up")
        assert prompt.text == "beta"
        await type_text(pilot, " edited")
        await pilot.press("up")
        assert prompt.text == "alpha"
        await pilot.press("down")
        assert prompt.text == "beta edited"
        await pilot.press("down")
        assert prompt.text == "my draft"
        assert app.focused is prompt


async def test_up_and_down_move_inside_a_multi_line_input_first(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await send_all(pilot, app, fake, "earlier")
        prompt = app.prompt_input
        prompt.load_text("line one\nline two\nline three")
        prompt.move_cursor((2, 4))
        await pilot.press("up")
        assert cursor(app) == (1, 4) and prompt.text.startswith("line one")
        await pilot.press("up")
        assert cursor(app) == (0, 4)
        await pilot.press("down", "down")
        assert cursor(app) == (2, 4)
        await pilot.press("down")  # the last row, nothing newer: the cursor moves as usual
        assert prompt.text == "line one\nline two\nline three"
        prompt.move_cursor((0, 2))
        await pilot.press("up")
        assert prompt.text == "earlier"


async def test_up_on_a_wrapped_line_moves_up_a_row_before_recalling(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with app.run_test(size=(60, 30)) as pilot:
        await send_all(pilot, app, fake, "earlier")
        prompt = app.prompt_input
        long_line = " ".join(f"word{n}" for n in range(30))  # wraps over several rows
        prompt.load_text(long_line)
        prompt.move_cursor(prompt.document.end)
        await pilot.press("up")
        assert prompt.text == long_line  # moved up a row of the same line
        for _ in range(10):
            if prompt.text != long_line:
                break
            await pilot.press("up")
        assert prompt.text == "earlier"


async def test_up_in_an_empty_prompt_takes_a_queued_prompt_back_before_history(
    fake, make_config, app_factory
):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await send_all(pilot, app, fake, "from history")
        await start_a_long_turn(pilot, app, fake, "running")
        await submit(pilot, app, "waiting in the queue")  # steering the running turn
        assert [i.text for i in app.services.pending.items()] == ["waiting in the queue"]
        prompt = app.prompt_input
        await pilot.press("up")
        await pilot.pause()
        assert prompt.text == "waiting in the queue"
        assert app.services.pending.items() == ()
        # Up again walks the history (the queued prompt is the draft meanwhile).
        await pilot.press("up")
        assert prompt.text == "running"
        await pilot.press("up")
        assert prompt.text == "from history"
        await pilot.press("down", "down")
        assert prompt.text == "waiting in the queue"  # the newest entry
        await pilot.press("down")
        assert prompt.text == "waiting in the queue" and not prompt.habits.recall.walking
        # With nothing queued, Up in an empty prompt is history.
        prompt.clear()
        await pilot.pause()
        await pilot.press("up")
        assert prompt.text == "waiting in the queue"  # sent (queued) prompts are history too
        await pilot.press("escape")
        await idle(pilot, app)


async def test_ctrl_r_searches_accepts_for_editing_and_cancels_to_the_draft(
    fake, make_config, app_factory
):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await send_all(pilot, app, fake, "fix the test", "run make", "Fix the build")
        prompt = app.prompt_input
        await type_text(pilot, "draft")
        await pilot.press("ctrl+r")
        assert prompt.habits.searching
        assert "search:" in title(app)
        await type_text(pilot, "fix")
        assert prompt.text == "Fix the build"  # case ignored: no capital in the query
        assert prompt.selected_text == "Fix"
        assert "search: fix" in title(app)
        await pilot.press("ctrl+r")
        assert prompt.text == "fix the test"
        await pilot.press("ctrl+r")  # no older one: it says so and keeps the match
        assert prompt.text == "fix the test"
        assert "failing" in title(app)
        await pilot.press("ctrl+s")
        assert prompt.text == "Fix the build"
        await pilot.press("escape")
        assert not prompt.habits.searching and prompt.border_title is None and not title(app)
        assert prompt.text == "draft" and cursor(app) == (0, 5)

        # Enter accepts into the input for editing; nothing is sent.
        requests = len(fake.chat_bodies)
        await pilot.press("ctrl+r")
        await type_text(pilot, "make")
        await pilot.press("enter")
        await pilot.pause()
        assert prompt.text == "run make" and cursor(app) == (0, 8)
        assert not prompt.habits.searching
        assert len(fake.chat_bodies) == requests
        await type_text(pilot, " again")
        assert prompt.text == "run make again"
        # The walk goes on from the match, and the draft is still at its end.
        await pilot.press("down")
        assert prompt.text == "Fix the build"
        await pilot.press("down")
        assert prompt.text == "draft"
        await pilot.press("up", "up")
        assert prompt.text == "run make again"

        # Ctrl+R twice: the previous search again.
        prompt.clear()
        await pilot.press("ctrl+r", "ctrl+r")
        assert prompt.text == "run make" and "search: make" in title(app)
        await pilot.press("ctrl+g")
        assert prompt.text == ""


async def test_escape_in_the_search_does_not_stop_the_turn(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await send_all(pilot, app, fake, "older prompt")
        await start_a_long_turn(pilot, app, fake, "long task")
        prompt = app.prompt_input
        await pilot.press("ctrl+r")
        await type_text(pilot, "older")
        assert prompt.text == "older prompt"
        await pilot.press("ctrl+g")
        assert prompt.text == ""
        await pilot.press("ctrl+r", "escape")
        await pilot.pause(0.3)
        assert app.busy  # the search took Escape
        await pilot.press("escape")  # now it stops the turn
        await idle(pilot, app)
        assert not app.busy


async def test_a_search_with_no_match_cancels_to_the_draft_and_right_accepts(
    fake, make_config, app_factory
):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await send_all(pilot, app, fake, "hello world")
        prompt = app.prompt_input
        await type_text(pilot, "mine")
        await pilot.press("ctrl+r")
        await type_text(pilot, "zz")
        assert prompt.text == "mine" and "failing" in title(app)
        await pilot.press("backspace", "backspace", "w", "o")
        assert prompt.text == "hello world" and prompt.selected_text == "wo"
        await pilot.press("right")
        assert prompt.text == "hello world" and not prompt.habits.searching
        await pilot.press("ctrl+r", "h")
        await pilot.press("ctrl+e")  # an editing key: accepted, then it acts
        assert not prompt.habits.searching and prompt.text == "hello world"
        assert cursor(app) == (0, 11)
        # A paste while searching ends the search and keeps the text as it is.
        await pilot.press("ctrl+r", "w")
        prompt.insert(" pasted")
        await pilot.pause()
        assert not prompt.habits.searching and prompt.border_title is None
        assert "pasted" in prompt.text


async def test_tab_completes_commands_cycles_and_never_leaves_the_prompt(
    fake, make_config, app_factory
):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.prompt_input
        await pilot.press("tab")  # nothing to complete: nothing happens
        assert app.focused is prompt and prompt.text == ""
        await type_text(pilot, "/dif")
        await pilot.press("tab")
        assert prompt.text == "/diff " and app.focused is prompt
        prompt.clear()
        await type_text(pilot, "/co")
        choices = sorted(
            n for n in command_words(commands().completion_entries()) if n.startswith("/co")
        )
        assert len(choices) >= 3  # /compact, /context, /copy
        await pilot.press("tab")  # no longer common start: only listed
        assert prompt.text == "/co"
        assert all(name in subtitle(app) for name in choices)
        for name in (*choices, choices[0]):  # Tab steps through them, round and round
            await pilot.press("tab")
            assert prompt.text == name
        await pilot.press("shift+tab")
        assert prompt.text == choices[-1] and app.focused is prompt
        await type_text(pilot, "x")
        assert prompt.text == choices[-1] + "x"
        # The choices leave the lower border: the keys' hint is back.
        assert str(prompt.border_subtitle).startswith("Enter send") and not subtitle(app)
        # Aliases complete too.
        prompt.clear()
        await type_text(pilot, "/cle")
        await pilot.press("tab")
        assert prompt.text == "/clear "
        prompt.clear()
        await type_text(pilot, "/agents p")
        await pilot.press("tab")
        assert prompt.text == "/agents pause "
        await pilot.press("enter")
        await pilot.pause()
        assert "› /agents pause" in transcript_text(app)
        assert app.focused is prompt


async def test_at_60_columns_the_choices_leave_room_for_the_count(
    fake, make_config, app_factory, workspace
):
    """A narrow prompt's border showed `(5, Tab st…`: choices that do not fit are left out
    (`…`), the one chosen and the count always shown."""
    for n in range(6):
        (workspace / f"a_rather_long_file_name_number_{n}.py").write_text("x\n")
    app = app_factory(make_config())
    async with app.run_test(size=(60, 15)) as pilot:
        await type_text(pilot, "@a_")
        await pilot.press("tab")  # the common start
        await pilot.press("tab")  # the choices, listed
        await pilot.pause()
        line = subtitle(app)
        assert line.endswith("(6, Tab steps)"), line
        assert "…" in line and len(line) <= 56
        for _ in range(4):
            await pilot.press("tab")
        await pilot.pause()
        chosen = app.prompt_input.text.removeprefix("@")
        assert chosen in subtitle(app) and subtitle(app).endswith("(6, Tab steps)")


async def test_tab_completes_workspace_paths(fake, make_config, app_factory, workspace):
    (workspace / "src" / "zcoder").mkdir(parents=True)
    (workspace / "notes dir").mkdir()
    (workspace / "notes dir" / "todo.md").write_text("")
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.prompt_input
        await type_text(pilot, "look at hel")
        await pilot.press("tab")
        await type_text(pilot, "now")
        assert prompt.text == "look at hello.py now"
        prompt.clear()
        await type_text(pilot, "in sr")
        await pilot.press("tab", "tab")  # a folder: no space; Tab again goes inside
        assert prompt.text == "in src/zcoder/"
        prompt.clear()
        await type_text(pilot, "read no")
        await pilot.press("tab", "tab")
        assert prompt.text == 'read "notes dir/todo.md" '
        assert app.focused is prompt
        fake.enqueue(Turn.text("ok"))
        await pilot.press("enter")
        await idle(pilot, app)
    assert sent_prompts(fake) == ['read "notes dir/todo.md" ']


async def test_an_unwritable_history_is_said_once_and_recall_still_works(
    fake, make_config, app_factory
):
    config = make_config()
    history_dir = history_path(config.home, config.workspace).parent
    history_dir.parent.mkdir(parents=True, exist_ok=True)
    history_dir.write_text("a file where the history folder should be")
    app = app_factory(config)
    async with app.run_test(size=SIZE) as pilot:
        await send_all(pilot, app, fake, "one", "two")
        problems = [e.plain for e in entries(app, "error") if "Prompt history" in e.plain]
        assert len(problems) == 1 and "could not read" in problems[0]
        await pilot.press("up", "up")
        assert app.prompt_input.text == "one"
