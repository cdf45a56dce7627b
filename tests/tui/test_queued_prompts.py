"""The user is never starved: follow-ups (Ctrl+G) queue during a turn; relayed floods wait
for the user; Escape holds what waits until /queue resume.

The real app under run_test, with the fake Ollama and a sender Relay in the test process.
"""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from typing import Any

import pytest

from tests.fixtures.fake_ollama import Turn
from tests.fixtures.model_requests import last_user_messages
from tests.tui.conftest import entries, idle, submit, transcript_text, wait_until
from tests.tui.support import relay_ready, relay_to
from zcoder.tui import ZcoderApp

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 40)


async def send(app: ZcoderApp, sender: Any, body: str) -> None:
    assert app.relay is not None and app.relay.instance_id is not None
    result = await relay_to(app, sender, body)
    assert result.status == "accepted", result.text


async def follow_up(pilot: Any, app: ZcoderApp, text: str) -> None:
    """``text`` sent with Ctrl+G: a follow-up, after the running turn."""
    app.prompt_input.load_text(text)
    await pilot.press("ctrl+g")
    await pilot.pause()


async def busy_with_a_prompt(pilot: Any, app: ZcoderApp, prompt: str) -> None:
    """Once the relay is up, the user's ``prompt`` starts a turn (the test scripts it to
    stall until Escape)."""
    await relay_ready(pilot, app)
    await submit(pilot, app, prompt)
    await wait_until(pilot, lambda: app.busy)


async def busy_with_a_relayed_task(pilot: Any, app: ZcoderApp, sender: Any, body: str) -> None:
    """Once the relay is up, a relayed task starts a turn (the test scripts it to stall
    until Escape)."""
    await relay_ready(pilot, app)
    await send(app, sender, body)
    await wait_until(pilot, lambda: app.busy and entries(app, "relay"))


