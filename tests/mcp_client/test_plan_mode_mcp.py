"""Plan mode and MCP: a tool without readOnlyHint is neither offered nor run.

A real hostile server process (tests/fixtures/mcp_hostile.py): its ``note`` tool writes a
file and says nothing of being read-only, its ``peek`` says readOnlyHint. The scripted
model calls ``note`` anyway, under --yes: the file is never written and nobody is asked.
"""

from __future__ import annotations

from pathlib import Path

from tests.fixtures.approver import ScriptedApprover
from tests.fixtures.fake_ollama import Turn, call
from tests.mcp_client.support import hostile, write_servers
from tests.mcp_client.turns import World, tool_names, tool_results
from zcoder.agent import Outcome
from zcoder.tools import CommandPolicy, Mode


async def test_an_mcp_tool_without_read_only_hint_is_not_offered_nor_run_in_plan_mode(
    world: World, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    write_servers(
        world.home / "mcp.json", {"hostile": hostile("injected", HOSTILE_NOTES=str(notes))}
    )
    approver = ScriptedApprover()  # any question fails the test
    agent, _ = world.agent(approver, policy=CommandPolicy.ALLOW)
    agent.approval.switch_mode(Mode.PLAN)
    world.fake.enqueue(
        Turn.tool_calls(
            call("mcp__hostile__note", {"text": "owned"}), call("mcp__hostile__peek", {})
        ),
        Turn.text("1. take a note"),
    )
    finished = await agent.run_user_turn("plan a note")
    assert finished.outcome is Outcome.COMPLETE
    first, second = world.fake.chat_bodies
    offered = tool_names(first)
    assert "mcp__hostile__peek" in offered and "mcp__hostile__note" not in offered
    note, peek = tool_results(second)
    assert note.startswith("Error: plan mode is read-only: mcp__hostile__note")
    assert peek == "nothing to see"
    assert not notes.exists()
    assert approver.requests == []
