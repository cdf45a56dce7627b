"""What a hostile agent, script or file can do to the board: oversized and malformed input
is refused with nothing changed, a planted symbolic link is not followed, and a file that
is not a board is reported and left exactly as it was."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from zcoder.board import Board, BoardError, Claimant, State, TaskRefused
from zcoder.board.locks import lock_path
from zcoder.board.service import BoardService

ME = Claimant("agent", "instance")


def service(home: Path, workspace: Path) -> BoardService:
    return BoardService(home, workspace, lambda: ME)


def test_a_megabyte_title_or_note_is_refused_and_nothing_is_added(
    home: Path, workspace: Path
) -> None:
    tasks = service(home, workspace)
    with pytest.raises(TaskRefused, match="at most 200"):
        tasks.add_text("x" * 1_000_000)
    with pytest.raises(TaskRefused, match="at most 8,000"):
        tasks.add_text("ok", "y" * 1_000_000)
    assert tasks.board().tasks() == []
    tasks.add_text("ok")
    with pytest.raises(TaskRefused, match="at most 2,000"):
        tasks.update_text(1, note="z" * 1_000_000)
    assert tasks.board().task(1).notes == ()


@pytest.mark.parametrize("bad", ["abc", "-1", "0", str(2**70), "1 OR 1=1", "", True, 1.5, None])
def test_bad_ids_are_refused(home: Path, workspace: Path, bad: object) -> None:
    tasks = service(home, workspace)
    tasks.add_text("only")
    with pytest.raises(TaskRefused):
        tasks.board().claim(bad, ME)  # type: ignore[arg-type]
    with pytest.raises(TaskRefused):
        tasks.add_text("after a bad id", after=[bad])
    assert [task.id for task in tasks.board().tasks()] == [1]


def test_a_planted_symlink_for_a_lock_file_is_not_followed(
    home: Path, workspace: Path, tmp_path: Path
) -> None:
    board = Board.for_workspace(home, workspace)
    board.add("target", author="t")
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    lock_path(board.locks, 1).symlink_to(victim)
    with pytest.raises(BoardError, match="symbolic link"):
        board.claim(1, ME)
    assert victim.read_text() == "keep me"
    assert board.task(1).state is State.OPEN


def test_a_database_that_is_not_a_board_is_left_as_it_was(home: Path, workspace: Path) -> None:
    board = Board.for_workspace(home, workspace)
    board.close()
    board.path.unlink()
    with sqlite3.connect(board.path) as foreign:
        foreign.execute("CREATE TABLE mine (x)")
        foreign.execute("INSERT INTO mine VALUES ('precious')")
    before = board.path.read_bytes()
    with pytest.raises(BoardError, match="not a task board"):
        Board.for_workspace(home, workspace)
    assert board.path.read_bytes() == before


def test_closing_gives_this_process_claims_back_with_a_note(home: Path, workspace: Path) -> None:
    board = Board.for_workspace(home, workspace)
    board.add("mine", author="t")
    board.claim(1, ME)
    board.close()
    [task] = Board.for_workspace(home, workspace).tasks()
    assert task.state is State.OPEN
    assert task.notes[-1].text == "its claimant stopped"
