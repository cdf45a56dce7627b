"""/goal in the app, driven as a user would: the worker's turns, the independent check,
the budget, pause/resume/clear, Escape, the session's save and a restart."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.tui.conftest import idle, submit, transcript_text, wait_until
from zcoder.agent.goal_check import CHECK_PROMPT
from zcoder.sessions import SessionStore
from zcoder.tui import ZcoderApp

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 40)


def finish(response: str = "Done.") -> Turn:
    return Turn.tool_calls(call("finish", {"status": "complete", "response": response}))


def verdict(said: str, reasons: str) -> Turn:
    return Turn.tool_calls(call("verdict", {"verdict": said, "reasons": reasons}))


def check_requests(fake: FakeOllama) -> list[dict[str, Any]]:
    return [b for b in fake.chat_bodies if b["messages"][0]["content"] == CHECK_PROMPT]


def worker_requests(fake: FakeOllama) -> list[dict[str, Any]]:
    return [
        b
        for b in fake.chat_bodies
        if len(b["messages"]) > 1 and b["messages"][0]["content"] != CHECK_PROMPT
    ]


def header(app: ZcoderApp) -> str:
    return app.main.header.render().plain


def saved_goal(app: ZcoderApp, workspace: Path) -> dict[str, Any] | None:
    store, session = app.services.store, app.services.session_id
    assert store is not None and session is not None
    return store.load(session, workspace, "coding").state.get("goal")


async def paused_by_the_budget(pilot: Any, app: ZcoderApp, typed: str) -> None:
    """Type ``typed`` (a /goal) and wait until its budget paused it and nothing runs."""
    await submit(pilot, app, typed)
    await wait_until(pilot, lambda: "Goal paused" in transcript_text(app))
    await idle(pilot, app)
    assert "its token budget is spent" in transcript_text(app)


async def test_the_goal_runs_until_the_check_accepts_and_a_rejection_reaches_the_worker(
    fake: FakeOllama, make_config: Any, app_factory: Any, workspace: Path
) -> None:
    fake.enqueue(
        # turn 1: an edit, then finish; the check sends it back
        Turn.tool_calls(call("write_file", {"path": "notes.md", "content": "draft\n"})),
        finish("I wrote notes.md."),
        verdict("reject", "notes.md lacks the word FINAL"),
        # turn 2: fixed; the check reads the file, then accepts
        Turn.tool_calls(call("write_file", {"path": "notes.md", "content": "FINAL\n"})),
        finish("notes.md says FINAL."),
        Turn.tool_calls(call("read_file", {"path": "notes.md"})),
        verdict("accept", "notes.md holds FINAL"),
    )
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "/goal write notes.md saying FINAL --tokens 50k")
        await wait_until(pilot, lambda: "Goal done" in transcript_text(app))
        await idle(pilot, app)
        text = transcript_text(app)
        assert "✗ The check sent the goal back: notes.md lacks the word FINAL" in text
        assert "check: read_file notes.md" in text
        assert "goal done" in header(app)
        doc = saved_goal(app, workspace)
        assert doc is not None and doc["state"] == "done" and doc["rejections"] == 1
        assert doc["turns"] == 2 and doc["spent"] > 0
    assert (workspace / "notes.md").read_text() == "FINAL\n"
    last = [b["messages"][-1]["content"] for b in worker_requests(fake)]
    first, second = (text for text in last if text.startswith("[goal]"))
    assert first.startswith("[goal] Work toward this objective: write notes.md saying FINAL")
    assert "call finish" in first
    assert "The check sent it back: notes.md lacks the word FINAL" in second
    checks = check_requests(fake)
    assert len(checks) == 3  # the reject, the read, the accept
    # A fresh context: its own system prompt and the data, nothing of the conversation.
    opening = checks[0]["messages"]
    assert len(opening) == 2 and opening[1]["role"] == "user"
    assert "<objective>\nwrite notes.md saying FINAL\n</objective>" in opening[1]["content"]
    assert "+draft" in opening[1]["content"]
    assert "I wrote notes.md." in opening[1]["content"]
    assert "[goal]" not in str(opening)
    # The second check's diff is from before the goal's first edit to now.
    assert "+FINAL" in checks[1]["messages"][1]["content"]
    tools = {t["function"]["name"] for t in checks[0]["tools"]}
    assert tools == {"read_file", "read_file_range", "search", "list_files", "verdict"}


async def test_the_checks_model_cannot_change_anything_whatever_it_calls(
    fake: FakeOllama, make_config: Any, app_factory: Any, workspace: Path, short_dir: Path
) -> None:
    marker = short_dir / "ran"
    fake.enqueue(
        finish("All done."),
        # A prompt-injected check tries every way to change something, then accepts.
        Turn.tool_calls(
            call("write_file", {"path": "pwned.txt", "content": "x"}),
            call("replace_text", {"path": "hello.py", "old_text": "hello", "new_text": "bye"}),
            call("apply_patch", {"patch": "--- a/hello.py\n+++ b/hello.py\n"}),
            call("run_command", {"command": f"touch {marker}"}),
            call("send_agent_message", {"to": "peer", "message": "hi"}),
            call("load_tools", {"names": ["write_file"]}),
        ),
        Turn.tool_calls(call("run_command", {"command": f"touch {marker}"})),
        verdict("reject", "nothing was done"),
        Turn.text("waiting"),  # the next worker turn: no finish, so the goal goes on
    )
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "/goal do nothing harmful --tokens 1000000")
        await wait_until(pilot, lambda: "sent the goal back" in transcript_text(app))
        await submit(pilot, app, "/goal pause")
        await idle(pilot, app)
        assert not app.screen_stack[-1:] or app.screen is app.main  # no dialog was opened
    assert not (workspace / "pwned.txt").exists()
    assert not marker.exists()
    assert (workspace / "hello.py").read_text() == "print('hello')\n"
    second = check_requests(fake)[1]["messages"]
    answers = [m["content"] for m in second if m["role"] == "tool"]
    assert len(answers) == 6
    assert all(a.startswith("Error: there is no tool named") for a in answers), answers


async def test_the_token_budget_pauses_the_goal(
    fake: FakeOllama, make_config: Any, app_factory: Any, workspace: Path
) -> None:
    fake.enqueue(
        Turn.text("working on it", prompt_eval_count=3000, eval_count=100),
        Turn.text("still working", prompt_eval_count=3000, eval_count=100),
        Turn.text("never sent"),
    )
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await paused_by_the_budget(pilot, app, "/goal count the stars --tokens 5000")
        assert "its token budget is spent (6k/5k)" in transcript_text(app)
        assert "goal paused · 6k/5k" in header(app)
        assert len(worker_requests(fake)) == 2
        doc = saved_goal(app, workspace)
        assert doc is not None and doc["state"] == "paused" and doc["spent"] == 6200
        await submit(pilot, app, "/goal resume")
        await wait_until(pilot, lambda: "/goal resume --tokens N" in transcript_text(app))
        assert len(worker_requests(fake)) == 2  # refused: nothing ran


async def test_the_budget_ends_a_long_turn_at_its_next_safe_point(
    fake: FakeOllama, make_config: Any, app_factory: Any, workspace: Path
) -> None:
    def listing(n: int) -> Turn:
        args = {"path": "."}
        return Turn.tool_calls(call("list_files", args, id=f"c{n}"), prompt_eval_count=3000)

    fake.enqueue(*(listing(n) for n in range(6)))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await paused_by_the_budget(pilot, app, "/goal look around --tokens 5000")
        doc = saved_goal(app, workspace)
        assert doc is not None and (doc["state"], doc["turns"]) == ("paused", 1)
    # The second request passed the budget: its call was answered, no third was sent.
    [_first, second] = worker_requests(fake)
    assert second["messages"][-1]["tool_call_id"] == "c0"


async def test_pause_resume_and_clear(
    fake: FakeOllama, make_config: Any, app_factory: Any, workspace: Path
) -> None:
    gate = threading.Event()
    fake.enqueue(replace(Turn.text("first turn"), gate=gate), finish(), verdict("accept", "ok"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "/goal tidy up")
        await wait_until(pilot, lambda: len(worker_requests(fake)) == 1)
        await submit(pilot, app, "/goal pause")
        await wait_until(
            pilot, lambda: "Goal paused after the running turn" in transcript_text(app)
        )
        gate.set()
        await idle(pilot, app)
        assert len(worker_requests(fake)) == 1  # no turn after the pause
        await submit(pilot, app, "/goal status")
        await wait_until(pilot, lambda: "Goal (paused): tidy up" in transcript_text(app))
        await submit(pilot, app, "/goal something else")
        await wait_until(pilot, lambda: "a goal is paused already" in transcript_text(app))
        await submit(pilot, app, "/goal resume")
        await wait_until(pilot, lambda: "Goal done" in transcript_text(app))
        await idle(pilot, app)
        await submit(pilot, app, "/goal clear")
        await wait_until(pilot, lambda: "Goal cleared." in transcript_text(app))
        assert "goal" not in header(app)
        assert saved_goal(app, workspace) is None


async def test_the_users_prompt_goes_before_the_next_goal_turn(
    fake: FakeOllama, make_config: Any, app_factory: Any
) -> None:
    gate = threading.Event()
    fake.enqueue(
        replace(Turn.text("goal turn one"), gate=gate),
        Turn.text("the answer to the user"),
        Turn.text("goal turn two"),
    )
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "/goal keep going")
        await wait_until(pilot, lambda: len(worker_requests(fake)) == 1)
        app.prompt_input.load_text("a question")
        await pilot.press("ctrl+g")  # queued behind the running turn
        await pilot.pause()
        gate.set()
        await wait_until(pilot, lambda: len(worker_requests(fake)) >= 3)
        await submit(pilot, app, "/goal pause")
        await idle(pilot, app)
    second, third = worker_requests(fake)[1:3]
    assert second["messages"][-1]["content"] == "a question"
    assert third["messages"][-1]["content"].startswith("[goal]")


async def test_escape_pauses_the_goal_and_a_restart_keeps_it_paused(
    fake: FakeOllama, make_config: Any, app_factory: Any, workspace: Path
) -> None:
    fake.enqueue(Turn.stall(before="thinking"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "/goal refactor everything --tokens 90000")
        await wait_until(pilot, lambda: len(worker_requests(fake)) == 1)
        await pilot.press("escape")
        await wait_until(pilot, lambda: "Goal paused (Escape)" in transcript_text(app))
        await idle(pilot, app)
        session = app.services.session_id
        doc = saved_goal(app, workspace)
        assert doc is not None and doc["state"] == "paused"
    # Saved as running (a crash mid-turn), it still comes back paused.
    store = SessionStore(make_config().home)
    try:
        assert session is not None
        store.save_state(session, "goal", {**doc, "state": "running"})
    finally:
        store.close()
    requests = len(fake.chat_bodies)
    again = app_factory(make_config(), resume=session)
    async with again.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "goal is paused" in transcript_text(again))
        await wait_until(pilot, lambda: "goal paused" in header(again))
        await idle(pilot, again)
        assert not again.busy
        assert len(worker_requests(fake)) == 1
        assert len([b for b in fake.chat_bodies[requests:] if len(b["messages"]) > 1]) == 0


async def test_a_goal_is_refused_in_plan_mode_and_runs_nothing(
    fake: FakeOllama, make_config: Any, app_factory: Any, workspace: Path
) -> None:
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "/mode plan")
        await submit(pilot, app, "/goal write notes.md")
        await wait_until(pilot, lambda: "plan mode changes nothing" in transcript_text(app))
        await idle(pilot, app)
        assert worker_requests(fake) == []
        assert saved_goal(app, workspace) is None
        assert "goal" not in header(app)


async def test_a_running_goal_pauses_when_the_user_switches_to_plan_mode(
    fake: FakeOllama, make_config: Any, app_factory: Any, workspace: Path
) -> None:
    gate = threading.Event()
    fake.enqueue(replace(Turn.text("goal turn one"), gate=gate), Turn.text("goal turn two"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "/goal tidy up")
        await wait_until(pilot, lambda: len(worker_requests(fake)) == 1)
        await submit(pilot, app, "/mode plan")
        gate.set()
        await wait_until(pilot, lambda: "Goal paused" in transcript_text(app))
        await idle(pilot, app)
        assert len(worker_requests(fake)) == 1  # no goal turn in plan mode
        assert "plan mode changes nothing" in transcript_text(app)
        doc = saved_goal(app, workspace)
        assert doc is not None and doc["state"] == "paused"
