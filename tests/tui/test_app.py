"""Pilot tests of the interactive app against the fake Ollama."""

from __future__ import annotations

import json
import os
import signal

import pytest

from tests.fixtures.fake_ollama import Turn, call
from tests.tui.conftest import answer, entries, idle, submit, transcript_text, wait_until
from tests.tui.support import answered, relay_ready, relay_to
from zcoder.sessions import DEFAULT_TITLE, SessionStore
from zcoder.tui.dialogs.approval import ApprovalScreen, ConfirmSendScreen

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 40)


async def test_prompt_streams_the_reply_and_saves_the_session(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with answered(
        app, fake, "say hello", Turn.text("Hello there, I am streaming."), size=SIZE
    ):
        [user] = entries(app, "user")
        assert "say hello" in user.plain
        [reply] = entries(app, "assistant")
        assert "Hello there, I am streaming." in reply.plain
        assert app.header_state.status == "Ready"
    store = SessionStore(make_config().home)
    [info] = store.list_sessions(make_config().workspace, "coding")
    assert info.title == "say hello"
    store.close()


async def test_warm_up_loads_the_model_without_entering_history(fake, make_config, app_factory):
    fake.enqueue(Turn.text("ok"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(fake.load_requests) == 1)
        await wait_until(pilot, lambda: app.header_state.status == "Ready")
        await submit(pilot, app, "hi")
        await idle(pilot, app)
    [body] = fake.chat_bodies
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert fake.load_requests[0]["model"] == "fixture-model"


async def _run_command_turn(fake, app, pilot, command="echo approved-run > out.txt"):
    fake.enqueue(
        Turn.tool_calls(call("run_command", {"command": command})),
        Turn.text("done"),
    )
    await submit(pilot, app, "run it")
    await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))


async def test_approval_dialog_yes_runs_the_command(fake, make_config, app_factory, workspace):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await _run_command_turn(fake, app, pilot)
        assert "echo approved-run" in str(app.screen.request.command)
        await answer(pilot, app, "y")
        await idle(pilot, app)
    assert (workspace / "out.txt").read_text().strip() == "approved-run"


@pytest.mark.parametrize("key", ["n", "escape"])
async def test_approval_dialog_no_and_escape_deny(fake, make_config, app_factory, workspace, key):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await _run_command_turn(fake, app, pilot)
        if key == "escape":
            await pilot.press(key)  # the safe answer needs no wait
        else:
            await answer(pilot, app, key)
        await idle(pilot, app)
        assert not (workspace / "out.txt").exists()
    tool_message = fake.chat_bodies[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "denied" in tool_message["content"]


async def test_approval_a_allows_later_commands_of_user_turns(
    fake, make_config, app_factory, workspace
):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await _run_command_turn(fake, app, pilot, "echo one > one.txt")
        await answer(pilot, app, "a")
        await idle(pilot, app)
        fake.enqueue(
            Turn.tool_calls(call("run_command", {"command": "echo two > two.txt"})), Turn.text("ok")
        )
        await submit(pilot, app, "again")
        await idle(pilot, app)
        assert not isinstance(app.screen, ApprovalScreen)
    assert (workspace / "two.txt").exists()


async def test_sysadmin_dialog_offers_no_a(fake, make_config, app_factory, workspace):
    app = app_factory(make_config(profile="sysadmin"))
    async with app.run_test(size=SIZE) as pilot:
        await _run_command_turn(fake, app, pilot, "echo s > s.txt")
        assert app.screen.request.allow_always is False
        await answer(pilot, app, "a")  # not offered: ignored, the dialog stays
        await pilot.pause()
        assert isinstance(app.screen, ApprovalScreen)
        await answer(pilot, app, "y")
        await idle(pilot, app)
        fake.enqueue(
            Turn.tool_calls(call("run_command", {"command": "echo t > t.txt"})), Turn.text("ok")
        )
        await submit(pilot, app, "again")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))  # asks again
        await answer(pilot, app, "y")
        await idle(pilot, app)
    assert (workspace / "t.txt").exists()


