"""A subagent in an editor: its task call is a tool call whose progress updates it."""

from __future__ import annotations

from pathlib import Path

from zcoder.acp.updates import EventTranslator
from zcoder.agent.events import SubagentProgress, ToolFinished, ToolStarted


def test_a_subagent_is_a_tool_call_with_progress_updates() -> None:
    translator = EventTranslator(Path("/ws"))
    (started,) = translator(ToolStarted("t1", "task", {"description": "find it", "prompt": "x"}))
    assert started.session_update == "tool_call" and started.title == "Subagent find it"

    (progress,) = translator(SubagentProgress("t1", "Read src/\x1b[31mx.py", 2, 1500))

    assert progress.session_update == "tool_call_update"
    assert progress.tool_call_id == "t1" and progress.status == "in_progress"
    text = progress.content[0].content.text
    assert text == "Read src/\\e[31mx.py · 2 turns · 1,500 tokens"  # made visible
    (done,) = translator(ToolFinished("t1", "task", "completed", "the report"))
    assert done.status == "completed"
