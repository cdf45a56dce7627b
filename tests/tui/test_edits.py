"""Pilot tests of edits in the app: diffs in tool entries, /diff, /undo, ZCODER_EDITS=ask."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.fake_ollama import Turn, call
from tests.tui.conftest import answer, entries, idle, submit, transcript_text, wait_until
from zcoder.tui.dialogs.edit import EditApprovalScreen, UndoScreen
from zcoder.tui.widgets.diff_view import diff_text

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 40)
ORIGINAL = "print('hello')\n"


def styles_of(text, fragment: str) -> set[str]:
    start = text.plain.index(fragment)
    return {str(span.style) for span in text.spans if span.start <= start < span.end}


def test_diff_lines_are_coloured_and_cannot_drive_the_terminal() -> None:
    shown = diff_text("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\x1b[2J\n+new\x07\n keep")
    assert "\x1b" not in shown.plain and "\x07" not in shown.plain
    assert "-old\\e[2J" in shown.plain
    assert styles_of(shown, "-old") == {"red"}
    assert styles_of(shown, "+new") == {"green"}
    assert styles_of(shown, "@@") == {"cyan"}
    assert styles_of(shown, " keep") == set()
    assert "⟨10 spaces⟩" in diff_text("+" + " " * 10 + "x", reveal_blanks=True).plain


async def _edit_turn(fake, app, pilot):
    """A turn, "change hello", whose model changes hello.py and creates docs/new.md;
    returns once it has ended."""
    fake.enqueue(
        Turn.tool_calls(
            call("replace_text", {"path": "hello.py", "old_text": "hello", "new_text": "bye"}),
            call("write_file", {"path": "docs/new.md", "content": "# New\n"}),
        ),
        Turn.text("changed"),
    )
    await submit(pilot, app, "change hello")
    await idle(pilot, app)


async def _open_undo(pilot, app):
    await submit(pilot, app, "/undo")
    await wait_until(pilot, lambda: isinstance(app.screen, UndoScreen))


async def _ask_to_write(fake, pilot, app, path, content, *, prompt, reply):
    """A turn whose model writes ``content`` to ``path``; returns once the edit's
    approval dialog is open (ZCODER_EDITS=ask)."""
    fake.enqueue(
        Turn.tool_calls(call("write_file", {"path": path, "content": content})),
        Turn.text(reply),
    )
    await submit(pilot, app, prompt)
    await wait_until(pilot, lambda: isinstance(app.screen, EditApprovalScreen))


async def test_an_edit_shows_its_diff_in_the_tool_entry(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await _edit_turn(fake, app, pilot)
        replace, write = entries(app, "tool")
        assert "(+1 −1 lines)" in replace.plain
        assert "-print('hello')\n+print('bye')" in replace.plain
        assert "+++ b/docs/new.md\n@@ -0,0 +1 @@\n+# New" in write.plain
    # The model was told the counts, never the diff.
    tool_messages = [m for m in fake.chat_bodies[1]["messages"] if m["role"] == "tool"]
    assert all("@@" not in m["content"] for m in tool_messages)


async def test_slash_diff_shows_the_sessions_net_changes(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "/diff")
        await wait_until(pilot, lambda: "No file changes" in transcript_text(app))
        await _edit_turn(fake, app, pilot)
        await submit(pilot, app, "/diff")
        await wait_until(pilot, lambda: entries(app, "diff"))
        [diff] = entries(app, "diff")
        assert diff.plain.startswith("2 files changed this session, +2 −1 lines")
        assert "--- a/hello.py\n+++ b/hello.py" in diff.plain
        assert "--- /dev/null\n+++ b/docs/new.md" in diff.plain


async def test_undo_asks_then_restores_the_last_turns_files(
    fake, make_config, app_factory, workspace
):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await _edit_turn(fake, app, pilot)
        await _open_undo(pilot, app)
        body = app.screen.body()
        assert "• restore hello.py to its content before the turn" in body
        assert "• delete docs/new.md (the turn created it)" in body
        assert 'the turn "change hello"' in str(app.screen.title_text())
        await answer(pilot, app, "y")
        await wait_until(pilot, lambda: "Undid the file changes" in transcript_text(app))
        assert (workspace / "hello.py").read_text() == ORIGINAL
        assert not (workspace / "docs" / "new.md").exists()
        # The model hears of it before the next turn.
        fake.enqueue(Turn.text("noted"))
        await submit(pilot, app, "next")
        await idle(pilot, app)
        sent = fake.chat_bodies[-1]["messages"]
        assert "undid the file changes" in sent[-2]["content"]
        await submit(pilot, app, "/undo")
        await wait_until(pilot, lambda: "Nothing to undo" in transcript_text(app))


@pytest.mark.parametrize("key", ["n", "escape"])
async def test_undo_refused_changes_nothing(fake, make_config, app_factory, workspace, key):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await _edit_turn(fake, app, pilot)
        await _open_undo(pilot, app)
        if key == "escape":
            await pilot.press(key)
        else:
            await answer(pilot, app, key)
        await wait_until(pilot, lambda: "Nothing was undone." in transcript_text(app))
        assert (workspace / "hello.py").read_text() == "print('bye')\n"
        assert (workspace / "docs" / "new.md").exists()
        assert app.agent.edits.plan_undo() is not None  # still there to undo


async def test_undo_keeps_a_file_changed_since_unless_o_is_pressed(
    fake, make_config, app_factory, workspace
):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await _edit_turn(fake, app, pilot)
        (workspace / "hello.py").write_text("my own edit\n")
        await _open_undo(pilot, app)
        assert "hello.py was changed since the agent's edit" in app.screen.body()
        assert "[o] undo, overwrite them too" in app.screen.keys_text()
        await answer(pilot, app, "y")
        await wait_until(pilot, lambda: "Kept as they are: hello.py" in transcript_text(app))
        assert (workspace / "hello.py").read_text() == "my own edit\n"
        assert not (workspace / "docs" / "new.md").exists()


async def test_undo_o_overwrites_a_file_changed_since(fake, make_config, app_factory, workspace):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await _edit_turn(fake, app, pilot)
        (workspace / "hello.py").write_text("my own edit\n")
        await _open_undo(pilot, app)
        await answer(pilot, app, "o")
        await wait_until(pilot, lambda: "Undid the file changes" in transcript_text(app))
        assert (workspace / "hello.py").read_text() == ORIGINAL


async def test_undo_waits_for_the_turn_to_end(fake, make_config, app_factory):
    fake.enqueue(Turn.stall(before="thinking"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "long")
        await wait_until(pilot, lambda: app.busy)
        await submit(pilot, app, "/undo")
        await wait_until(
            pilot, lambda: "/undo runs when no turn is running" in transcript_text(app)
        )
        assert not isinstance(app.screen, UndoScreen)
        await pilot.press("escape")
        await idle(pilot, app)


async def test_ask_mode_y_writes_after_showing_the_diff(fake, make_config, app_factory, workspace):
    app = app_factory(make_config(env={"ZCODER_EDITS": "ask"}))
    async with app.run_test(size=SIZE) as pilot:
        await _ask_to_write(
            fake, pilot, app, "hello.py", "print(1)\n", prompt="rewrite", reply="written"
        )
        assert (workspace / "hello.py").read_text() == ORIGINAL  # nothing yet
        assert app.screen.body().splitlines()[-2:] == ["-print('hello')", "+print(1)"]
        assert "[a] allow this turn's edits" in app.screen.keys_text()
        await answer(pilot, app, "y")
        await idle(pilot, app)
        assert (workspace / "hello.py").read_text() == "print(1)\n"


async def test_ask_mode_n_writes_nothing_and_the_model_is_told(
    fake, make_config, app_factory, workspace
):
    app = app_factory(make_config(env={"ZCODER_EDITS": "ask"}))
    async with app.run_test(size=SIZE) as pilot:
        await _ask_to_write(fake, pilot, app, "made.txt", "x\n", prompt="make a file", reply="ok")
        await answer(pilot, app, "n")
        await idle(pilot, app)
        assert not (workspace / "made.txt").exists()
        [tool] = entries(app, "tool")
        assert "refused" in tool.plain
    tool_message = fake.chat_bodies[1]["messages"][-1]
    assert "the user refused this edit of made.txt; nothing was written" in tool_message["content"]


async def test_undo_does_nothing_when_another_session_was_opened_meanwhile(
    fake, make_config, app_factory, workspace
):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await _edit_turn(fake, app, pilot)
        await _open_undo(pilot, app)
        app.run_worker(app.slash.run("/undo", ""))  # a second one while the first waits
        await wait_until(pilot, lambda: "already waiting" in transcript_text(app))
        app.action_new_session()  # e.g. Ctrl+N, which app bindings take even now
        await answer(pilot, app, "y")
        await wait_until(pilot, lambda: "Another session was opened" in transcript_text(app))
        assert (workspace / "hello.py").read_text() == "print('bye')\n"


async def test_attack_a_model_swapping_a_directory_for_a_link_cannot_make_undo_write_outside(
    fake, make_config, app_factory, workspace, short_dir
):
    # The model edits sub/settings.py, then (with --yes) replaces sub by a link to a
    # directory outside holding the same file name and content, and waits for /undo.
    outside = short_dir / "outside"
    outside.mkdir()
    (workspace / "sub").mkdir()
    (workspace / "sub" / "settings.py").write_text("DEBUG = False\n")
    swap = f"printf 'DEBUG = True\\n' > {outside}/settings.py && rm -r sub && ln -s {outside} sub"
    fake.enqueue(
        Turn.tool_calls(
            call("write_file", {"path": "sub/settings.py", "content": "DEBUG = True\n"}),
            call("run_command", {"command": swap}),
        ),
        Turn.text("all set"),
    )
    app = app_factory(make_config(yes=True))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "turn on debug")
        await idle(pilot, app)
        assert (workspace / "sub").is_symlink()
        await _open_undo(pilot, app)
        assert "cannot undo sub/settings.py" in app.screen.body()
        assert "outside the workspace" in app.screen.body()
        await answer(pilot, app, "y")
        await wait_until(pilot, lambda: "Not undone: sub/settings.py" in transcript_text(app))
    assert (outside / "settings.py").read_text() == "DEBUG = True\n"


async def test_the_edits_controller_alone_says_why_undo_does_not_run(tmp_path: Path) -> None:
    """EditsUI made alone (no app): before the start, nothing; during a turn, a notice
    posted, and no dialog."""
    from typing import cast

    from textual.message import Message

    from tests.tui.parts_support import part_context, services_for
    from zcoder.agent import Agent
    from zcoder.agent.edits import UndoPlan
    from zcoder.tui.messages import ShowNotice
    from zcoder.tui.parts.edits_ui import EditsUI

    posted: list[Message] = []
    asked: list[UndoPlan] = []

    async def confirm_undo(plan: UndoPlan) -> str:
        asked.append(plan)
        return "cancel"

    def edits(agent: Agent | None) -> EditsUI:
        services = services_for(tmp_path, tmp_path / "home", busy=lambda: True)
        services.agent = agent
        return EditsUI(part_context(services, posted), confirm_undo=confirm_undo)

    await edits(None).undo()
    assert posted == []
    await edits(cast(Agent, object())).undo()
    assert [m.text for m in posted if isinstance(m, ShowNotice)] == [
        "/undo runs when no turn is running; try again when this one ends."
    ]
    assert asked == []
