"""Other coding agents as helpers, as a user meets them (issue 31 item 4): the real zcoder
in tmux, keys as the bytes a terminal sends, stand-in ``claude``, ``codex`` and
``opencode`` executables first on PATH (tests/fixtures/helper_cli.py). /NAME TASK asks
first (the exact command line, its own permissions), y runs it into one entry (Ctrl+T
shows all of it), /diff shows its edit and /undo takes it back; n runs nothing; Escape
stops it and everything it started; a helper not installed says so; the model's
delegate_task asks the same question."""

from __future__ import annotations

import json
import os
import re
from functools import partial
from pathlib import Path

import pytest

from tests.e2e.harness import DIALOG_ARMED, World, wait_until
from tests.e2e.tmux import ENTER, TmuxInstance, start_in_tmux, to_hex
from tests.fixtures.fake_ollama import Turn, call
from tests.fixtures.helper_cli import install_helpers
from tests.fixtures.processes import pid_alive

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

ESCAPE, CTRL_T = "1b", "14"
OWN_TERMS = "runs with its own permissions, outside zcoder's guard and approvals"


def start(
    world: World, size: tuple[int, int], names: tuple[str, ...] = ("claude", "codex", "opencode")
) -> tuple[TmuxInstance, Path]:
    """zcoder with the stand-ins ``names`` on PATH; their runs are logged to the file
    returned (absent: nothing ran)."""
    server = world.server(demo=False)
    return start_with(world, server, size, names)


def start_with(
    world: World, server: object, size: tuple[int, int], names: tuple[str, ...]
) -> tuple[TmuxInstance, Path]:
    bin_dir = install_helpers(world.root / "bin", names)
    log = world.root / "helper-runs.jsonl"
    zc = start_in_tmux(
        world,
        "proj",
        server,
        size=size,
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        HELPER_LOG=str(log),
        HELPER_PIDS=str(world.root / "helper-pids"),
    )
    (zc.workspace / "notes.txt").write_text("the original\n")
    return zc, log


PAGE_DOWN = "1b 5b 36 7e"
UNSEEN = re.compile(r"(\d+) not seen yet|all seen")


def unseen(zc: TmuxInstance) -> int | None:
    """The dialog's count of rows not seen yet (0: all seen), its line wrapped or not."""
    flat = " ".join(re.sub(r"[^\w\s:·,.-]", " ", zc.screen_text).split())
    found = UNSEEN.search(flat)
    return None if found is None else int(found.group(1) or 0)


def read_to_end(zc: TmuxInstance) -> None:
    """PageDown until the dialog says every row was seen, each press let come to rest."""
    for _ in range(20):
        left = unseen(zc)
        if left == 0:
            return
        zc.send_hex(PAGE_DOWN)
        wait_until(partial(_fewer, zc, 1 << 30 if left is None else left))
    raise AssertionError(f"the dialog was never seen to its end:\n{zc.screen_text}")


def _fewer(zc: TmuxInstance, than: int) -> bool:
    now = unseen(zc)
    return now is not None and now < than


def answer_yes(
    zc: TmuxInstance, *, short: bool, armed: str | re.Pattern[str] = DIALOG_ARMED
) -> None:
    """y in the open dialog once it takes answers; in a ``short`` terminal, where it does
    not fit, once it has been read to its end."""
    zc.wait_text(armed)
    if short:
        zc.wait_text("scroll to see it all")
        read_to_end(zc)
    zc.send_key("y")


