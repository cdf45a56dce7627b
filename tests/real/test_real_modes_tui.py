"""Plan mode in the interactive program, in tmux at 60x15, against the real llama.cpp
server and SmolLM2-135M: Shift+Tab as the terminal sends it, the real model's reply
offered as the plan, ``y`` running it in the mode before plan mode."""

from __future__ import annotations

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import start_in_tmux
from tests.real.conftest import RealServer
from tests.real.test_real_tui import TURN_TIMEOUT, idle, stored, wait_turn
from zcoder.tui.parts.modes_ui import ACCEPTED_PLAN

pytestmark = pytest.mark.timeout(900)  # the lock on REAL_ROOT may wait for another worker

SHIFT_TAB = "1b 5b 5a"


def test_the_real_models_plan_is_offered_and_y_runs_it_in_the_mode_before(
    real_world: World, tool_server: RealServer
) -> None:
    (real_world.workspace("ws") / "alpha.txt").write_text("alpha\n")
    env = tool_server.env(ZCODER_MAX_OUTPUT_TOKENS="160", ZCODER_RELAY="off")
    a = start_in_tmux(real_world, "ws", None, size=(60, 15), **env)  # type: ignore[arg-type]
    a.send_hex(SHIFT_TAB)
    a.wait_text("accept edits")
    a.send_hex(SHIFT_TAB)
    wait_until(lambda: " plan " in a.screen()[0], what="plan in the header")
    a.submit("Say hello.")
    a.wait_text("Run this plan?", timeout=TURN_TIMEOUT)
    assert (a.workspace / "alpha.txt").read_text() == "alpha\n"
    a.wait_text("[y] run it", timeout=TURN_TIMEOUT)  # shown once the dialog takes answers
    _, history = stored(a)
    assert history[-1]["role"] == "assistant" and history[-1]["content"].strip()
    a.send_key("y")
    wait_turn(a, 2)  # the plan's run: a turn of its own
    ledger, _ = stored(a)
    assert ledger == ["Say hello.", ACCEPTED_PLAN]
    wait_until(lambda: idle(a), timeout=TURN_TIMEOUT, what="the plan's run to end")
    assert " plan " not in a.screen()[0] and "accept edits" in a.screen()[0]
