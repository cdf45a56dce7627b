"""Sessions people can find (issue 11 item 8) and /copy with the aliases (item 7), in the real
app under Pilot against the fake Ollama: ids in the sidebar and /sessions, the session's
model put back, the session lock, the exit hint's session, the clipboard."""

from __future__ import annotations

import base64
import signal
from typing import Any

import pytest

from tests.fixtures.fake_ollama import Turn
from tests.sessions.test_locks import start_holder, stop
from tests.tui.conftest import entries, idle, submit, transcript_text, wait_until
from zcoder.sessions import SessionStore
from zcoder.tui.widgets.shared import SessionItem

pytestmark = pytest.mark.timeout(60)
SIZE = (140, 40)


def saved_session(config: Any, title: str, model: str) -> str:
    with SessionStore(config.home) as store:
        info = store.create_session(config.workspace, "coding", model)
        store.record_user_message(info.id, title)
        store.append_event(info.id, "assistant", f"reply to {title}")
        return info.id


def resume_saved(make_config, app_factory, title: str, model: str, **kwargs: Any) -> Any:
    """The app (relay off) resuming a session saved with ``title`` and ``model``."""
    config = make_config(env={"ZCODER_RELAY": "off"})
    return app_factory(config, resume=saved_session(config, title, model), **kwargs)


async def test_sidebar_and_sessions_show_ids_titles_models_and_counts(
    fake, make_config, app_factory
):
    config = make_config(env={"ZCODER_RELAY": "off"})
    older = saved_session(config, "older job", "llama3.2")
    fake.enqueue(Turn.text("hi back"))
    app = app_factory(config)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "hello there")
        await idle(pilot, app)
        await submit(pilot, app, "/sessions")
        await wait_until(pilot, lambda: "newest first" in transcript_text(app))
        items = list(app.sidebar.query(SessionItem))
        rendered = [" ".join(str(row.render()) for row in item.query("Static")) for item in items]
        assert [item.info.id for item in items] == [app.session_id, older]
        assert app.session_id in rendered[0] and "hello there" in rendered[0]
        assert older in rendered[1] and "older job" in rendered[1]
        listing = entries(app, "system")[-1].plain.splitlines()
        assert listing[1].startswith(f"● {app.session_id}")
        assert "fixture-model" in listing[1] and "2 messages" in listing[1]
        assert listing[1].endswith("hello there")
        assert listing[2].startswith(f"  {older}") and "llama3.2" in listing[2]
        assert "2 messages" in listing[2] and "zcoder --resume ID" in listing[0]
        assert app.focused is app.prompt_input  # issue 27: what is typed next is a prompt

        # /sessions ID (a unique prefix) opens that session, as --resume would.
        await submit(pilot, app, f"/sessions {older[:-3]}")
        await wait_until(pilot, lambda: app.session_id == older)
        assert app.focused is app.prompt_input
        await submit(pilot, app, "/sessions nosuchsession")
        await wait_until(pilot, lambda: "no session 'nosuchsession'" in transcript_text(app))
        assert app.session_id == older


def screen_rows(app: Any) -> list[str]:
    """The screen as drawn, one string per row."""
    return [
        "".join(segment.text for segment in strip)
        for strip in app.screen._compositor.render_strips()
    ]


async def test_a_long_title_ends_in_an_ellipsis_and_the_id_stays_below_it(
    fake, make_config, app_factory
):
    # A title past the sidebar's width wrapped onto the id's row and the id was never
    # drawn (the Static ignored the Text's no_wrap): the id is on its own row, always.
    config = make_config(env={"ZCODER_RELAY": "off"})
    older = saved_session(config, "rename the users table to accounts everywhere", "m")
    app = app_factory(config)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.sidebar.query(SessionItem)) == 2)
        await pilot.pause()
        rows = [row[:30] for row in screen_rows(app)]
        new_row = next(i for i, row in enumerate(rows) if "● " in row)
        assert rows[new_row].strip(" │") == "● (no prompt yet)"  # not a made-up title
        assert rows[new_row + 1].strip(" │") == app.session_id
        old_row = next(i for i, row in enumerate(rows) if "rename the users" in row)
        assert rows[old_row].rstrip(" │").endswith("…")
        assert rows[old_row + 1].strip(" │") == older


async def test_copy_puts_the_last_reply_on_the_clipboard_with_osc_52(
    fake, make_config, app_factory
):
    reply = "Use `git log -p`:\n\n```sh\ngit log -p -- src/é.py\n```"
    fake.enqueue(Turn.text("first reply"), Turn.text(reply))
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        written: list[str] = []
        driver = app._driver
        assert driver is not None
        original = driver.write

        def recording(data: str) -> None:
            written.append(data)
            original(data)

        driver.write = recording
        await submit(pilot, app, "/copy")
        await wait_until(pilot, lambda: "Nothing to copy yet" in transcript_text(app))
        assert not any("\x1b]52;" in chunk for chunk in written)
        await submit(pilot, app, "one")
        await idle(pilot, app)
        await submit(pilot, app, "two")
        await idle(pilot, app)
        await submit(pilot, app, "/copy")
        await wait_until(pilot, lambda: f"Copied {len(reply)} characters" in transcript_text(app))
        assert app.clipboard == reply  # the markdown source, not the rendered text
        encoded = base64.b64encode(reply.encode("utf-8")).decode("ascii")
        assert any(f"\x1b]52;c;{encoded}\x07" in chunk for chunk in written)


