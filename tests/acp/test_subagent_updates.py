"""A subagent in an editor: its task call is a tool call whose progress updates it."""

from __future__ import annotations

from pathlib import Path

from acp.schema import ContentToolCallContent, TextContentBlock, ToolCallProgress, ToolCallStart

from zcoder.acp.updates import EventTranslator
from zcoder.agent.events import SubagentProgress, ToolFinished, ToolStarted


def test_a_subagent_is_a_tool_call_with_progress_updates() -> None:
    translator = EventTranslator(Path("/ws"))
    (started,) = translator(ToolStarted("t1", "task", {"description": "find it", "prompt": "x"}))
    assert isinstance(started, ToolCallStart) and started.title == "Subagent find it"

    (progress,) = translator(SubagentProgress("t1", "Read src/\x1b[31mx.py", 2, 1500))

    assert isinstance(progress, ToolCallProgress)
    assert progress.tool_call_id == "t1" and progress.status == "in_progress"
    (content,) = progress.content or []
    assert isinstance(content, ContentToolCallContent)
    assert isinstance(content.content, TextContentBlock)
    # The step came from the model: made visible, never a terminal escape.
    assert content.content.text == "Read src/\\e[31mx.py · 2 turns · 1,500 tokens"
    (done,) = translator(ToolFinished("t1", "task", "completed", "the report"))
    assert isinstance(done, ToolCallProgress) and done.status == "completed"
