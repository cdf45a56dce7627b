"""``zcoder tasks``: the board from a shell, as a real process (list, add, done, watch,
claim -- COMMAND), hostile text shown escaped, bad input refused with nothing changed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.board.support import WAIT_S, git_repo, python, wait_for
from tests.fixtures.processes import pid_alive
from zcoder.board import Board, Claimant, State, TaskRefused


def start_tasks(home: Path, cwd: Path, *args: str) -> subprocess.Popen[str]:
    return python(home, cwd, "-m", "zcoder", "tasks", *args)


def tasks(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``zcoder tasks ARGS`` run to its end."""
    process = start_tasks(home, cwd, *args)
    out, err = process.communicate(timeout=WAIT_S)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_add_list_and_done_with_json(home: Path, workspace: Path) -> None:
    first = tasks(home, workspace, "--json", "add", "write the parser", "-d", "all of it")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["id"] == 1
    assert tasks(home, workspace, "add", "test it", "--after", "1").returncode == 0
    listed = tasks(home, workspace, "list")
    assert listed.stdout.splitlines() == [
        "#1 open: write the parser",
        "#2 waits on #1: test it",
        "2 open",
    ]
    done = tasks(home, workspace, "done", "1", "--note", "merged")
    assert done.returncode == 0, done.stderr
    rows = json.loads(tasks(home, workspace, "list", "--json").stdout)  # after it too
    assert [(row["id"], row["state"], row["claimable"]) for row in rows] == [
        (1, "done", False),
        (2, "open", True),
    ]
    assert rows[0]["notes"][0]["text"] == "merged"


def test_worktrees_of_one_repository_share_its_board(home: Path, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    other = tmp_path / "wt"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(other)], check=True)
    (repo / "sub").mkdir()
    assert tasks(home, repo / "sub", "add", "shared").returncode == 0
    listed = tasks(home, other, "list")
    assert listed.stdout.splitlines()[0] == "#1 open: shared"
    # Another repository has a board of its own.
    assert tasks(home, git_repo(tmp_path / "elsewhere"), "list").stdout.strip() == (
        "The board is empty."
    )


def test_titles_with_escape_sequences_are_shown_escaped(home: Path, workspace: Path) -> None:
    title = "ok\x1b]0;pwned\x07\r\x1b[2Kfake\u202e"
    assert tasks(home, workspace, "add", title).returncode == 0
    shown = tasks(home, workspace, "list").stdout
    assert "\x1b" not in shown and "\r" not in shown and "\u202e" not in shown
    assert "ok\\e]0;pwned\\x07\\r\\e[2Kfake\\u202e" in shown
    raw = tasks(home, workspace, "--json", "list").stdout
    assert "\x1b" not in raw and json.loads(raw)[0]["title"] == title  # exact once parsed


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("add", "x" * 201), "at most 200"),
        (("add", "  "), "empty"),
        (("add", "y", "--after", "9"), "no task #9"),
        (("done", "12"), "no task #12"),
        (("done", "-1"), "not a task id"),
        (("done", "1e3"), "not a task id"),
        (("claim", "1"), "the command to run"),
        (("claim", "--next", "1", "--", "true"), "ID or --next"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    home: Path, workspace: Path, args: tuple[str, ...], said: str
) -> None:
    done = tasks(home, workspace, *args)
    assert done.returncode == 2
    assert said in done.stderr and "Traceback" not in done.stderr
    assert tasks(home, workspace, "--json", "list").stdout.strip() == "[]"


def test_a_damaged_board_is_a_clear_error_and_left_as_it_was(home: Path, workspace: Path) -> None:
    assert tasks(home, workspace, "add", "kept").returncode == 0
    board = Board.for_workspace(home, workspace)
    board.close()
    for leftover in (Path(f"{board.path}-wal"), Path(f"{board.path}-shm")):
        leftover.unlink(missing_ok=True)
    damaged = b"this is not SQLite\x00" * 300
    board.path.write_bytes(damaged)
    for args in (("list",), ("add", "more")):
        done = tasks(home, workspace, *args)
        assert done.returncode == 1
        assert "is damaged" in done.stderr and "Move it aside" in done.stderr
        assert "Traceback" not in done.stderr
    assert board.path.read_bytes() == damaged


