"""Workers in worktrees, in tmux, as a user meets them: ``/spawn`` typed as raw keys starts
a real worker zcoder in a new window of the lead's tmux server, in its own git worktree on
``zcoder/NAME``; the worker (the fake model's demo brain) runs the task and its receipt
comes back to the lead's transcript. ``/team merge`` shows the diff and merges on a raw
``y``; a conflicting worker is reported as conflicting and nothing is merged. Outside tmux,
``/spawn`` says how to start the worker by hand and makes nothing."""

from __future__ import annotations

import contextlib
import os
import re
import signal
from pathlib import Path

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import ENTER, TmuxInstance, paste_hex, start_in_tmux, to_hex
from tests.fixtures.fake_ollama import Turn, call
from tests.team.conftest import commit_file, run_git
from zcoder.team.roster import Roster, Worker

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

YES = "79"  # the byte a terminal sends for y
PAGE_DOWN = "1b 5b 36 7e"  # CSI 6 ~
ROWS = re.compile(r"rows (\d+)–(\d+) of (\d+)")


def git_repo(world: World, name: str) -> Path:
    path = world.workspace(name)
    run_git(path, "init", "-q", "-b", "main")
    run_git(path, "config", "user.email", "lead@example.invalid")
    run_git(path, "config", "user.name", "Lead")
    commit_file(path, "README", "one\ntwo\nthree\n", "init")
    return path


def typed(zc: TmuxInstance, text: str) -> None:
    zc.send_hex(to_hex(text))
    zc.wait_text(text[-20:])
    zc.send_hex(ENTER)


def window_names(zc: TmuxInstance) -> list[str]:
    return zc.tmux("list-windows", "-F", "#{window_name}").split()


def test_spawn_starts_a_worker_whose_receipt_returns_then_team_merge_merges_it(
    world: World,
) -> None:
    repo = git_repo(world, "lead")
    lead = start_in_tmux(
        world, "lead", world.server(demo=True), size=(140, 40),
        args=("--mode", "accept-edits", "--no-think"),
        GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1",
    )  # fmt: skip
    worktree = repo.parent / "lead-worktrees" / "w1"
    worker_pid = 0
    try:
        typed(lead, "/spawn w1 Add a line to the README")
        lead.wait_text("[y] start it")
        lead.wait_text("[N]/Esc/Enter do not")
        lead.wait_text("as this zcoder: --mode accept-edits --no-think")
        assert not worktree.exists()  # nothing is made before the user says y
        lead.send_hex(YES)
        lead.wait_text("receipt w1 completed", timeout=90)
        assert "w1" in window_names(lead)
        assert run_git(worktree, "branch", "--show-current") == "zcoder/w1"
        manifests = [m for m in world_manifests(world) if m.get("name") == "w1"]
        assert manifests and Path(str(manifests[0]["workspace"])) == worktree
        worker_pid = int(str(manifests[0]["pid"]))
        argv = Path(f"/proc/{worker_pid}/cmdline").read_bytes().split(b"\0")
        assert b"--mode" in argv and argv[argv.index(b"--mode") + 1] == b"accept-edits"
        assert b"--no-think" in argv and b"--yes" not in argv

        typed(lead, "/team")
        lead.wait_text("receipt: completed")
        lead.wait_text("zcoder/w1")

        # The worker's work, committed on its branch.
        run_git(worktree, "config", "user.email", "w1@example.invalid")
        commit_file(worktree, "NOTES", "from w1\n", "w1's change")
        (worktree / "scratch.txt").write_text("not committed\n")  # the worker's repo is dirty
        head = run_git(repo, "rev-parse", "HEAD")
        typed(lead, "/team merge w1")
        lead.wait_text("[y] merge")
        lead.wait_text("+from w1")
        lead.wait_text("1 uncommitted change")  # said: not part of the merge
        assert run_git(repo, "rev-parse", "HEAD") == head  # previewed, not merged
        lead.send_hex(YES)
        lead.wait_text("Merged zcoder/w1 into main")
        assert (repo / "NOTES").read_text() == "from w1\n"
        assert not (repo / "scratch.txt").exists()
        assert run_git(repo, "rev-parse", "HEAD^1") == head

        # Now the branches conflict: reported with the file named, nothing merged.
        commit_file(worktree, "README", "one\nTWO (w1)\nthree\n", "w1 again")
        commit_file(repo, "README", "one\ntwo (lead)\nthree\n", "lead")
        head = run_git(repo, "rev-parse", "HEAD")
        typed(lead, "/team merge w1")
        lead.wait_text("conflicts with main in README")
        lead.wait_text("nothing was")
        assert "[y] merge" not in lead.screen_text
        assert run_git(repo, "rev-parse", "HEAD") == head
        assert run_git(repo, "status", "--porcelain") == ""

        typed(lead, "/team stop w1")
        lead.wait_text("Stopped w1: it quit")
        wait_until(lambda: "w1" not in window_names(lead), what="w1's window to close")
        assert worktree.exists()  # kept unless asked

        # Removing a worktree with uncommitted changes asks; Escape keeps it.
        typed(lead, "/team stop w1 remove")
        lead.wait_text("[y] remove it")
        lead.wait_text("scratch.txt")
        lead.send_hex("1b")
        lead.wait_text("Kept")
        assert (worktree / "scratch.txt").exists()
        typed(lead, "/team stop w1 remove")
        lead.wait_text("[y] remove it")
        lead.send_hex(YES)
        lead.wait_text("the branch zcoder/w1 stays")
        assert not worktree.exists()
        assert run_git(repo, "branch", "--list", "zcoder/w1").strip() == "zcoder/w1"
        typed(lead, "/team")
        lead.wait_text("No workers were spawned")
    finally:
        if worker_pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker_pid, signal.SIGKILL)


