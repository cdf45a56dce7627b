"""/tasks and the sidebar's task board in the real app: a task another process adds, and
the agent's own claim through task_claim, appear in the sidebar; a claimant's death shows
there as an open task; hostile titles are drawn escaped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.board.support import claimer
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.tui.conftest import idle, submit, transcript_text, wait_until
from zcoder.board import Board, State
from zcoder.tui.widgets.task_view import TaskView

SIZE = (120, 40)


def shown(app: Any) -> str:
    view = app.screen.query_one(TaskView)
    return view.plain if view.has_class("shown") else ""


async def says(pilot: Any, app: Any, text: str) -> None:
    await wait_until(pilot, lambda: text in transcript_text(app))


async def test_the_board_shows_in_the_sidebar_and_under_tasks(
    fake: FakeOllama, make_config: Any, app_factory: Any, workspace: Path, env: dict[str, str]
) -> None:
    config = make_config()
    board = Board.for_workspace(config.home, workspace)
    app = app_factory(config)
    async with app.run_test(size=SIZE) as pilot:
        view = app.screen.query_one(TaskView)
        assert not view.has_class("shown")  # an empty board takes no room
        board.add("write the \x1b[31mparser", author="peer")
        await wait_until(pilot, lambda: "#1 open: write the \\e[31mparser" in shown(app))
        fake.enqueue(Turn.tool_calls(call("task_claim", {"id": 1})), Turn.text("Claimed it."))
        await submit(pilot, app, "take the task")
        await idle(pilot, app)
        await wait_until(pilot, lambda: "#1 claimed by" in shown(app))
        assert board.task(1).state is State.CLAIMED  # held by this process
        for typed, said in (
            ("/tasks add test the parser", "Added #2 open: test the parser"),
            ("/tasks", "1 open, 1 claimed"),
            ("/tasks done 1", "task #1 is claimed by"),  # by this zcoder's agent: refused
        ):
            await submit(pilot, app, typed)
            await says(pilot, app, said)
        assert "\x1b" not in transcript_text(app)


async def test_a_killed_claimants_task_shows_open_again(
    make_config: Any, app_factory: Any, workspace: Path
) -> None:
    config = make_config()
    board = Board.for_workspace(config.home, workspace)
    board.add("held elsewhere", author="peer")
    holder = claimer(config.home, "hold", str(config.home), str(workspace), "1")
    try:
        assert holder.stdout is not None and holder.stdout.readline().startswith("HOLDING")
        app = app_factory(config)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: "#1 claimed by holder" in shown(app))
            holder.kill()
            holder.wait(timeout=60)
            await wait_until(pilot, lambda: "#1 open: held elsewhere" in shown(app))
    finally:
        holder.kill()
        holder.wait(timeout=60)