def test_claim_runs_the_command_with_the_task_and_marks_it_done(
    home: Path, workspace: Path
) -> None:
    tasks(home, workspace, "add", "first")
    tasks(home, workspace, "add", "second", "--after", "1")
    waits = tasks(home, workspace, "claim", "2", "--", "true")
    assert waits.returncode == 2 and "waits on #1" in waits.stderr
    ran = tasks(
        home,
        workspace,
        "claim",
        "--next",
        "--",
        "sh",
        "-c",
        "echo $ZCODER_TASK_ID:$ZCODER_TASK_TITLE",
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "1:first"
    failed = tasks(home, workspace, "claim", "--next", "--", "sh", "-c", "exit 5")
    assert failed.returncode == 5
    [first, second] = Board.for_workspace(home, workspace).tasks()
    assert first.state is State.DONE
    assert second.state is State.OPEN
    assert "exited with status 5" in second.notes[-1].text
    nothing = tasks(home, workspace, "claim", "--next", "--", "true")
    assert nothing.returncode == 0  # the second, claimable again
    assert tasks(home, workspace, "claim", "--next", "--", "true").returncode == 3


def test_a_killed_claim_frees_the_task_while_its_command_runs_on(
    home: Path, workspace: Path, tmp_path: Path
) -> None:
    tasks(home, workspace, "add", "long job")
    pid_file = tmp_path / "pid"
    claimer = start_tasks(
        home, workspace, "claim", "1", "--", "sh", "-c", f"echo $$ > {pid_file}; exec sleep 600"
    )
    command_pid = 0
    try:
        wait_for(lambda: pid_file.exists() and pid_file.read_text().strip() != "", "the command")
        command_pid = int(pid_file.read_text())
        board = Board.for_workspace(home, workspace)
        assert board.task(1).state is State.CLAIMED
        claimer.send_signal(signal.SIGKILL)
        claimer.wait(timeout=60)
        # The command did not inherit the claim: it runs on, and the task is free.
        assert pid_alive(command_pid)
        claim = board.claim(1, Claimant.this_process("next"))
        assert claim.task.claimant == "next"
    finally:
        claimer.kill()
        claimer.wait(timeout=60)
        if command_pid:
            os.kill(command_pid, signal.SIGKILL)


def test_watch_prints_the_board_again_when_it_changes(home: Path, workspace: Path) -> None:
    watcher = start_tasks(home, workspace, "--json", "watch")
    try:
        assert watcher.stdout is not None
        assert json.loads(watcher.stdout.readline()) == []
        tasks(home, workspace, "add", "seen")
        assert [row["title"] for row in json.loads(watcher.stdout.readline())] == ["seen"]
    finally:
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=60)
    assert watcher.returncode == 0


def test_a_task_claimed_by_a_live_process_cannot_be_settled_by_another(
    home: Path, workspace: Path
) -> None:
    board = Board.for_workspace(home, workspace)
    board.add("mine", author="t")
    board.claim(1, Claimant.this_process("agent"))
    done = tasks(home, workspace, "done", "1")
    assert done.returncode == 2 and "claimed by agent" in done.stderr
    with pytest.raises(TaskRefused):
        Board.for_workspace(home, workspace).settle(1, State.DONE, author="other")


def test_a_reader_that_goes_away_ends_the_listing_quietly(home: Path, workspace: Path) -> None:
    board = Board.for_workspace(home, workspace)
    for number in range(300):
        board.add(f"task {number}", "long " * 200, author="t")
    listing = start_tasks(home, workspace, "list", "--json")
    assert listing.stdout is not None and listing.stderr is not None
    assert listing.stdout.read(10) == '[{"id": 1,'
    listing.stdout.close()  # as | head does
    assert listing.wait(timeout=WAIT_S) == 141
    assert "Traceback" not in listing.stderr.read()
