"""A custom command in the real zcoder in tmux: typed in part, completed with Tab, run.

Keys go in as a terminal sends them (Tab is 0x09); what the model got comes from the fake
Ollama's recorded requests."""

from __future__ import annotations

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import ENTER, start_in_tmux
from tests.fixtures.fake_ollama import Turn

pytestmark = pytest.mark.timeout(90)

TAB = "09"


def test_a_custom_command_completes_with_tab_and_sends_its_prompt(world: World) -> None:
    server = world.server(demo=False)
    commands = world.workspace("alpha") / ".zcoder" / "commands"
    commands.mkdir(parents=True)
    (commands / "release-notes.md").write_text(
        "---\ndescription: Write the release notes\nargument-hint: [version]\n---\n"
        "Write the release notes for version $1 from the git log.\n"
    )
    server.enqueue(Turn.text("Notes written for the release."))
    zc = start_in_tmux(world, "alpha", server)
    zc.type_text("/release-n")
    zc.wait_text("/release-n")
    mark = zc.mark()
    zc.send_hex(TAB)
    zc.wait_text("/release-notes", since=mark)
    zc.type_text("2.1")
    zc.wait_text("/release-notes 2.1")
    zc.send_hex(ENTER)
    zc.wait_text("the prompt of the custom command /release-notes")
    zc.wait_text("Notes written for the release.")
    wait_until(lambda: bool(server.chat_bodies), what="the request")
    [body] = server.chat_bodies
    assert body["messages"][-1]["content"] == (
        "Write the release notes for version 2.1 from the git log."
    )
    assert zc.quit() == 0
