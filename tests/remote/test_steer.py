"""Steering over ``zcoder --connect``: Enter while the remote turn runs sends the text into
that turn (``_zcoder/input`` there), where it lands at the next safe point and is shown
here as steering. The TUI in tmux, the agent behind a real sshd (tests/remote/test_connect.py
has the setting); the remote's command waits for a gate file, so the steer is typed while
the tool call runs, whatever the load."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from acp import RequestError

from tests.e2e.harness import World
from tests.fixtures.fake_ollama import Turn, call
from tests.fixtures.sshd import SshServer, available
from tests.remote.test_connect import Remote, connect, sshd, wait_said
from zcoder.agent.events import AgentEvent, Outcome, ToolOutput, UserSteered
from zcoder.base.ssh_target import Target
from zcoder.frontend.pending import InputKind, PendingItem
from zcoder.remote.agent import RemoteAgent
from zcoder.tools import ApprovalDecision, CommandApprovalRequest, EditApprovalRequest

__all__ = ["sshd"]  # the fixture, used by name

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(available() is not None, reason=str(available())),
]

GATED = (
    "echo waiting; for i in $(seq 1 2000); do [ -e go ] && break; sleep 0.05; done; echo through"
)


def test_enter_during_a_remote_tool_call_steers_it(world: World, sshd: SshServer) -> None:
    server = world.server(demo=False)
    remote = Remote(world, server)
    server.enqueue(
        Turn.tool_calls(call("run_command", {"command": GATED}, id="c1")),
        Turn.text("Tabs everywhere now."),
    )
    tui = connect(world, sshd, remote)
    tui.submit("format the files")
    tui.wait_text("[n]/Esc deny")
    tui.send_key("y")
    wait_said(tui, "waiting")  # the command runs there, held by its gate
    tui.submit("use tabs, not spaces")
    wait_said(tui, "Steering sent to the turn running on")
    assert len(server.chat_bodies) == 1  # not a prompt of its own
    (remote.workspace / "go").touch()
    tui.wait_text("Tabs everywhere now.")

    first, second = server.chat_bodies
    assert first["messages"][-1]["content"] == "format the files"
    *_, result, steered = second["messages"]
    assert result["role"] == "tool" and "through" in result["content"]
    assert steered == {"role": "user", "content": "use tabs, not spaces"}
    rows = tui.screen()
    label = next(n for n, row in enumerate(rows) if "you ↪ steering" in row)
    assert "use tabs, not spaces" in rows[label + 1]
    reply = next(n for n, row in enumerate(rows) if "Tabs everywhere now." in row)
    assert label < reply  # shown where it landed: before the reply it brought
    [session] = remote.sessions()
    assert remote.tool_events(session)[0][1] == "completed"
    assert tui.quit() == 0


class AllowOnce:
    async def approve_command(self, request: CommandApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision.ONCE

    async def approve_edit(self, request: EditApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision.ONCE


async def until(condition: Callable[[], bool]) -> None:
    async def seen() -> None:
        while not condition():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(seen(), 60)


async def test_the_remote_agent_steers_queues_lists_and_drops_there(
    world: World, sshd: SshServer
) -> None:
    """RemoteAgent's side of the seam (and what a /queue over the connection lists):
    ``steer`` with nothing running there says so (the TUI then sends a prompt); during
    the turn it lands, and follow-ups queued there run after it, in the same turn here."""
    server = world.server(demo=False)
    remote = Remote(world, server)
    server.enqueue(
        Turn.tool_calls(call("run_command", {"command": GATED}, id="c1")),
        Turn.text("Steered."),
        Turn.text("Docs written."),
    )
    events: list[AgentEvent] = []
    users: list[str] = []
    env = world.env("here", None, ZCODER_SSH=sshd.ssh_command, ZCODER_REMOTE_COMMAND=remote.command)
    agent = RemoteAgent(
        Target.parse(f"{sshd.alias}{remote.workspace}"),
        env,
        on_event=events.append,
        on_user=users.append,
        approver=AllowOnce(),
        on_dropped=lambda _why: None,
    )
    await agent.open()
    try:
        await agent.open_session()
        assert await agent.steer("nothing runs yet") is False
        assert await agent.waiting_input() == []
        turn = asyncio.ensure_future(agent.run_user_turn("do it"))
        await until(lambda: any(isinstance(e, ToolOutput) for e in events))
        assert await agent.steer("use tabs") is True
        await agent.input_action("queue", text="then the docs")
        await agent.input_action("queue", text="not this")
        left = await agent.input_action("drop", number=3)
        assert left == [
            PendingItem(InputKind.STEER, "use tabs"),
            PendingItem(InputKind.FOLLOW_UP, "then the docs"),
        ]
        with pytest.raises(RequestError, match="Invalid params"):
            await agent.input_action("drop", number=9)
        assert await agent.waiting_input() == left
        (remote.workspace / "go").touch()
        finished = await asyncio.wait_for(turn, 60)
    finally:
        agent.shut()
        if agent.connection is not None:
            await agent.connection.close()

    assert finished.outcome is Outcome.COMPLETE
    assert [e for e in events if isinstance(e, UserSteered)] == [UserSteered("use tabs")]
    assert users == ["then the docs"]
    assert server.chat_bodies[1]["messages"][-1] == {"role": "user", "content": "use tabs"}
    assert server.chat_bodies[2]["messages"][-1] == {"role": "user", "content": "then the docs"}
