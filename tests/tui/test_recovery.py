"""A tool call or reasoning the model wrote as text streams on screen first; once the reply
is complete and the call recovered, the transcript holds no trace of its text."""

from __future__ import annotations

import pytest

from tests.fixtures.fake_ollama import Turn
from tests.tui.conftest import entries, transcript_text
from tests.tui.support import answered

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 40)
CALL = '{"name": "read_file", "arguments": {"path": "hello.py"}}'


async def test_a_recovered_call_leaves_only_the_prose_in_the_reply_entry(
    fake, make_config, app_factory
):
    script = Turn.text(f"Let me read it.\n\n```json\n{CALL}\n```"), Turn.text("It prints hello.")
    app = app_factory(make_config())
    async with answered(app, fake, "what does hello.py do?", *script, size=SIZE):
        replies = [entry.plain for entry in entries(app, "assistant")]
        assert len(replies) == 2
        assert "Let me read it." in replies[0]
        assert "It prints hello." in replies[1]
        [tool] = entries(app, "tool")
        assert "Read hello.py" in tool.plain  # headed by what it does (agent/headings.py)
        text = transcript_text(app)
        assert '"arguments"' not in text and "```" not in text


async def test_a_reply_that_was_only_a_call_leaves_no_reply_entry(fake, make_config, app_factory):
    script = Turn.text(CALL), Turn.text("It prints hello.")
    app = app_factory(make_config())
    async with answered(app, fake, "what does hello.py do?", *script, size=SIZE):
        replies = [entry.plain for entry in entries(app, "assistant")]
        assert len(replies) == 1
        assert "It prints hello." in replies[0]
        assert '"arguments"' not in transcript_text(app)
        assert len(entries(app, "tool")) == 1


async def test_reasoning_in_think_tags_leaves_the_answer_alone(fake, make_config, app_factory):
    thought = Turn.text("<think>\nA greeting; greet back.\n</think>\n\nHello!")
    app = app_factory(make_config())
    async with answered(app, fake, "hi", thought, size=SIZE):
        [reply] = entries(app, "assistant")
        assert "Hello!" in reply.plain
        assert "greet back" not in transcript_text(app)
        assert "<think>" not in transcript_text(app)
