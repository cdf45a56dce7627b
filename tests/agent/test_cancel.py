"""Stopping a turn (its task cancelled) mid-stream and mid-command leaves history whole."""

from __future__ import annotations

import asyncio

import pytest

from tests.agent.support import (
    make_harness,
    tool_call_ids,
    tool_result_ids,
    wait_until,
)
from tests.fixtures.approver import ScriptedApprover
from tests.fixtures.fake_ollama import Turn, call
from tests.fixtures.processes import pid_alive
from zcoder.agent import AssistantDelta, AssistantMessage, Outcome, ToolFinished, TurnFinished
from zcoder.agent.prompts import INTERRUPTED, NOT_EXECUTED
from zcoder.tools import ApprovalDecision


async def test_cancel_mid_stream_keeps_the_partial_reply_out_of_the_history(harness, fake) -> None:
    fake.enqueue(Turn.stall(before="I was about to say "))
    task = asyncio.create_task(harness.agent.run_user_turn("say something"))
    await wait_until(
        lambda: "".join(d.text for d in harness.log.of(AssistantDelta)) == "I was about to say ",
        what="the partial reply",
    )
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert fake.wait_for_disconnect(5.0), "the model request was not closed"
    assert harness.log.of(AssistantMessage) == [
        AssistantMessage("I was about to say ", partial=True, streamed=True)
    ]
    assert harness.log.of(TurnFinished)[-1].outcome is Outcome.STOPPED
    assert harness.agent.messages == [{"role": "user", "content": "say something"}]
    data = harness.load()
    assert data.messages == harness.agent.messages
    partial = [e for e in data.events if e.role == "assistant"]
    assert [(e.text, e.metadata) for e in partial] == [("I was about to say ", {"partial": True})]

    # The next request carries no trace of the partial reply.
    fake.enqueue(Turn.text("Fine."))
    finished = await harness.agent.run_user_turn("go on")
    assert finished.outcome is Outcome.COMPLETE
    sent = fake.chat_bodies[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "user"]
    assert "about to say" not in str(sent)


async def test_cancel_mid_command_kills_its_group_and_answers_every_call(
    fake, store, workspace, client
) -> None:
    approver = ScriptedApprover(ApprovalDecision.ONCE)
    h = make_harness(fake, store, workspace, client, approver=approver)
    # The pause keeps the cancel out of the moment the process is being started: a cancel
    # there reaches asyncio's own cleanup, which kills the shell but not its group (a
    # known gap of run_command, reported separately).
    command = "sleep 30 & echo $! > child.pid; sleep 0.5; echo $$ > shell.pid; sleep 30"
    fake.enqueue(
        Turn.tool_calls(
            call("list_files", {}, id="c1"),
            call("run_command", {"command": command}, id="c2"),
            call("write_file", {"path": "later.txt", "content": "x"}, id="c3"),
        )
    )
    task = asyncio.create_task(h.agent.run_user_turn("run it"))

    def pid_files_written() -> bool:
        return all(
            (workspace / n).exists() and (workspace / n).read_text().endswith("\n")
            for n in ("shell.pid", "child.pid")
        )

    await wait_until(pid_files_written, what="the command to start")
    pids = [int((workspace / n).read_text()) for n in ("shell.pid", "child.pid")]
    assert all(pid_alive(pid) for pid in pids)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    await wait_until(lambda: not any(pid_alive(pid) for pid in pids), what="the group to die")
    assert not (workspace / "later.txt").exists()
    assert [r.command for r in approver.requests] == [command]
    statuses = [(e.call_id, e.status) for e in h.log.of(ToolFinished)]
    assert statuses == [("c1", "completed"), ("c2", "interrupted"), ("c3", "not_executed")]

    messages = h.agent.messages
    assert tool_call_ids(messages) == tool_result_ids(messages) == ["c1", "c2", "c3"]
    results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    assert results["c2"] == INTERRUPTED
    assert results["c3"] == NOT_EXECUTED

    data = h.load()
    assert data.messages == messages
    tools = {e.metadata["call_id"]: e for e in data.events if e.role == "tool"}
    assert tools["c1"].metadata["status"] == "completed"
    assert tools["c2"].metadata["status"] == "interrupted"
    assert tools["c3"].metadata["status"] == "interrupted"
    assert tools["c3"].metadata["not_executed"] is True
    assert [e.text for e in data.events if e.role == "system"] == ["Stopped."]

    # The history is one the model accepts: the next turn simply goes on.
    fake.enqueue(Turn.text("Stopped, as you asked."))
    assert (await h.agent.run_user_turn("ok")).outcome is Outcome.COMPLETE
    assert [m["role"] for m in fake.chat_bodies[-1]["messages"][-2:]] == ["tool", "user"]


async def test_cancel_while_waiting_for_approval_interrupts_the_call(
    fake, store, workspace, client
) -> None:
    class SlowApprover(ScriptedApprover):
        async def approve_command(self, request):
            self.requests.append(request)
            await asyncio.sleep(30)
            return ApprovalDecision.ONCE

    approver = SlowApprover()
    h = make_harness(fake, store, workspace, client, approver=approver)
    fake.enqueue(Turn.tool_calls(call("run_command", {"command": "touch ran"}, id="r1")))
    task = asyncio.create_task(h.agent.run_user_turn("run"))
    await wait_until(lambda: approver.requests, what="the approval request")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert not (workspace / "ran").exists()
    assert tool_result_ids(h.agent.messages) == ["r1"]
    assert h.agent.messages[-1]["content"] == INTERRUPTED