async def test_escape_during_streaming_stops_and_keeps_draft(fake, make_config, app_factory):
    fake.enqueue(Turn.stall(before="partial answ"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "long question")
        await wait_until(
            pilot, lambda: any("partial answ" in e.plain for e in entries(app, "assistant"))
        )
        app.prompt_input.load_text("my next draft")
        await pilot.press("escape")
        await idle(pilot, app)
        assert app.header_state.status == "Stopped"
        assert app.prompt_input.text == "my next draft"
        assert any("partial" in e.plain for e in entries(app, "assistant"))
        assert fake.requests[-1].disconnected.wait(5)
        assert all(m.get("role") != "assistant" for m in app.agent.messages)


async def test_escape_during_a_command_kills_it(fake, make_config, app_factory, workspace):
    fake.enqueue(
        Turn.tool_calls(
            call("run_command", {"command": "echo $$ > pid.txt; sleep 30"}),
            call("list_files", {}),
        ),
    )
    app = app_factory(make_config(yes=True))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "run the long thing")
        await wait_until(
            pilot,
            lambda: (
                (workspace / "pid.txt").exists() and (workspace / "pid.txt").read_text().strip()
            ),
        )
        pid = int((workspace / "pid.txt").read_text())
        await pilot.press("escape")
        await idle(pilot, app)
        await wait_until(pilot, lambda: not os.path.exists(f"/proc/{pid}"), timeout=10)
        statuses = [m["content"] for m in app.agent.messages if m["role"] == "tool"]
        assert len(statuses) == 2
        assert statuses[0].startswith("Interrupted") and statuses[1].startswith("Not executed")
        assert app.header_state.status == "Stopped"


async def test_slash_commands(fake, make_config, app_factory):
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "/help")
        await submit(pilot, app, "/nonsense")
        await submit(pilot, app, "/agents")
        await submit(pilot, app, "/list-agents")
        await pilot.pause(0.2)
        text = transcript_text(app)
        assert "/list-agents" in text and "Ctrl+N" in text
        assert "unknown command /nonsense" in text
        assert "Agent relay is unavailable" in text
        assert fake.chat_bodies == []  # none of them asked the model


async def test_list_agents_with_no_peers_asks_no_model(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "/list-agents")
        await wait_until(
            pilot, lambda: "No other local zcoder instances are available." in transcript_text(app)
        )
        assert fake.chat_bodies == []


async def test_list_agents_works_while_ollama_is_down(make_config, app_factory, sender):
    config = make_config(host="127.0.0.1:9")  # nothing listens there
    app = app_factory(config)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "/list-agents")
        await wait_until(pilot, lambda: sender.instance_id in transcript_text(app))
        assert "sender-project" in transcript_text(app)
        await wait_until(pilot, lambda: "not reachable" in transcript_text(app))


async def test_new_session_and_switch_back_shows_the_same_transcript(
    fake, make_config, app_factory
):
    app = app_factory(make_config())
    async with answered(app, fake, "first question", Turn.text("first reply"), size=SIZE) as pilot:
        first_session = app.session_id
        before = [(e.role, e.plain) for e in entries(app) if e.role != "system"]
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert app.session_id != first_session
        assert entries(app, "user") == []
        app.sessions.load(first_session)
        await pilot.pause()
        after = [(e.role, e.plain) for e in entries(app) if e.role != "system"]
        assert after == before