async def test_a_prompt_during_a_relayed_turn_is_queued_shown_editable_and_cancellable(
    fake, make_config, app_factory, sender
):
    fake.enqueue(Turn.stall(before="working on the relayed task"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await busy_with_a_relayed_task(pilot, app, sender, "relayed task")

        await follow_up(pilot, app, "first queued prompt")
        await follow_up(pilot, app, "second queued prompt")
        strip = app.queued_prompts
        assert app.scheduler.prompts() == ("first queued prompt", "second queued prompt")
        assert strip.display
        assert "follow-up ① first queued prompt" in strip.plain
        assert "follow-up ② second queued prompt" in strip.plain
        assert "↑ edits the last one · clear it to cancel" in strip.plain
        assert app.prompt_input.text == ""
        assert entries(app, "user") == []  # a prompt enters the transcript when it starts
        assert "A turn is running" not in transcript_text(app)

        # Up in the empty prompt takes the last one back; Enter queues it again.
        await pilot.press("up")
        await pilot.pause()
        assert app.prompt_input.text == "second queued prompt"
        assert app.scheduler.prompts() == ("first queued prompt",)
        assert "editing · Enter sends it again" in strip.plain and "②" not in strip.plain
        app.prompt_input.insert(", edited")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert app.scheduler.prompts() == ("first queued prompt", "second queued prompt, edited")

        # Taken back again and cleared: cancelled.
        await pilot.press("up")
        await pilot.pause()
        assert app.prompt_input.text == "second queued prompt, edited"
        await pilot.press("ctrl+u")  # the cursor is at the end: delete to the line's start
        await wait_until(pilot, lambda: not app.scheduler.editing())
        assert app.prompt_input.text == ""
        assert app.scheduler.prompts() == ("first queued prompt",)
        assert "follow-up ① first queued prompt" in strip.plain and "editing" not in strip.plain

        # Escape stops the relayed turn and holds the queue, which runs on /queue resume.
        fake.enqueue(Turn.text("first answered"))
        await pilot.press("escape")
        await idle(pilot, app)
        assert "1 waiting input is held: /queue resume runs it." in transcript_text(app)
        assert "follow-up (held) ① first queued prompt" in strip.plain
        assert "/queue resume runs" in strip.plain
        assert len(fake.chat_bodies) == 1  # nothing ran unasked
        await submit(pilot, app, "/queue resume")
        await wait_until(pilot, lambda: len(fake.chat_bodies) == 2)
        await idle(pilot, app)
        assert not strip.display and app.scheduler.prompts() == ()
        roles = [e.role for e in entries(app) if e.role in ("relay", "user")]
        assert roles == ["relay", "user"]
        assert entries(app, "user")[0].plain.endswith("first queued prompt")
    assert last_user_messages(fake.chat_bodies) == ["relay: relayed task", "first queued prompt"]
    assert all("edited" not in json.dumps(body) for body in fake.chat_bodies)


async def test_a_follow_up_held_by_escape_holds_no_relayed_task_and_runs_on_resume(
    fake, make_config, app_factory, sender
):
    # Its place among relayed tasks (its mark) is tests/tui/test_scheduler.py's.
    fake.enqueue(Turn.stall(before="busy"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await busy_with_a_relayed_task(pilot, app, sender, "one")
        await send(app, sender, "two")
        await follow_up(pilot, app, "mine")
        await send(app, sender, "three")
        fake.enqueue(*(Turn.text(f"done {n}") for n in range(3)))
        await pilot.press("escape")
        await wait_until(pilot, lambda: len(fake.chat_bodies) == 3)
        await idle(pilot, app)
        assert app.scheduler.prompts() == ("mine",)
        await submit(pilot, app, "/queue resume")
        await wait_until(pilot, lambda: len(fake.chat_bodies) == 4)
        await idle(pilot, app)
    assert last_user_messages(fake.chat_bodies) == [
        "relay: one",
        "relay: two",
        "relay: three",
        "mine",
    ]


async def test_slash_commands_still_run_at_once_during_a_turn(
    fake, make_config, app_factory, sender
):
    fake.enqueue(Turn.stall(before="busy"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await busy_with_a_prompt(pilot, app, "a long turn")
        await submit(pilot, app, "/agents")
        await wait_until(pilot, lambda: "Relay: available" in transcript_text(app))
        assert app.scheduler.prompts() == () and app.busy
        await pilot.press("escape")
        await idle(pilot, app)


async def test_relayed_tasks_past_the_limit_wait_for_the_user(
    fake, make_config, app_factory, sender
):
    fake.enqueue(Turn.stall(before="the user's turn"))
    app = app_factory(make_config(env={"ZCODER_RELAY_MAX_AUTO_TURNS": "2"}))
    async with app.run_test(size=SIZE) as pilot:
        await busy_with_a_prompt(pilot, app, "keep busy")
        for n in range(1, 6):
            await send(app, sender, f"task {n}")
        assert "f2" not in app.screen.active_bindings  # the key shows only while tasks wait
        fake.enqueue(*(Turn.text(f"done {n}") for n in range(1, 7)))
        await pilot.press("escape")
        await wait_until(pilot, lambda: "ran without you" in transcript_text(app))
        await idle(pilot, app)
        assert (
            "2 relayed tasks ran without you; 3 more are waiting. /agents continue (or F2) "
            "runs them." in transcript_text(app)
        )
        await wait_until(pilot, lambda: app.header_state.waiting)
        assert "3 queued · waiting for you" in str(app.header.render())
        assert "f2" in app.screen.active_bindings
        assert len(fake.chat_bodies) == 3 and app.relay is not None
        assert app.relay.status().queued == 3

        # Another task arrives while they wait: the notice and the header say the same.
        await send(app, sender, "task 6")
        await wait_until(pilot, lambda: "4 queued · waiting for you" in str(app.header.render()))
        await wait_until(pilot, lambda: "4 more are waiting" in transcript_text(app))
        assert "3 more are waiting" not in transcript_text(app)
        assert transcript_text(app).count("ran without you") == 1  # one notice, kept current

        await submit(pilot, app, "/agents")
        await wait_until(pilot, lambda: "Waiting for you: 2 relayed tasks" in transcript_text(app))
        assert len(fake.chat_bodies) == 3  # a status command is not the user acting

        await pilot.press("f2")
        await wait_until(pilot, lambda: "Running the 4 relayed tasks" in transcript_text(app))
        await wait_until(pilot, lambda: len(fake.chat_bodies) == 5)
        await idle(pilot, app)
        # Two more ran; the last two wait again, and the header says so.
        await wait_until(pilot, lambda: app.header_state.waiting)
        assert app.relay.status().queued == 2
        await wait_until(pilot, lambda: "2 more are waiting" in transcript_text(app))

        fake.enqueue(Turn.text("answered the user"))
        await submit(pilot, app, "I am here")  # the user acting: first, then the tasks
        await wait_until(pilot, lambda: len(fake.chat_bodies) == 8)
        await idle(pilot, app)
        assert not app.header_state.waiting and "f2" not in app.screen.active_bindings
    assert last_user_messages(fake.chat_bodies) == [
        "keep busy",
        "relay: task 1",
        "relay: task 2",
        "relay: task 3",
        "relay: task 4",
        "I am here",
        "relay: task 5",
        "relay: task 6",
    ]


async def test_no_limit_when_max_auto_turns_is_zero(fake, make_config, app_factory, sender):
    fake.enqueue(Turn.stall(before="the user's turn"))
    app = app_factory(make_config(env={"ZCODER_RELAY_MAX_AUTO_TURNS": "0"}))
    async with app.run_test(size=SIZE) as pilot:
        await busy_with_a_prompt(pilot, app, "keep busy")
        for n in range(1, 11):
            await send(app, sender, f"task {n}")
        fake.enqueue(*(Turn.text(f"done {n}") for n in range(1, 11)))
        await pilot.press("escape")
        await wait_until(pilot, lambda: len(fake.chat_bodies) == 11)
        await idle(pilot, app)
        assert "ran without you" not in transcript_text(app)
        assert not app.header_state.waiting


async def test_an_invalid_auto_turn_limit_turns_the_relay_off_with_the_reason(
    make_config, app_factory
):
    app = app_factory(make_config(env={"ZCODER_RELAY_MAX_AUTO_TURNS": "many"}))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.relay is None
        assert "Agent relay is off: ZCODER_RELAY_MAX_AUTO_TURNS" in transcript_text(app)


async def test_an_agent_that_takes_no_steering_keeps_enter_as_queueing_and_its_hint(
    fake, make_config, app_factory
):
    """--connect's agent, until it takes steering: Enter during a turn queues a follow-up,
    and the prompt's hint does not offer steering."""
    fake.enqueue(Turn.stall(before="busy"))
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.agent is not None)
        assert app.agent is not None
        app.agent.steering = None
        await submit(pilot, app, "a long turn")
        await wait_until(pilot, lambda: app.busy)
        assert app.prompt_input.border_subtitle.startswith("Enter send")
        await submit(pilot, app, "after it")
        assert [(i.kind.value, i.text) for i in app.services.pending.items()] == [
            ("follow-up", "after it")
        ]
        await pilot.press("escape")
        await idle(pilot, app)


async def test_the_prompts_hint_says_enter_steers_while_a_turn_runs(fake, make_config, app_factory):
    fake.enqueue(Turn.stall(before="busy"))
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "a long turn")
        await wait_until(pilot, lambda: app.busy)
        assert app.prompt_input.border_subtitle.startswith("Enter steer · Ctrl+G queue")
        await pilot.press("escape")
        await idle(pilot, app)
        assert app.prompt_input.border_subtitle.startswith("Enter send")


async def test_steering_a_reply_with_no_tool_calls_is_the_next_turn_before_follow_ups(
    fake, make_config, app_factory
):
    """No safe point comes in a reply without tool calls: the steer starts the next turn
    as soon as it ends, before a follow-up queued earlier; marked steering where it ran."""
    ends = threading.Event()
    fake.enqueue(
        replace(Turn.text("a long answer"), gate=ends),
        Turn.text("steered answer"),
        Turn.text("follow-up answer"),
    )
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "explain")
        await wait_until(pilot, lambda: "a long" in transcript_text(app))
        await follow_up(pilot, app, "and then this")
        await submit(pilot, app, "shorter please")  # Enter: steering
        assert [i.kind.value for i in app.services.pending.items()] == ["follow-up", "steer"]
        ends.set()
        await wait_until(pilot, lambda: len(fake.chat_bodies) == 3)
        await idle(pilot, app)
        assert "follow-up answer" in transcript_text(app)
        users = [e.plain for e in entries(app, "user")]
        assert users == ["you\nexplain", "you ↪ steering\nshorter please", "you\nand then this"]
    assert last_user_messages(fake.chat_bodies) == ["explain", "shorter please", "and then this"]
