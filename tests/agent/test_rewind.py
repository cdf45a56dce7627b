"""/rewind's history cut and file plan, in real turns through the fake Ollama."""

from __future__ import annotations

from tests.agent.support import Harness, resumed_agent
from tests.fixtures.fake_ollama import Turn, call
from zcoder.agent.rewind import cut_conversation, rewind_points


def _write(path: str, content: str, done: str) -> tuple[Turn, Turn]:
    return Turn.tool_calls(call("write_file", {"path": path, "content": content})), Turn.text(done)


async def _three_prompts(harness: Harness) -> None:
    harness.server.enqueue(
        *_write("alpha.txt", "one\n", "first done"),
        *_write("alpha.txt", "two\n", "second done"),
        *_write("new.txt", "three\n", "third done"),
    )
    for prompt in ("first prompt", "second prompt", "third prompt"):
        await harness.agent.run_user_turn(prompt)


async def test_rewind_to_the_second_prompt_cuts_history_ledger_and_transcript_and_files(
    harness: Harness,
) -> None:
    await _three_prompts(harness)
    agent = harness.agent
    points = rewind_points(agent.messages, agent.user_ledger)
    assert [p.text for p in points] == ["third prompt", "second prompt", "first prompt"]
    second = points[1]
    assert second.prompt == 1 and second.prompts_after == 2
    kept_messages = agent.messages[: second.message]
    assert kept_messages[-1] == {"role": "assistant", "content": "first done"}
    assert second.messages_after == len(agent.messages) - len(kept_messages)

    plan = agent.edits.plan_rewind(second.prompt, second.name)
    assert plan is not None
    assert {(s.path, s.action) for s in plan.steps} == {
        ("alpha.txt", "restore"),
        ("new.txt", "delete"),
    }
    report = agent.edits.undo(plan)
    assert "restored alpha.txt" in report.text() and "deleted new.txt" in report.text()
    assert (harness.workspace / "alpha.txt").read_text() == "one\n"  # as the first left it
    assert not (harness.workspace / "new.txt").exists()

    cut_conversation(agent, second)
    assert agent.user_ledger == ["first prompt"]
    assert agent.messages == kept_messages
    saved = harness.load()
    assert saved.user_ledger == ["first prompt"]
    assert saved.messages == kept_messages
    assert [e.text for e in saved.events if e.role == "user"] == ["first prompt"]
    assert saved.events[-1].role == "assistant" and saved.events[-1].text == "first done"
    # A second process resumes the rewound state, and the next turn goes on from there.
    later = resumed_agent(harness.client, harness.store, harness.workspace, saved)
    assert later.messages == kept_messages
    harness.server.enqueue(Turn.text("again"))
    await later.run_user_turn("second prompt, edited")
    sent = harness.server.chat_bodies[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == [
        "first prompt",
        "second prompt, edited",
    ]


async def test_a_file_changed_outside_since_is_kept_not_clobbered(harness: Harness) -> None:
    await _three_prompts(harness)
    (harness.workspace / "alpha.txt").write_text("the user's own edit\n")
    agent = harness.agent
    first = rewind_points(agent.messages, agent.user_ledger)[-1]
    plan = agent.edits.plan_rewind(first.prompt, first.name)
    assert plan is not None
    [conflict] = plan.conflicts
    assert conflict.path == "alpha.txt"
    report = agent.edits.undo(plan)
    assert (harness.workspace / "alpha.txt").read_text() == "the user's own edit\n"
    assert not (harness.workspace / "new.txt").exists()
    assert "alpha.txt (changed since the agent's edit)" in report.text()


async def test_conversation_only_keeps_files_and_a_later_rewind_further_back_takes_them(
    harness: Harness,
) -> None:
    await _three_prompts(harness)
    agent = harness.agent
    third = rewind_points(agent.messages, agent.user_ledger)[0]
    cut_conversation(agent, third)  # the files stay as the third turn left them
    assert (harness.workspace / "new.txt").read_text() == "three\n"
    assert agent.edits.plan_rewind(2, "") is None  # nothing after prompt 2 any more
    harness.server.enqueue(*_write("other.txt", "x\n", "new third done"))
    await agent.run_user_turn("another third prompt")
    newest = rewind_points(agent.messages, agent.user_ledger)[0]
    plan = agent.edits.plan_rewind(newest.prompt, newest.name)
    assert plan is not None and [s.path for s in plan.steps] == ["other.txt"]
    # Back to before the second: the kept third turn's file goes too (a new process).
    later = resumed_agent(harness.client, harness.store, harness.workspace, harness.load())
    second = rewind_points(later.messages, later.user_ledger)[1]
    assert second.text == "second prompt"
    plan = later.edits.plan_rewind(second.prompt, second.name)
    assert plan is not None
    assert sorted(s.path for s in plan.steps) == ["alpha.txt", "new.txt", "other.txt"]


def test_a_prompt_a_compaction_summarised_has_no_place_in_the_history() -> None:
    messages = [
        {"role": "user", "content": "[summary of the earlier conversation]"},
        {"role": "user", "content": "kept prompt"},
        {"role": "assistant", "content": "ok"},
    ]
    points = rewind_points(messages, ["old prompt", "kept prompt"])
    assert [(p.text, p.message) for p in points] == [("kept prompt", 1), ("old prompt", None)]
    assert "cannot go back" in points[1].describe()


async def test_a_rewind_to_a_steer_takes_back_only_the_edits_made_after_it(
    harness: Harness,
) -> None:
    from zcoder.agent import Steer

    class Source:
        """Hands the steer over at the second safe point: after the first call's result."""

        def __init__(self) -> None:
            self.calls = 0

        def take_steers(self) -> list[Steer]:
            self.calls += 1
            return [Steer("and create new.txt")] if self.calls == 2 else []

    harness.agent.steering = Source()
    harness.server.enqueue(
        *_write("alpha.txt", "one\n", "")[:1],
        *_write("new.txt", "steered\n", "both done"),
    )
    await harness.agent.run_user_turn("change alpha")
    agent = harness.agent
    assert agent.user_ledger == ["change alpha", "and create new.txt"]
    steer = rewind_points(agent.messages, agent.user_ledger)[0]
    assert steer.text == "and create new.txt" and steer.message is not None
    plan = agent.edits.plan_rewind(steer.prompt, steer.name)
    assert plan is not None and [s.path for s in plan.steps] == ["new.txt"]
    whole = agent.edits.plan_rewind(0, "")
    assert whole is not None and sorted(s.path for s in whole.steps) == ["alpha.txt", "new.txt"]
    # Taken back to the steer, the turn's earlier edit stays for a rewind further back
    # (in a new process too).
    agent.edits.undo(plan)
    assert not (harness.workspace / "new.txt").exists()
    cut_conversation(agent, steer)
    later = resumed_agent(harness.client, harness.store, harness.workspace, harness.load())
    first = rewind_points(later.messages, later.user_ledger)[0]
    assert first.text == "change alpha"
    back = later.edits.plan_rewind(first.prompt, first.name)
    assert back is not None and [s.path for s in back.steps] == ["alpha.txt"]
    later.edits.undo(back)
    assert (harness.workspace / "alpha.txt").read_text() == "alpha\n"
    assert later.edits.plan_undo() is None
