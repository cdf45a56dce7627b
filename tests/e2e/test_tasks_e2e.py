"""The task board as a user meets it: the real zcoder in tmux, keys as the bytes a
terminal sends. A task a script adds appears in the sidebar; /tasks typed and Enter lists
the board with a hostile title shown escaped; another process's claim, and its end when
that process is killed, show in the sidebar."""

from __future__ import annotations

import pytest

from tests.board.support import claimer
from tests.e2e.harness import World
from tests.e2e.tmux import ENTER, start_in_tmux
from zcoder.board import Board

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


@pytest.mark.parametrize("size", [(60, 15), (140, 40)], ids=["60x15", "140x40"])
def test_tasks_lists_the_board_and_the_sidebar_follows_it(
    world: World, size: tuple[int, int]
) -> None:
    zc = start_in_tmux(world, "alpha", world.server(demo=False), size=size)
    home, workspace = world.home("alpha"), world.workspace("alpha")
    board = Board.for_workspace(home, workspace)
    board.add("port the \x1b[2Jparser", author="script")
    board.add("test it", depends_on=[1], author="script")
    zc.type_text("/tasks")
    zc.send_hex(ENTER)
    zc.wait_text("#2 waits on #1: test it")
    zc.wait_text("2 open")
    assert "port the \\e[2Jparser" in zc.screen_text
    if size[0] >= 80:  # the sidebar is shown on a wide terminal
        zc.wait_text("Tasks · 2 to do")
        holder = claimer(home, "hold", str(home), str(workspace), "1")
        try:
            assert holder.stdout is not None and holder.stdout.readline().startswith("HOLDING")
            zc.wait_text("#1 claimed by holder")
            holder.kill()
            holder.wait(timeout=60)
            zc.wait_gone("#1 claimed by holder")
        finally:
            holder.kill()
            holder.wait(timeout=60)
