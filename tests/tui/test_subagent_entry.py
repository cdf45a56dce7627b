"""A subagent's transcript entry in the app: one folded line while it runs and once it
ended, unfolded by a click or Ctrl+F; a reopened session shows it the same way; what the
model wrote in it is shown escaped, never obeyed."""

from __future__ import annotations

import pytest

from tests.fixtures.fake_ollama import Turn, call
from tests.tui.conftest import idle, submit, wait_until
from zcoder.tui.dialogs.output import OutputScreen
from zcoder.tui.widgets.subagent_entry import SubagentEntry
from zcoder.tui.widgets.transcript import entry_for_event

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 40)


async def test_a_subagent_entry_folds_unfolds_and_comes_back_the_same(
    fake, make_config, app_factory
):
    (make_config().workspace / "alpha.txt").write_text("alpha\n")
    description = "find \x1b[31malpha"
    fake.enqueue(
        Turn.tool_calls(call("task", {"description": description, "prompt": "Look."})),
        Turn.tool_calls(call("read_file", {"path": "alpha.txt"})),
        Turn.text("It holds alpha.\n\x1b]0;owned\x07"),
        Turn.text("done"),
    )
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "use a subagent")
        await idle(pilot, app)
        (entry,) = app.transcript.query(SubagentEntry)
        head = entry.plain.splitlines()[0]
        assert head.startswith("▸ ✓ Subagent: find \\e[31malpha — completed · 2 turns · ")
        assert head.endswith(" tokens · Ctrl+F: unfold")
        assert len(entry.plain.splitlines()) == 1

        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: entry.unfolded)
        lines = entry.plain.splitlines()
        assert lines[0].startswith("▾ ✓ Subagent")
        assert lines[1:4] == ["  ✓ Read alpha.txt", "report:", "It holds alpha."]
        assert "\x1b" not in entry.plain and "\\e]0;owned" in entry.plain

        await pilot.click(SubagentEntry)  # a click folds it again
        await wait_until(pilot, lambda: not entry.unfolded)

        await pilot.press("ctrl+t")  # the whole report, as for any tool call
        await wait_until(pilot, lambda: isinstance(app.screen, OutputScreen))
        assert "It holds alpha." in "\n".join(app.screen.lines)
        await pilot.press("escape")

        store, session_id = app.services.store, app.services.session_id
        assert store is not None and session_id is not None
        saved = store.load(session_id, make_config().workspace, "coding")
        (event,) = [e for e in saved.events if e.metadata.get("name") == "task"]
        again = entry_for_event("tool", event.text, event.metadata)
        assert isinstance(again, SubagentEntry)
        assert again.plain == entry.plain
