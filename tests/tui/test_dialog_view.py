"""What a guarded dialog counts as seen: rows drawn on the screen, re-counted on a resize.

The dialog alone in a small app under ``run_test`` (keys as Pilot presses them are fine
here: what is tested is the count, not the terminal's parser; the tmux tests in
tests/e2e/test_dialog_small_terminal.py send the real bytes).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App

from tests.tui.conftest import wait_until
from zcoder.tools import ApprovalDecision, CommandApprovalRequest, Profile, TurnOrigin
from zcoder.tui.dialogs.approval import ApprovalScreen

pytestmark = pytest.mark.timeout(60)

LONG_LINE = "echo " + " && echo ".join(f"step-{n:02d}-of-the-deploy" for n in range(12))
LONG_LINE += " && touch PWNED"


def _request(command: str) -> CommandApprovalRequest:
    return CommandApprovalRequest(
        command=command,
        cwd=Path("/tmp"),
        timeout_seconds=120,
        allow_always=True,
        origin=TurnOrigin.USER,
        profile=Profile.CODING,
    )


def _position(screen: ApprovalScreen) -> str:
    return str(screen.position.render())


async def test_a_resize_that_shows_everything_counts_it_seen_and_says_so() -> None:
    answers: list[ApprovalDecision | None] = []
    app: App[None] = App()
    async with app.run_test(size=(60, 15)) as pilot:
        screen = ApprovalScreen(_request(LONG_LINE))
        app.push_screen(screen, callback=answers.append)
        await wait_until(pilot, lambda: screen.armed and "not seen yet" in _position(screen))
        assert not screen.seen_all
        await pilot.press("y")
        await pilot.pause()
        assert answers == [] and "not yet" in str(screen.hint.render())

        await pilot.resize_terminal(140, 40)  # now the whole command fits
        await wait_until(pilot, lambda: screen.seen_all)
        await wait_until(pilot, lambda: _position(screen).endswith("all shown"))
        await pilot.press("y")
        await wait_until(pilot, lambda: answers == [ApprovalDecision.ONCE])


async def test_rows_seen_before_a_rewrap_do_not_count_after_it() -> None:
    command = "\n".join(f"echo {'x' * 30} line {n}" for n in range(40)) + "\ntouch PWNED"
    app: App[None] = App()
    async with app.run_test(size=(120, 24)) as pilot:
        screen = ApprovalScreen(_request(command))
        app.push_screen(screen)
        await wait_until(pilot, lambda: screen.armed and "not seen yet" in _position(screen))
        await pilot.press("end")  # the end was on screen at this width
        await wait_until(pilot, lambda: "rows" in _position(screen) and screen.view.unseen < 20)
        # Narrower, every line wraps in two: the rows are others, the count starts again.
        await pilot.resize_terminal(50, 24)
        await wait_until(pilot, lambda: screen.view.size.width < 50)
        await wait_until(pilot, lambda: screen.view.unseen > 40)
        assert not screen.seen_all


async def test_the_last_row_says_what_escape_answers_in_each_dialog() -> None:
    """It read "Esc refuses" everywhere: the plan's Escape keeps planning."""
    from zcoder.tools import Mode
    from zcoder.tui.dialogs.plan import PlanScreen

    app: App[None] = App()
    async with app.run_test(size=(100, 30)) as pilot:
        command = ApprovalScreen(_request("ls"))
        app.push_screen(command)
        await wait_until(pilot, lambda: command.armed and command.seen_all)
        await wait_until(pilot, lambda: str(command.hint.render()) == "Esc refuses")
        app.pop_screen()
        plan = PlanScreen("1. Read it.\n2. Change it.", Mode.ASK)
        app.push_screen(plan)
        await wait_until(pilot, lambda: plan.armed and plan.seen_all)
        await wait_until(pilot, lambda: str(plan.hint.render()) == "Esc keeps planning")