async def test_relay_turn_runs_shows_sender_and_persists(fake, make_config, app_factory, sender):
    fake.enqueue(Turn.text("on it"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await relay_ready(pilot, app)
        result = await relay_to(app, sender, "rename users.name\nplease")
        assert result.status == "accepted", result.text
        await wait_until(pilot, lambda: entries(app, "relay"))
        await idle(pilot, app)
        [relay_entry] = entries(app, "relay")
        assert "sender-project" in relay_entry.plain and "rename users.name" in relay_entry.plain
        body = fake.chat_bodies[0]
        wrapper = body["messages"][-1]
        assert wrapper["role"] == "user" and wrapper["content"].startswith("<agent_relay>")
        assert str(sender.workspace) in wrapper["content"]
        assert app.agent.user_ledger == []
        session = app.session_id
        relay_before = relay_entry.plain
    store = SessionStore(make_config().home)
    data = store.load(session, make_config().workspace, "coding")
    assert data.info.title == DEFAULT_TITLE
    assert data.user_ledger == []
    assert [e.role for e in data.events][:1] == ["relay"]
    store.close()
    # Reopened, the same relay event is shown.
    app2 = app_factory(make_config(), resume=session)
    async with app2.run_test(size=SIZE) as pilot:
        await pilot.pause()
        [again] = entries(app2, "relay")
        assert again.plain == relay_before


async def test_relay_turn_asks_for_every_command_even_after_a(
    fake, make_config, app_factory, sender, workspace
):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await _run_command_turn(fake, app, pilot, "echo u > u.txt")
        await answer(pilot, app, "a")  # granted for user turns
        await idle(pilot, app)
        fake.enqueue(
            Turn.tool_calls(call("run_command", {"command": "echo r > r.txt"})), Turn.text("ok")
        )
        result = await relay_to(app, sender, "make r.txt")
        assert result.status == "accepted"
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        assert app.screen.request.allow_always is False
        await answer(pilot, app, "y")
        await idle(pilot, app)
    assert (workspace / "r.txt").exists()


async def test_relayed_turn_may_reply_only_to_its_sender(fake, make_config, app_factory, sender):
    fake.enqueue(
        Turn.tool_calls(call("send_agent_message", {"target": "1-1", "message": "fan out"})),
        Turn.text("ok"),
    )
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await relay_ready(pilot, app)
        await relay_to(app, sender, "hello")
        await wait_until(pilot, lambda: len(fake.chat_bodies) >= 2)
        await idle(pilot, app)
    schema = next(
        t for t in fake.chat_bodies[0]["tools"] if t["function"]["name"] == "send_agent_message"
    )
    assert schema["function"]["parameters"]["properties"]["target_instance_id"]["enum"] == [
        sender.instance_id
    ]
    refusal = fake.chat_bodies[1]["messages"][-1]
    assert "only to its sender" in refusal["content"]


async def test_user_turn_send_asks_confirmation_and_no_sends_nothing(
    fake, make_config, app_factory, sender
):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await relay_ready(pilot, app)
        fake.enqueue(
            Turn.tool_calls(
                call(
                    "send_agent_message",
                    {"target": sender.instance_id, "message": "hi B"},
                )
            ),
            Turn.text("ok"),
        )
        await submit(pilot, app, "tell the sender hi")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmSendScreen))
        assert app.screen.peer.instance_id == sender.instance_id
        assert app.screen.message == "hi B"
        await answer(pilot, app, "n")
        await idle(pilot, app)
    assert sender.claim_one() is None
    assert "declined" in fake.chat_bodies[1]["messages"][-1]["content"]


