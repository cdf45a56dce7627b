"""A tool call is headed by what a person reads (zcoder.agent.headings), in the real app:
the path, the pattern, the target, an MCP server's tool and its telling argument, never
the raw JSON of the arguments; all of them are one key away (Ctrl+T)."""

from __future__ import annotations

import pytest

from tests.fixtures.fake_ollama import Turn, call
from tests.tui.conftest import entries, idle, submit, transcript_text, wait_until
from zcoder.tui.dialogs.output import OutputScreen
from zcoder.tui.widgets.transcript import ToolEntry, entry_for_event

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 40)
CONTENT = "SELECT display_name FROM users;\n"


async def test_a_tool_call_is_headed_by_its_path_and_its_arguments_are_a_key_away(
    fake, make_config, app_factory
):
    fake.enqueue(
        Turn.tool_calls(call("write_file", {"path": "q.sql", "content": CONTENT})),
        Turn.tool_calls(call("search", {"query": "display_name", "path": "."})),
        Turn.text("done"),
    )
    app = app_factory(make_config(yes=True, env={"ZCODER_RELAY": "off", "ZCODER_EDITS": "auto"}))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "write the query")
        await idle(pilot, app)
        written, searched = app.transcript.query(ToolEntry)
        head, result = written.plain.splitlines()[:2]
        assert head == "✓ Write q.sql — completed · Ctrl+T: all arguments"
        assert result.startswith("Created q.sql (32 bytes, 1 line)"), result
        assert searched.plain.splitlines()[0] == '✓ Search "display_name" — completed'
        assert '{"path"' not in transcript_text(app) and '"content"' not in transcript_text(app)

        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: isinstance(app.screen, OutputScreen))
        await pilot.press("p")  # from the newest call (the search) to the write
        screen = app.screen
        assert isinstance(screen, OutputScreen) and screen.command is written
        assert screen.lines[:4] == [
            "arguments",
            "path: q.sql",
            "content:",
            "    SELECT display_name FROM users;",
        ]
        assert "Created q.sql (32 bytes, 1 line)" in "\n".join(screen.lines)
        await pilot.press("escape")

        # A reopened session heads its saved calls the same way.
        [saved] = [e for e in entries(app, "tool") if e is written]
        again = entry_for_event(
            "tool",
            result,
            {"name": "write_file", "arguments": {"path": "q.sql", "content": CONTENT}},
        )
        assert again.plain.splitlines()[0] == saved.plain.splitlines()[0]


async def test_hostile_arguments_in_a_heading_are_shown_not_obeyed(fake, make_config, app_factory):
    # A path holding an escape sequence and a carriage return: made visible, one line.
    path = "x\x1b[2K\rq.sql"
    fake.enqueue(
        Turn.tool_calls(call("read_file", {"path": path})),
        Turn.text("done"),
    )
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "read it")
        await idle(pilot, app)
        [entry] = app.transcript.query(ToolEntry)
        head = entry.plain.splitlines()[0]
        assert head.startswith("✗ Read x\\e[2K\\rq.sql — failed"), head
        assert "\x1b" not in entry.plain and "\r" not in entry.plain