@pytest.mark.parametrize("alias", ["/q", "/exit", "/quit"])
async def test_quit_aliases_leave(fake, make_config, app_factory, alias):
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, alias)
        await wait_until(pilot, lambda: app.return_code is not None)
    assert app.return_code == 0


async def test_clear_starts_a_new_session_and_question_mark_is_help(fake, make_config, app_factory):
    fake.enqueue(Turn.text("answer"))
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "/?")
        await wait_until(pilot, lambda: "Aliases:" in transcript_text(app))
        text = transcript_text(app)
        assert "/clear" in text and "/new (a new session; the current one stays saved)" in text
        assert "/copy" in text
        await submit(pilot, app, "question")
        await idle(pilot, app)
        first = app.session_id
        await submit(pilot, app, "/clear")
        await wait_until(pilot, lambda: app.session_id != first)
        assert entries(app, "user") == []
        assert fake.chat_bodies and len(fake.chat_bodies) == 1


async def test_resume_puts_back_the_sessions_model_before_the_warm_up(
    fake, make_config, app_factory
):
    app = resume_saved(make_config, app_factory, "llama job", "llama3.2")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.model == "llama3.2")
        await wait_until(pilot, lambda: fake.load_requests)
        assert app.header_state.model == "llama3.2"
        assert app.agent is not None and app.agent.settings.model == "llama3.2"
        assert "this session's model; it was fixture-model" in transcript_text(app)
        assert "reply to llama job" in transcript_text(app)
        await wait_until(pilot, lambda: app.header_state.status == "Ready")
        # Only the session's model was loaded: no warm-up of the other one first.
        assert [body["model"] for body in fake.load_requests] == ["llama3.2"]


async def test_resume_with_a_model_the_server_lacks_keeps_the_current_one(
    fake, make_config, app_factory
):
    app = resume_saved(make_config, app_factory, "old", "vanished-model")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "does not list" in transcript_text(app))
        await wait_until(pilot, lambda: fake.load_requests)
        assert app.model == "fixture-model"
        assert "vanished-model, which the server does not list; keeping fixture-model" in (
            transcript_text(app)
        )
        assert [body["model"] for body in fake.load_requests] == ["fixture-model"]


async def test_keep_model_keeps_the_command_lines_model(fake, make_config, app_factory):
    app = resume_saved(make_config, app_factory, "llama job", "llama3.2", keep_model=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: fake.load_requests)
        assert app.model == "fixture-model"
        assert [body["model"] for body in fake.load_requests] == ["fixture-model"]


async def test_picking_a_session_in_the_sidebar_puts_back_its_model(fake, make_config, app_factory):
    config = make_config(env={"ZCODER_RELAY": "off"})
    session = saved_session(config, "llama job", "llama3.2")
    app = app_factory(config)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.header_state.status == "Ready")
        assert app.model == "fixture-model"
        app.sessions.switch_to(session)
        await wait_until(pilot, lambda: app.model == "llama3.2")
        assert app.session_id == session
        await wait_until(pilot, lambda: fake.load_requests[-1]["model"] == "llama3.2")


async def test_two_apps_in_one_workspace_get_different_sessions_and_the_second_says_why(
    fake, make_config, app_factory
):
    config = make_config(env={"ZCODER_RELAY": "off"})
    first = app_factory(config)
    second = app_factory(config)
    async with first.run_test(size=SIZE) as pilot_one:
        await pilot_one.pause()
        async with second.run_test(size=SIZE) as pilot_two:
            await pilot_two.pause()
            assert first.session_id and second.session_id
            assert first.session_id != second.session_id
            said = f"Session {first.session_id} is open in another zcoder"
            await wait_until(pilot_two, lambda: said in transcript_text(second))
            assert f"this zcoder opened {second.session_id}" in transcript_text(second)
            # Picking the other app's session in the sidebar is refused; this one stays.
            second.sessions.switch_to(first.session_id)
            await pilot_two.pause()
            assert second.session_id != first.session_id
            assert f"session {first.session_id} is open in another zcoder" in (
                transcript_text(second)
            )


async def test_resuming_a_session_open_elsewhere_opens_a_new_one_and_says_so(
    fake, make_config, app_factory
):
    config = make_config(env={"ZCODER_RELAY": "off"})
    session = saved_session(config, "busy", "fixture-model")
    holder = start_holder(config.home, session)
    try:
        app = app_factory(config, resume=session)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert app.session_id is not None and app.session_id != session
            assert f"session {session} is open in another zcoder (pid {holder.pid})" in (
                transcript_text(app)
            )
            assert "reply to busy" not in transcript_text(app)
    finally:
        stop(holder, signal.SIGKILL)
    again = app_factory(config, resume=session)  # the holder died: the lock went with it
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert again.session_id == session


