"""/team's listing: each worker's activity, branch, receipts and the task board's claims
its process holds (a claim dies with its process, so a worker gone holds none)."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.board.support import claimer
from zcoder.board import Board
from zcoder.team.listing import NO_WORKERS, team_text
from zcoder.team.roster import Worker


def worker(name: str, pid: int, messages: list[str] | None = None) -> Worker:
    return Worker(
        name=name,
        branch=f"zcoder/{name}",
        worktree=f"/r-worktrees/{name}",
        workdir=f"/r-worktrees/{name}",
        base="main",
        pid=pid,
        messages=messages or [],
    )


def test_a_workers_claims_are_listed_under_it_and_end_with_its_process(
    home: Path, workspace: Path
) -> None:
    board = Board.for_workspace(home, workspace)
    held = board.add("port the parser \x1b[2Jnow", author="lead")
    board.add("nobody's", author="lead")
    holder = claimer(home, "hold", str(home), str(workspace), str(held.id))
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == f"HOLDING {held.id}"
        team = [worker("parser", holder.pid, ["m1"]), worker("docs", holder.pid + 1)]
        text = team_text(team, [], {"m1": ("completed", "done")}, set(), board.tasks())
        lines = text.splitlines()
        parser_at = next(i for i, line in enumerate(lines) if line.startswith("parser ·"))
        assert lines[parser_at + 1].startswith(f"  claims #{held.id} claimed by holder")
        assert "\x1b" not in text and "\\e[2Jnow" in text  # the title shown escaped
        assert lines[parser_at + 2] == "  receipt: completed · done"
        assert sum("claims" in line for line in lines) == 1  # docs holds nothing
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=60)
        after = team_text(team, [], {}, set(), board.tasks())
        assert "claims" not in after  # the kernel dropped the claim with the process
    finally:
        holder.kill()
        holder.wait(timeout=60)
        board.close()


def test_no_workers_says_how_to_start_one() -> None:
    assert team_text([], [], {}, set(), []) == NO_WORKERS