async def test_escape_cancels_a_relay_turn_and_the_queue_goes_on(
    fake, make_config, app_factory, sender
):
    fake.enqueue(Turn.stall(before="working on the first"), Turn.text("second done"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await relay_ready(pilot, app)
        assert (await relay_to(app, sender, "first task")).status == "accepted"
        await wait_until(
            pilot, lambda: any("working on the first" in e.plain for e in entries(app, "assistant"))
        )
        assert (await relay_to(app, sender, "second task")).status == "accepted"
        await pilot.press("escape")
        await wait_until(pilot, lambda: len(fake.chat_bodies) == 2)
        await idle(pilot, app)
        assert app.relay.status().queued == 0
        second = fake.chat_bodies[1]["messages"]
        wrappers = [m["content"] for m in second if m["content"].startswith("<agent_relay>")]
        assert len(wrappers) == 2 and "second task" in wrappers[1]
        done = list((app.relay.spool.root / "done").iterdir())
        assert len(done) == 2  # both completed, neither can run again


async def test_pause_makes_sends_answer_paused(fake, make_config, app_factory, sender):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await relay_ready(pilot, app)
        await submit(pilot, app, "/agents pause")
        await pilot.pause()
        result = await relay_to(app, sender, "x")
        assert result.status == "paused"
        assert app.header_state.relay == "paused"
        await submit(pilot, app, "/agents resume")
        fake.enqueue(Turn.text("ok"))
        result = await relay_to(app, sender, "y")
        assert result.status == "accepted"
        await wait_until(pilot, lambda: entries(app, "relay"))
        await idle(pilot, app)


async def test_relay_off_changes_nothing_else(fake, make_config, app_factory, short_dir):
    fake.enqueue(Turn.text("plain reply"))
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(fake.load_requests) == 1)
        await submit(pilot, app, "hello")
        await idle(pilot, app)
        assert "plain reply" in transcript_text(app)
        assert app.header_state.relay == "off"
    registry = short_dir / "reg"
    assert not registry.exists() or not any(registry.glob("a-*.json"))
    names = [t["function"]["name"] for t in fake.chat_bodies[0]["tools"]]
    assert "list_agents" not in names and "send_agent_message" not in names
    assert "zcoder agents on this machine" not in json.dumps(fake.chat_bodies[0]["messages"][0])


async def test_relay_tools_and_guidance_only_when_relay_is_available(
    fake, make_config, app_factory
):
    fake.enqueue(Turn.text("ok"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "hello")
        await idle(pilot, app)
    names = [t["function"]["name"] for t in fake.chat_bodies[0]["tools"]]
    assert "list_agents" in names and "send_agent_message" in names
    assert "Other zcoder agents on this machine" in fake.chat_bodies[0]["messages"][0]["content"]


async def test_unsafe_relay_directory_warns_once_and_the_app_works(
    fake, make_config, app_factory, short_dir
):
    registry = short_dir / "reg"
    registry.mkdir(mode=0o755)
    registry.chmod(0o755)
    fake.enqueue(Turn.text("still fine"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        warnings = [e for e in entries(app, "system") if "Agent relay unavailable" in e.plain]
        assert len(warnings) == 1 and "group or other" in warnings[0].plain
        await submit(pilot, app, "hello")
        await idle(pilot, app)
        assert "still fine" in transcript_text(app)


async def test_alt_enter_and_shift_enter_insert_newlines_enter_submits(
    fake, make_config, app_factory
):
    fake.enqueue(Turn.text("got both lines"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.focus()
        await pilot.press("l", "1", "shift+enter", "l", "2", "alt+enter", "l", "3")
        assert app.prompt_input.text == "l1\nl2\nl3"
        await pilot.press("enter")
        await idle(pilot, app)
    assert fake.chat_bodies[0]["messages"][-1]["content"] == "l1\nl2\nl3"


async def test_model_picker_lists_ollama_models_and_switches(fake, make_config, app_factory):
    from zcoder.tui.dialogs.model_picker import ModelPicker

    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker))
        assert app.screen.models == list(fake.models)
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.model == fake.models[1]
        assert app.header_state.model == fake.models[1]
        await wait_until(pilot, lambda: len(fake.load_requests) == 2)  # warmed up again
        assert fake.load_requests[-1]["model"] == fake.models[1]


async def test_session_switching_is_idle_only(fake, make_config, app_factory):
    fake.enqueue(Turn.stall())
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "slow")
        await wait_until(pilot, lambda: app.busy)
        session = app.session_id
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert app.session_id == session
        assert "no turn is running" in transcript_text(app)
        await pilot.press("escape")
        await idle(pilot, app)


async def test_ollama_down_shows_one_clear_error_and_the_app_stays(make_config, app_factory):
    app = app_factory(make_config(host="127.0.0.1:9"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "not reachable" in transcript_text(app))
        await submit(pilot, app, "hello")
        await idle(pilot, app)
        text = transcript_text(app)
        assert "Ollama is not reachable at http://127.0.0.1:9; start it with `ollama serve`" in text
        assert "Traceback" not in text
        assert app.header_state.status == "Error"


async def test_a_dialog_that_cannot_fit_denies(fake, make_config, app_factory, workspace):
    fake.enqueue(
        Turn.tool_calls(call("run_command", {"command": "echo no > tiny.txt"})), Turn.text("ok")
    )
    app = app_factory(make_config())
    async with app.run_test(size=(36, 9)) as pilot:
        await submit(pilot, app, "run it")
        await idle(pilot, app)
        assert not isinstance(app.screen, ApprovalScreen)
        assert "too small" in transcript_text(app)
    assert not (workspace / "tiny.txt").exists()


async def test_dead_listener_is_noticed_and_the_app_runs_on(
    fake, make_config, app_factory, short_dir
):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await relay_ready(pilot, app)
        listener = app.relay.listener
        assert listener is not None and listener.pid is not None
        os.kill(listener.pid, signal.SIGKILL)  # the listener process dies on its own
        await wait_until(pilot, lambda: "Agent relay stopped" in transcript_text(app))
        assert app.header_state.relay == "off"
        assert not list((short_dir / "reg").glob("a-*.json"))
        fake.enqueue(Turn.text("still here"))
        await submit(pilot, app, "hello")
        await idle(pilot, app)
        assert "still here" in transcript_text(app)
        await submit(pilot, app, "/list-agents")
        await pilot.pause(0.3)


async def test_thinking_is_shown_while_it_streams_and_gone_after(fake, make_config, app_factory):
    fake.enqueue(
        Turn.thinking("first I look at the files, then I answer", text="the answer", delay=0.2)
    )
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "think about it")
        await wait_until(pilot, lambda: entries(app, "thinking"))
        assert entries(app, "thinking")[0].plain.startswith("thinking…")
        await idle(pilot, app)
        await pilot.pause()
        assert entries(app, "thinking") == []
        assert "the answer" in entries(app, "assistant")[0].plain


async def test_once_up_the_app_freezes_start_up_objects_and_spaces_full_collections(
    fake, make_config, app_factory
):
    import gc

    from zcoder.tui.state.collector import FULL_COLLECTION_EVERY

    before = gc.get_threshold()
    # The program's app does (run_app); apps made by other tests leave the collector be.
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}), tune_gc=True)
    try:
        async with app.run_test() as pilot:
            await wait_until(pilot, lambda: gc.get_freeze_count() > 0)
            assert gc.get_threshold()[2] == FULL_COLLECTION_EVERY
            assert gc.get_threshold()[:2] == before[:2]
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