async def test_switching_sessions_moves_the_lock_and_exit_frees_it(fake, make_config, app_factory):
    from zcoder.sessions.locks import SessionInUseError, acquire

    config = make_config(env={"ZCODER_RELAY": "off"})
    other = saved_session(config, "other", "fixture-model")
    app = app_factory(config)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        fresh = app.session_id
        assert fresh is not None
        with pytest.raises(SessionInUseError):
            acquire(config.home, fresh)
        app.sessions.switch_to(other)
        await pilot.pause()
        acquire(config.home, fresh).release()  # let go when left
        with pytest.raises(SessionInUseError):
            acquire(config.home, other)
    app._stop_services()
    acquire(config.home, other).release()  # and at exit
    assert app.sessions.exit_session == other  # it has content: the exit hint names it


async def test_an_empty_session_gets_no_exit_hint(fake, make_config, app_factory):
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
    app._stop_services()
    assert app.sessions.exit_session is None


@pytest.mark.parametrize("bad", ["no-such-session", "../../etc/passwd"])
async def test_an_unknown_resume_id_reaching_the_app_starts_a_new_session(
    fake, make_config, app_factory, bad
):
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}), resume=bad)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "started a new one" in transcript_text(app))
        assert app.session_id is not None


async def test_a_long_session_reopens_with_its_newest_entries_and_shows_older_ones_on_demand(
    fake, make_config, app_factory
):
    from zcoder.tui.widgets.transcript import EARLIER_BATCH, SAVED_ENTRIES_SHOWN, EarlierEntries

    config = make_config(env={"ZCODER_RELAY": "off"})
    total = SAVED_ENTRIES_SHOWN + EARLIER_BATCH + 7
    with SessionStore(config.home) as store:
        info = store.create_session(config.workspace, "coding", "fixture-model")
        for n in range(total):
            store.append_event(info.id, "assistant", f"reply number {n}")
        store.replace_messages(
            info.id, [{"role": "assistant", "content": f"reply number {n}"} for n in range(total)]
        )
    app = app_factory(config, resume=info.id)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: f"reply number {total - 1}" in transcript_text(app))
        shown = [e.plain for e in entries(app, "assistant")]
        assert len(shown) == SAVED_ENTRIES_SHOWN
        assert f"reply number {total - SAVED_ENTRIES_SHOWN}" in shown[0]
        marker = app.transcript.query_one(EarlierEntries)
        assert f"{total - SAVED_ENTRIES_SHOWN:,} earlier entries" in str(marker.render())
        # The header's meter is estimated in a thread, then shown.
        await wait_until(pilot, lambda: app.header_state.context is not None)

        marker.focus()
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: len(entries(app, "assistant")) == SAVED_ENTRIES_SHOWN + EARLIER_BATCH
        )
        assert "7 earlier entries" in str(marker.render())
        marker.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(entries(app, "assistant")) == total)
        assert not app.transcript.query(EarlierEntries)
        # Every entry once, oldest first, the marker's batches above the newest ones.
        assert [e.plain.splitlines()[-1] for e in entries(app, "assistant")] == [
            f"reply number {n}" for n in range(total)
        ]


async def test_prompt_runs_are_left_out_of_the_list_until_sessions_all(
    fake, make_config, app_factory
):
    """Issue 18 item 16: sessions of --prompt runs ("-", "oa list") do not clutter the
    sidebar and /sessions; /sessions all shows them, marked."""
    config = make_config(env={"ZCODER_RELAY": "off"})
    older = saved_session(config, "older job", "llama3.2")
    with SessionStore(config.home) as store:
        for title in ("-", "oa list"):
            info = store.create_session(config.workspace, "coding", "m", one_shot=True)
            store.record_user_message(info.id, title)
            store.append_event(info.id, "assistant", f"reply to {title}")
    app = app_factory(config)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "/sessions")
        await wait_until(pilot, lambda: "newest first" in transcript_text(app))
        listed = [item.info.id for item in app.sidebar.query(SessionItem)]
        assert listed == [app.session_id, older]
        listing = entries(app, "system")[-1].plain
        assert "oa list" not in listing and "older job" in listing
        assert "2 sessions of --prompt runs are not shown: /sessions all" in listing

        await submit(pilot, app, "/sessions all")
        await wait_until(pilot, lambda: "oa list" in transcript_text(app))
        lines = entries(app, "system")[-1].plain.splitlines()
        assert len(app.sidebar.query(SessionItem)) == 4
        one_shots = [line for line in lines if line.endswith(("oa list", " -"))]
        assert len(one_shots) == 2 and all("--prompt" in line for line in one_shots)
