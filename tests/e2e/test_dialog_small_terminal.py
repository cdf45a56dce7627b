"""The approval dialog in a short terminal, as a prompt-injected model would use it.

The real zcoder in tmux at 60x15 and 80x24; the fake model proposes a command whose
dangerous tail (``touch PWNED``) does not fit in the dialog. ``y`` must do nothing until
every row of the command has been drawn on the screen, the dialog must say so where it
can be seen, and its position line must never claim more than was shown. Keys are the
raw bytes a terminal sends; the screen is read back from tmux; what ran is read from the
workspace.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.harness import DIALOG_ARMED, World, wait_until
from tests.e2e.tmux import TmuxInstance, start_in_tmux, to_hex
from tests.fixtures.fake_ollama import Turn, call

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

RUN = "Run this command?"
NOT_YET = "not yet: scroll to see it all"
PAGE_DOWN = "1b 5b 36 7e"
ALL_SEEN = "all seen"
UNSEEN = re.compile(r"([\d,]+) +not +seen +yet|all +seen")
# About 220 characters on one line: five rows or so in a 60-column dialog.
ONE_LONG_LINE = (
    "echo checking the workspace before the deploy && echo step one of three is fine"
    " && echo step two of three is fine && echo step three of three is fine"
    " && echo deployed successfully && touch PWNED"
)
SIXTEEN_LINES = "\n".join(f"echo line {n}" for n in range(1, 16)) + "\ntouch PWNED"


def _unseen(screen: str) -> int | None:
    """The dialog's count of rows not seen yet (0: all seen; None: not on screen)."""
    found = UNSEEN.search(screen.replace("\n", " "))  # the line may wrap in two
    if found is None:
        return None
    return 0 if found[0] == ALL_SEEN else int(found[1].replace(",", ""))


def _scroll_through(zc: TmuxInstance, *, limit: int = 40) -> None:
    """PageDown until the dialog says every row was seen. After each press the view is
    let come to rest (rows passed over while it glides are not seen)."""
    for _ in range(limit):
        left = _unseen(zc.screen_text)
        if left == 0:
            return

        def fewer(left: int | None = left) -> bool:
            now = _unseen(zc.screen_text)
            return now is not None and (left is None or now < left)

        zc.send_hex(PAGE_DOWN)
        wait_until(fewer, what="fewer rows not seen")
    raise AssertionError(f"never saw {ALL_SEEN!r}; the screen:\n{zc.screen_text}")


@pytest.mark.parametrize(
    ("size", "command"),
    [
        pytest.param((60, 15), ONE_LONG_LINE, id="60x15-one-long-line"),
        pytest.param((80, 24), SIXTEEN_LINES, id="80x24-sixteen-lines"),
    ],
)
def test_y_runs_nothing_until_every_row_was_on_screen(
    world: World, size: tuple[int, int], command: str
) -> None:
    server = world.server(demo=False)
    server.enqueue(
        Turn.tool_calls(call("run_command", {"command": command})),
        Turn.text("the command ran"),
    )
    zc = start_in_tmux(world, "alpha", server, size=size)
    zc.type_text("deploy it")
    zc.wait_text("deploy it")
    zc.send_hex("0d")
    zc.wait_text(RUN)
    zc.wait_text(DIALOG_ARMED)
    assert "touch PWNED" not in zc.screen_text  # the tail is out of sight

    zc.send_hex(to_hex("y"))
    pwned = zc.workspace / "PWNED"
    wait_until(lambda: NOT_YET in zc.screen_text or pwned.exists(), what="y to be refused")
    assert not pwned.exists(), "y ran a command whose tail was never on screen"
    zc.wait_text(NOT_YET)  # refused, and the hint is on the screen
    assert "all shown" not in zc.screen_text
    assert len(server.chat_bodies) == 1  # no tool result went back: nothing was answered

    _scroll_through(zc)
    zc.wait_text("touch PWNED")
    zc.send_hex(to_hex("y"))
    zc.wait_text("the command ran")
    assert (zc.workspace / "PWNED").exists()