async def test_an_app_made_without_tune_gc_leaves_the_collector_be(fake, make_config, app_factory):
    import gc

    before = (gc.get_threshold(), gc.get_freeze_count())
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test() as pilot:
        await idle(pilot, app)
        await pilot.pause(0.2)
        assert (gc.get_threshold(), gc.get_freeze_count()) == before


async def test_the_first_frame_needs_no_agent_and_an_early_prompt_waits_for_it(
    fake, make_config, app_factory, monkeypatch
):
    """Start-up's first stage draws the prompt (focused) and the header with the relay
    starting, and makes no agent, session or relay; a prompt submitted then runs the
    second stage first and is sent, whole and once (tui/parts/startup.py)."""
    from zcoder.tui.main_screen import MainScreen

    real_finish = MainScreen.finish_start
    calls: list[str] = []

    def finish_only_when_asked(self: MainScreen) -> None:
        # The call the first frame schedules is dropped: "the second stage has not run
        # yet", for as long as the test needs; the submitted prompt's call runs it.
        calls.append("finish")
        if len(calls) > 1:
            real_finish(self)

    monkeypatch.setattr(MainScreen, "finish_start", finish_only_when_asked)
    fake.enqueue(Turn.text("answered"))
    app = app_factory(make_config())

    def started() -> bool:
        return app.started and app.agent is not None and app.store is not None

    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        assert calls == ["finish"]
        assert not started() and app.agent is None and app.store is None
        assert app.relay is None and app.header_state.relay == "starting"
        assert app.focused is app.prompt_input
        await submit(pilot, app, "typed before the start finished")
        await idle(pilot, app)
        assert started()
        await wait_until(pilot, lambda: "answered" in transcript_text(app))
        await wait_until(pilot, lambda: app.header_state.relay == "ready")
    [body] = fake.chat_bodies
    assert body["messages"][-1] == {"role": "user", "content": "typed before the start finished"}
