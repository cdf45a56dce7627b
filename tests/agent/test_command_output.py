"""A command's output while it runs (ToolOutput events), kept when the turn is stopped,
and the user's own ``!commands`` added to the conversation without a turn."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.agent.support import make_harness, tool_result_ids, wait_until
from tests.fixtures.fake_ollama import Turn, call
from tests.fixtures.processes import pid_alive
from zcoder.agent import (
    Outcome,
    ToolFinished,
    ToolOutput,
    ToolStarted,
    UserCommandFinished,
    UserCommandStarted,
)
from zcoder.agent.compaction import render_history, split_history
from zcoder.agent.prompts import INTERRUPTED
from zcoder.agent.user_command import USER_COMMAND_OPEN, USER_STOPPED, is_user_command_record
from zcoder.sessions import DEFAULT_TITLE
from zcoder.tools import CommandPolicy, Profile

WAIT_FOR_GO = "while [ ! -e go ]; do sleep 0.02; done"


def pid_written(path: Path) -> bool:
    return path.exists() and path.read_text().endswith("\n")


def streamed(log, call_id: str) -> str:
    return "".join(e.text for e in log.of(ToolOutput) if e.call_id == call_id)


async def test_run_command_output_is_sent_as_events_while_it_runs(
    fake, store, workspace, client
) -> None:
    h = make_harness(fake, store, workspace, client, policy=CommandPolicy.ALLOW)
    command = f"echo step 1; {WAIT_FOR_GO}; echo step 2"
    fake.enqueue(Turn.tool_calls(call("run_command", {"command": command}, id="c1")))
    fake.enqueue(Turn.text("done"))
    task = asyncio.create_task(h.agent.run_user_turn("run it"))
    await wait_until(lambda: streamed(h.log, "c1") == "step 1\n", what="step 1")
    assert not h.log.of(ToolFinished)
    (workspace / "go").touch()
    assert (await asyncio.wait_for(task, 15)).outcome is Outcome.COMPLETE

    assert streamed(h.log, "c1") == "step 1\nstep 2\n"
    kinds = [
        type(e) for e in h.log.events if isinstance(e, ToolStarted | ToolOutput | ToolFinished)
    ]
    assert kinds[0] is ToolStarted and kinds[-1] is ToolFinished
    assert set(kinds[1:-1]) == {ToolOutput}
    # The model gets the result as before: the output, then the exit code.
    assert fake.chat_bodies[1]["messages"][-1]["content"] == "step 1\nstep 2\n[exit code 0]"


async def test_stopping_a_turn_mid_command_keeps_its_output_everywhere(
    fake, store, workspace, client
) -> None:
    h = make_harness(fake, store, workspace, client, policy=CommandPolicy.ALLOW)
    command = "echo long-1; echo long-2; sleep 300"
    fake.enqueue(Turn.tool_calls(call("run_command", {"command": command}, id="c1")))
    task = asyncio.create_task(h.agent.run_user_turn("run it"))
    await wait_until(lambda: "long-2" in streamed(h.log, "c1"), what="the output")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    expected = f"long-1\nlong-2\n[{INTERRUPTED}]"
    [finished] = h.log.of(ToolFinished)
    assert (finished.status, finished.output) == ("interrupted", expected)
    assert tool_result_ids(h.agent.messages) == ["c1"]
    assert h.agent.messages[-1]["content"] == expected
    data = h.load()
    assert data.messages == h.agent.messages
    [event] = [e for e in data.events if e.role == "tool"]
    assert event.text == expected
    assert event.metadata["status"] == "interrupted"

    # The next request tells the model what the command printed before it was stopped.
    fake.enqueue(Turn.text("It printed two lines."))
    assert (await h.agent.run_user_turn("what did it say?")).outcome is Outcome.COMPLETE
    tool_messages = [m for m in fake.chat_bodies[-1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == [expected]


async def test_a_stopped_call_that_printed_nothing_is_answered_as_before(
    fake, store, workspace, client
) -> None:
    h = make_harness(fake, store, workspace, client, policy=CommandPolicy.ALLOW)
    fake.enqueue(Turn.tool_calls(call("run_command", {"command": "sleep 300"}, id="c1")))
    task = asyncio.create_task(h.agent.run_user_turn("wait"))
    await wait_until(lambda: h.log.of(ToolStarted), what="the call")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert h.agent.messages[-1]["content"] == INTERRUPTED


async def test_the_output_kept_for_a_stopped_call_is_bounded(
    fake, store, workspace, client
) -> None:
    h = make_harness(fake, store, workspace, client, policy=CommandPolicy.ALLOW)
    h.agent.settings.max_tool_output = 4096
    command = "seq 1 300000; echo the-end; sleep 300"
    fake.enqueue(Turn.tool_calls(call("run_command", {"command": command}, id="c1")))
    task = asyncio.create_task(h.agent.run_user_turn("count"))
    await wait_until(lambda: "the-end" in streamed(h.log, "c1")[-100:], what="the end", timeout=20)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    result = h.agent.messages[-1]["content"]
    assert result.startswith("1\n2\n3\n")
    assert result.endswith(f"300000\nthe-end\n[{INTERRUPTED}]")
    assert "bytes omitted" in result
    assert len(result.encode()) <= 4096 + 200


# -- the user's !commands ----------------------------------------------------------------


async def test_a_user_command_becomes_context_without_a_model_request(
    fake, store, workspace, client
) -> None:
    h = make_harness(fake, store, workspace, client)
    finished = await h.agent.run_user_command("echo hi; echo oops >&2; exit 3")

    assert fake.requests == []  # no model request of any kind
    assert h.approver.requests == []  # and no approval: the user typed it
    assert (finished.status, finished.exit_code) == ("failed", 3)
    assert finished.output == "hi\noops\n[exit code 3]"
    [started] = h.log.of(UserCommandStarted)
    assert started.command == "echo hi; echo oops >&2; exit 3"
    assert "".join(e.text for e in h.log.of(ToolOutput) if e.call_id == started.command_id) == (
        "hi\noops\n"
    )
    [record] = h.agent.messages
    assert record["role"] == "user" and is_user_command_record(record)
    assert record["content"].startswith(USER_COMMAND_OPEN)
    assert "$ echo hi; echo oops >&2; exit 3\nhi\noops\n[exit code 3]\n" in record["content"]
    assert h.agent.user_ledger == []

    data = h.load()
    assert data.messages == h.agent.messages
    assert data.user_ledger == []
    assert data.info.title == DEFAULT_TITLE
    [event] = data.events
    assert event.role == "tool" and event.text == "hi\noops\n[exit code 3]"
    assert event.metadata["user_command"] is True
    assert event.metadata["command"] == "echo hi; echo oops >&2; exit 3"
    assert (event.metadata["status"], event.metadata["exit_code"]) == ("failed", 3)

    # The next prompt's request carries it exactly once, before the prompt.
    fake.enqueue(Turn.text("It printed hi."))
    await h.agent.run_user_turn("what did it print?")
    [body] = fake.chat_bodies
    contents = [m["content"] for m in body["messages"]]
    assert [m["role"] for m in body["messages"]] == ["system", "user", "user"]
    assert sum("$ echo hi" in c for c in contents) == 1
    assert contents[-1] == "what did it print?"


async def test_a_user_command_runs_in_the_workspace_without_approval_in_sysadmin(
    fake, store, workspace, client
) -> None:
    h = make_harness(fake, store, workspace, client, profile=Profile.SYSADMIN)
    finished = await h.agent.run_user_command("pwd; touch made-here")
    assert finished.status == "completed"
    assert finished.output == f"{workspace}\n[exit code 0]"
    assert (workspace / "made-here").exists()
    assert h.approver.requests == []


async def test_a_user_command_denied_to_the_model_still_runs_for_the_user(
    fake, store, workspace, client
) -> None:
    h = make_harness(fake, store, workspace, client, policy=CommandPolicy.DENY)
    assert (await h.agent.run_user_command("echo mine")).status == "completed"


async def test_stopping_a_user_command_keeps_its_output(fake, store, workspace, client) -> None:
    h = make_harness(fake, store, workspace, client)
    task = asyncio.create_task(h.agent.run_user_command("echo partial; echo $$ > pid; sleep 300"))
    await wait_until(
        lambda: "partial" in "".join(e.text for e in h.log.of(ToolOutput)), what="the output"
    )
    await wait_until(lambda: pid_written(workspace / "pid"), what="the pid")
    pid = int((workspace / "pid").read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    await wait_until(lambda: not pid_alive(pid), what="the command to be gone")
    expected = f"partial\n[{USER_STOPPED}]"
    [finished] = h.log.of(UserCommandFinished)
    assert (finished.status, finished.output) == ("interrupted", expected)
    [record] = h.agent.messages
    assert expected in record["content"]
    [event] = h.load().events
    assert (event.text, event.metadata["status"]) == (expected, "interrupted")


async def test_an_empty_user_command_is_refused(harness) -> None:
    with pytest.raises(ValueError):
        await harness.agent.run_user_command("  ")


def test_a_user_command_does_not_start_a_turn_for_compaction() -> None:
    record = {"role": "user", "content": f"{USER_COMMAND_OPEN}\n$ ls\na\n[exit code 0]\n"}
    messages = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "one"},
        record,
        {"role": "user", "content": "second"},
        {"role": "assistant", "content": "two"},
    ]
    older, kept = split_history(messages, keep_turns=1)
    assert older == messages[:3] and kept == messages[3:]
    assert "SHELL COMMAND THE USER RAN" in render_history(older)
