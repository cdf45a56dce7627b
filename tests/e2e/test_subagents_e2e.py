"""Subagents as a user meets them: the real zcoder in tmux, keys as the bytes a terminal
sends. A task call is one folded entry; Ctrl+F unfolds it (each call the subagent made,
its report) and folds it again; Escape stops a running subagent and the turn, and the
prompt works on."""

from __future__ import annotations

import pytest

from tests.e2e.harness import World
from tests.e2e.tmux import ENTER, start_in_tmux, to_hex
from tests.fixtures.fake_ollama import Turn, call

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

CTRL_F, ESCAPE = "06", "1b"


def task(description: str) -> Turn:
    return Turn.tool_calls(call("task", {"description": description, "prompt": "Look."}))


@pytest.mark.parametrize("size", [(60, 15), (140, 40)], ids=["60x15", "140x40"])
def test_a_subagent_is_one_entry_that_unfolds_and_folds_and_escape_stops_one(
    world: World, size: tuple[int, int]
) -> None:
    (world.workspace("alpha") / "alpha.txt").write_text("alpha\n")
    server = world.server(demo=False)
    server.enqueue(
        task("find alpha"),
        Turn.tool_calls(call("read_file", {"path": "alpha.txt"})),  # the subagent's
        Turn.text("Report: alpha.txt is the file."),
        Turn.text("All found."),
        task("wait forever"),
        Turn.stall(),  # the second subagent's request never ends
        Turn.text("still here"),
    )
    zc = start_in_tmux(world, "alpha", server, size=size)
    zc.type_text("use a subagent")
    zc.send_hex(ENTER)
    zc.wait_text("All found.")
    zc.wait_text("Subagent: find alpha")
    assert "Report: alpha.txt" not in zc.screen_text  # folded: one line and its hint
    assert "Read alpha.txt" not in zc.screen_text

    zc.send_hex(CTRL_F)
    zc.wait_text("report:")
    zc.wait_text("✓ Read alpha.txt")
    zc.wait_text("Report: alpha.txt is the file.")
    zc.send_hex(CTRL_F)
    zc.wait_gone("report:")
    zc.wait_text("Ctrl+F: unfold")

    zc.send_hex(to_hex("another one"), ENTER)
    zc.wait_text("Subagent: wait forever")
    zc.wait_text("thinking")
    zc.send_hex(ESCAPE)
    zc.wait_text("■ Subagent: wait forever")
    zc.wait_text("interrupted")
    zc.send_hex(to_hex("are you there"), ENTER)
    zc.wait_text("still here")
    assert zc.alive()