@pytest.mark.parametrize(
    ("name", "title", "size"),
    [
        ("claude", "Claude Code", (60, 15)),
        ("codex", "Codex", (140, 40)),
        ("opencode", "opencode", (140, 40)),
    ],
)
def test_a_helper_asks_runs_into_one_entry_and_its_edit_is_diffed_and_undone(
    world: World, name: str, title: str, size: tuple[int, int]
) -> None:
    zc, log = start(world, size)
    zc.send_hex(to_hex(f"/{name} edit:notes.txt tidy the notes"), ENTER)
    zc.wait_text(f"Hand this task to {title}?")
    zc.wait_text("asked every time")
    screen = " ".join(zc.screen_text.split())
    assert "its own permissions" in screen and "[a]" not in screen
    assert not log.exists()  # nothing runs before the answer
    answer_yes(zc, short=size[1] < 20)
    zc.wait_text(f"{title} exit code 0; 1 file changed: notes.txt")
    zc.wait_text(f"{name} did: edit:notes.txt tidy the notes")
    assert (zc.workspace / "notes.txt").read_text() == f"changed by {name}\n"
    [argv] = [json.loads(line) for line in log.read_text().splitlines()]
    assert argv[0] == name and argv[-2:] == ["--", "edit:notes.txt tidy the notes"]

    zc.send_hex(CTRL_T)  # the whole output, in the viewer
    zc.wait_text("Esc/q close")
    zc.wait_text("→ ")
    zc.type_text("q")
    zc.wait_gone("Esc/q close")

    zc.send_hex(to_hex("/diff"), ENTER)
    zc.wait_text(f"+changed by {name}")
    zc.send_hex(to_hex("/undo"), ENTER)
    zc.wait_text("Undo the file changes of the turn")
    assert 'tidy the notes"?' in zc.screen_text  # the run, named as the user typed it
    answer_yes(zc, short=size[1] < 20, armed="[n]/Esc cancel")
    zc.wait_text("Undid the file changes")
    assert (zc.workspace / "notes.txt").read_text() == "the original\n"


def test_n_runs_nothing(world: World) -> None:
    zc, log = start(world, (140, 40))
    zc.send_hex(to_hex("/codex edit:notes.txt"), ENTER)
    zc.wait_text("Hand this task to Codex?")
    zc.answer_dialog("n")
    zc.wait_text("Not run: the user said no; Codex was not started.")
    assert not log.exists()
    assert (zc.workspace / "notes.txt").read_text() == "the original\n"


def test_escape_stops_the_helper_and_what_it_started(world: World) -> None:
    zc, _ = start(world, (140, 40))
    zc.send_hex(to_hex("/opencode hang"), ENTER)
    zc.answer_dialog("y")
    zc.wait_text("working on it, slowly")
    pids_file = world.root / "helper-pids"
    wait_until(lambda: pids_file.exists() and len(pids_file.read_text().split()) == 2)
    helper, child = (int(pid) for pid in pids_file.read_text().split())
    zc.send_hex(ESCAPE)
    zc.wait_text("Interrupted: the user stopped the helper.")
    wait_until(lambda: not pid_alive(helper) and not pid_alive(child), what="the group to end")
    assert zc.alive()


def test_a_helper_not_installed_says_so_and_helpers_lists_them(world: World) -> None:
    zc, log = start(world, (60, 15), names=("codex",))
    zc.send_hex(to_hex("/claude do something"), ENTER)
    zc.wait_text("Claude Code is not installed")
    zc.send_hex(to_hex("/helpers"), ENTER)
    zc.wait_text("codex 9.9.9 (stand-in)")
    screen = " ".join(zc.screen_text.split())
    assert "Claude Code: not installed" in screen
    assert not log.exists()


def test_the_models_delegate_task_asks_the_same_question(world: World) -> None:
    server = world.server(demo=False)
    task = "edit:notes.txt make it tidy"
    server.enqueue(
        Turn.tool_calls(call("delegate_task", {"agent": "claude", "task": task})),
        Turn.text("Claude Code tidied the notes."),
    )
    zc, log = start_with(world, server, (140, 40), ("claude",))
    zc.send_hex(to_hex("ask claude code to tidy the notes"), ENTER)
    zc.wait_text("Hand this task to Claude Code?")
    assert OWN_TERMS in " ".join(zc.screen_text.split())
    zc.answer_dialog("y")
    zc.wait_text("Claude Code tidied the notes.")
    assert (zc.workspace / "notes.txt").read_text() == "changed by claude\n"
    result = server.chat_bodies[-1]["messages"][-1]
    assert result["role"] == "tool" and f"claude did: {task}" in result["content"]
    assert log.exists()