def world_manifests(world: World) -> list[dict[str, object]]:
    import json

    found = []
    for path in world.registry.glob("a-*.json"):
        with contextlib.suppress(OSError, ValueError):
            found.append(json.loads(path.read_text()))
    return found


def test_outside_tmux_spawn_says_how_to_start_the_worker_by_hand(world: World) -> None:
    repo = git_repo(world, "solo")
    solo = world.start("solo", world.server(demo=True))
    solo.submit("/spawn helper Fix the bug")
    solo.wait_text("does not run in tmux")
    solo.wait_text("worktree add -b zcoder/helper")
    solo.wait_text("zcoder --name helper")
    assert run_git(repo, "branch", "--list", "zcoder/*") == ""
    assert not (repo.parent / "solo-worktrees").exists()


def test_the_models_spawn_is_asked_even_under_yes_and_a_no_makes_nothing(world: World) -> None:
    repo = git_repo(world, "boss")
    server = world.server(demo=False)
    server.enqueue(
        Turn.tool_calls(call("spawn_agent", {"name": "w9", "task": "rewrite\x1b[2J it all"})),
        Turn.text("Understood, no worker."),
    )
    boss = start_in_tmux(
        world, "boss", server, size=(60, 15), args=("--yes", "--mode", "accept-edits")
    )
    typed(boss, "start a worker for it")
    boss.wait_text("The model asks to start it.")
    boss.wait_text("as this zcoder: --mode accept-edits")  # never --yes
    boss.wait_text("\\e[2J")  # the task's ESC shown as an escape, never sent to the terminal
    boss.wait_text("[y] start it")  # armed: the keys line shows the answers
    boss.send_hex("6e")  # n
    boss.wait_text("Understood, no worker.")
    answer = server.chat_bodies[-1]["messages"][-1]
    assert answer["role"] == "tool" and "did not start the worker w9" in answer["content"]
    assert run_git(repo, "branch", "--list", "zcoder/*") == ""
    assert not (repo.parent / "boss-worktrees").exists()
    assert window_names(boss) == [window_names(boss)[0]]  # no second window

    # A task pasted with an escape sequence is shown escaped in /spawn's dialog too.
    boss.send_hex(paste_hex("/spawn w8 fix\x1b]0;owned\x07 it"))
    boss.wait_text("/spawn w8 fix")
    boss.send_hex(ENTER)
    boss.wait_text("\\e]0;owned")
    boss.wait_text("[y] start it")
    boss.send_hex("1b")  # Escape refuses
    boss.wait_text("did not start the worker w8")
    assert run_git(repo, "branch", "--list", "zcoder/*") == ""

    # A name that would find another live agent (here: this one's own) is refused.
    typed(boss, "/spawn boss do it")
    boss.wait_text("a live zcoder is named")
    boss.wait_text("boss already")
    assert run_git(repo, "branch", "--list", "zcoder/*") == ""


def test_a_long_diff_scrolls_with_page_down_and_y_waits_until_all_was_seen(world: World) -> None:
    repo = git_repo(world, "small")
    # A worker on the team (as /spawn leaves it), its branch ahead by one long commit.
    run_git(repo, "worktree", "add", "-q", "-b", "zcoder/w5", str(repo.parent / "wt-w5"))
    lines = "".join(f"line {n}\n" for n in range(1, 30))
    commit_file(repo.parent / "wt-w5", "LONG", lines, "w5's long change")
    entry = Worker(
        "w5", "zcoder/w5", str(repo.parent / "wt-w5"), str(repo.parent / "wt-w5"), "main"
    )
    Roster(world.home("small"), repo).put(entry)
    head = run_git(repo, "rev-parse", "HEAD")
    small = start_in_tmux(world, "small", world.server(demo=True), size=(60, 15))
    typed(small, "/team merge w5")
    small.wait_text("[y] merge")
    small.wait_text("not seen yet")
    small.send_hex(YES)
    small.wait_text("not yet: scroll")
    assert run_git(repo, "rev-parse", "HEAD") == head
    for _ in range(20):  # a page at a time, each once the view has moved
        shown = ROWS.search(small.screen_text)
        assert shown is not None, small.screen_text
        if shown.group(2) == shown.group(3):  # the last row is in view
            break
        small.send_hex(PAGE_DOWN)
        before = shown.group(0)

        def moved(before: str = before) -> bool:
            now = ROWS.search(small.screen_text)
            return now is not None and now.group(0) != before

        wait_until(moved, what="the view to move")
    small.wait_text("+line 29")
    small.wait_text("↑ ↓ PgUp PgDn Home End scroll")  # the hint once every row was seen
    small.send_hex(YES)
    small.wait_text("Merged zcoder/w5 into main")
    assert (repo / "LONG").read_text() == lines
    assert run_git(repo, "rev-parse", "HEAD^1") == head
