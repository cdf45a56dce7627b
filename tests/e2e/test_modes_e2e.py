"""Permission modes in the real program in tmux: Shift+Tab as a terminal sends it (ESC [
Z), the header showing the mode at 60x15 and 140x40, and a plan accepted with ``y``.

What was written is read from the workspace, what the model was offered from the fake
Ollama's recorded requests; the screen only has to show the mode and the plan dialog.
"""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import TmuxInstance, start_in_tmux
from tests.fixtures.fake_ollama import Turn, call
from tests.fixtures.model_requests import tool_results

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

SHIFT_TAB = "1b 5b 5a"  # CSI Z: what terminals send for Shift+Tab


def header(zc: TmuxInstance) -> str:
    return zc.screen()[0]


@pytest.mark.parametrize("size", [(60, 15), (140, 40)])
def test_shift_tab_cycles_the_modes_and_an_accepted_plan_runs_in_the_mode_before(
    world: World, size: tuple[int, int]
) -> None:
    server = world.server(demo=False)
    server.enqueue(
        Turn.tool_calls(call("write_file", {"path": "a.txt", "content": "planned\n"})),
        Turn.text("1. write a.txt"),
        Turn.tool_calls(call("write_file", {"path": "a.txt", "content": "done\n"})),
        Turn.text("wrote-it"),
    )
    zc = start_in_tmux(world, "modes", server, size=size)
    assert " ask " in header(zc) or size[0] < 80  # ask's word is the first to go when narrow
    zc.send_hex(SHIFT_TAB)
    zc.wait_text("accept edits")
    zc.send_hex(SHIFT_TAB)
    zc.wait_gone("accept edits")
    zc.wait_text("plan")
    assert "plan" in header(zc), zc.screen_text
    mark = zc.mark()
    zc.type_text("write a.txt\r")
    zc.wait_text("Run this plan?", since=mark)
    zc.wait_text("[y] run it", since=mark)  # the dialog takes answers
    assert not (zc.workspace / "a.txt").exists()
    first = server.chat_bodies[0]
    assert "write_file" not in {tool["function"]["name"] for tool in first["tools"]}
    assert tool_results(server.chat_bodies[1])[0].startswith("Error: plan mode is read-only")
    zc.send_key("y")
    zc.wait_text("wrote-it", since=mark)
    assert (zc.workspace / "a.txt").read_text() == "done\n"
    assert "plan" not in header(zc), zc.screen_text
    assert "write_file" in {tool["function"]["name"] for tool in server.chat_bodies[2]["tools"]}


def test_shift_tab_steps_back_through_tabs_choices_before_it_switches_modes(
    world: World,
) -> None:
    zc = start_in_tmux(world, "tabs", world.server(demo=False), size=(140, 40))
    zc.type_text("/m")
    zc.send_hex("09")  # Tab lists /mcp, /mode, /model
    zc.wait_text("/model")
    zc.send_hex(SHIFT_TAB)  # steps back through the listing, to its last: the mode stays
    wait_until(lambda: any("▊ /model " in row for row in zc.screen()), what="/model")
    assert " ask " in header(zc), zc.screen_text
    zc.send_hex("15")  # Ctrl+U: the line cleared, the listing gone
    zc.send_hex(SHIFT_TAB)
    zc.wait_text("accept edits")
    assert " ask " not in header(zc)


def test_a_plan_refused_with_n_keeps_planning_and_runs_nothing(world: World) -> None:
    server = world.server(demo=False)
    server.enqueue(Turn.text("1. write a.txt"))
    zc = start_in_tmux(world, "keep", server, size=(60, 15), args=("--mode", "plan"))
    assert "plan" in header(zc), zc.screen_text
    mark = zc.mark()
    zc.type_text("plan a.txt\r")
    zc.wait_text("[y] run it", since=mark)
    zc.send_key("n")
    zc.wait_text("Still planning", since=mark)
    assert "plan" in header(zc), zc.screen_text
    assert len(server.chat_bodies) == 1  # no turn ran the plan


def test_shift_tab_while_init_drafts_keeps_the_draft_read_only_and_is_kept_after(
    world: World,
) -> None:
    """Before, the drafting turn's plan mode was the mode Shift+Tab stepped from: ask →
    (plan) → ask, and the model's write_file during the draft was written unasked."""
    server = world.server(demo=False)
    gate = threading.Event()
    server.enqueue(
        replace(
            Turn.tool_calls(call("write_file", {"path": "owned.txt", "content": "x\n"})),
            gate=gate,
        ),
        Turn.text("```markdown\n# Agents\n```"),
    )
    zc = start_in_tmux(world, "init", server, size=(60, 15), ZCODER_RELAY="off")
    mark = zc.mark()
    zc.type_text("/init\r")
    wait_until(lambda: len(server.chat_bodies) == 1, what="the drafting request")
    zc.send_hex(SHIFT_TAB)
    zc.wait_text("accept edits")
    gate.set()
    zc.wait_text("[n]/Esc refuse", since=mark)  # the draft's own question
    assert not (zc.workspace / "owned.txt").exists()
    assert tool_results(server.chat_bodies[1])[0].startswith("Error: plan mode is read-only")
    zc.send_key("n")
    zc.wait_gone("[n]/Esc refuse")
    assert "accept edits" in header(zc), zc.screen_text
