"""The model's plan on screen: zcoder in tmux, the fake Ollama calling update_plan, keys
typed as a terminal sends them, the screen read back. At 60 columns each update is one
line in the transcript; with room, the sidebar has the checklist and the entry shows it
whole; a resumed session shows its plan again, a new one none."""

from __future__ import annotations

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import start_in_tmux, to_hex
from tests.fixtures.fake_ollama import Turn, call
from zcoder.sessions import SessionStore

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

STEPS = [
    {"text": "read the parser", "status": "done"},
    {"text": "write tests", "status": "in_progress"},
    {"text": "fix the bug", "status": "pending"},
]
ONE_LINE = "Plan 1/3 ✓ · now: write tests"


def test_the_plan_is_one_line_at_60x15_a_checklist_with_room_and_back_on_resume(
    world: World,
) -> None:
    server = world.server(demo=False)
    server.enqueue(
        Turn.tool_calls(call("update_plan", {"items": STEPS})),
        Turn.text("Planned the parser fix."),
    )
    zc = start_in_tmux(world, "alpha", server, size=(140, 40))  # rows read: up to 40
    zc.tmux("resize-window", "-t", "zc", "-x", "60", "-y", "15")
    wait_until(lambda: any(r.startswith("▊▔") for r in zc.screen()), what="the narrow layout")
    zc.type_text("fix the parser")
    zc.send_hex("0d")
    zc.wait_text("Planned the parser fix.")
    zc.wait_text(ONE_LINE)
    [row] = zc.rows_with(ONE_LINE)
    screen = zc.screen()
    assert screen[row + 1].strip() == "", screen  # one line (and its margin), no more
    assert not zc.rows_with("▸ write tests"), screen  # no sidebar, no expanded entry

    zc.tmux("resize-window", "-t", "zc", "-x", "140", "-y", "40")
    # The sidebar's section, under the sessions, and the entry, now whole: both.
    zc.wait_text("Plan · 1/3 done")
    [head] = zc.rows_with("Plan · 1/3 done")
    screen = zc.screen()
    assert screen[head + 1].lstrip(" │").startswith("✓ read the parser"), screen
    assert screen[head + 2].lstrip(" │").startswith("▸ write tests"), screen
    assert screen[head + 3].lstrip(" │").startswith("○ fix the bug"), screen
    assert len(zc.rows_with("▸ write tests")) == 2, screen
    zc.send_hex(to_hex("\x11"))
    assert zc.wait_exit() in (0, None)

    with SessionStore(world.home("alpha")) as store:
        [info] = store.list_sessions(world.workspace("alpha"), "coding")
    again = start_in_tmux(world, "alpha", server, args=("--resume", info.id), size=(140, 40))
    again.wait_text("Plan · 1/3 done")  # the sidebar, from the saved plan
    again.wait_text(ONE_LINE)  # the transcript's entry, from the saved call
    again.type_text("/new")
    again.wait_text("▊ /new")
    again.send_hex("0d")
    again.wait_gone("Plan · 1/3 done")  # a new session has no plan: the section goes
    again.send_hex(to_hex("\x11"))
    assert again.wait_exit() in (0, None)


def test_a_long_step_wraps_under_its_text_in_the_sidebar(world: World) -> None:
    server = world.server(demo=False)
    long_step = "write the tests for the parser module"  # wider than the sidebar's 26
    server.enqueue(
        Turn.tool_calls(call("update_plan", {"items": [{"text": long_step, "status": "pending"}]})),
        Turn.text("Planned."),
    )
    zc = start_in_tmux(world, "alpha", server, size=(140, 40))
    zc.type_text("plan it")
    zc.send_hex("0d")
    zc.wait_text("Plan · 0/1 done")
    [head] = zc.rows_with("Plan · 0/1 done")
    screen = zc.screen()
    assert screen[head + 1].startswith(" ○ write the tests"), screen
    # The wrapped rest starts under the text (column 3), not under the glyph.
    assert screen[head + 2].startswith("   parser module"), screen
