"""The prompt history file: per workspace, across runs, private, bounded, never losing a line."""

from __future__ import annotations

import json
import multiprocessing
import os
import resource
import shutil
import signal
import stat
import tempfile
import time
from collections.abc import Callable
from multiprocessing.context import ForkContext, ForkProcess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fixtures.workspace import home, workspace
from zcoder.tui.state.history import (
    MAX_ENTRY_CHARS,
    PromptHistory,
    decode_entry,
    encode_entry,
    history_path,
)

NOBODY = 65534

__all__ = ["home", "workspace"]  # the shared fixtures: a zcoder home and a project


def test_prompts_come_back_in_the_next_run_of_the_same_workspace_only(
    home: Path, workspace: Path, tmp_path: Path
) -> None:
    first = PromptHistory.open(home, workspace)
    assert first.entries == [] and first.problem is None
    for text in ("one", "/context", "two"):
        assert first.add(text) is None
    assert PromptHistory.open(home, workspace).entries == ["one", "/context", "two"]
    # The same directory through a symlink is the same workspace; another one is not.
    link = tmp_path / "link"
    link.symlink_to(workspace)
    assert PromptHistory.open(home, link).entries == ["one", "/context", "two"]
    other = tmp_path / "other"
    other.mkdir()
    assert PromptHistory.open(home, other).entries == []
    assert history_path(home, other) != history_path(home, workspace)


def test_the_file_name_says_nothing_of_the_workspace_and_modes_are_private(
    home: Path, workspace: Path
) -> None:
    os.umask(0o022)
    history = PromptHistory.open(home, workspace)
    history.add("secret plan")
    path = history.path
    assert path.parent == home / "history"
    assert workspace.name not in path.name and "secret" not in path.name
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_file_made_readable_by_others_is_made_private_again(home: Path, workspace: Path) -> None:
    history = PromptHistory.open(home, workspace)
    history.add("one")
    history.path.chmod(0o644)
    history.add("two")
    assert stat.S_IMODE(history.path.stat().st_mode) == 0o600


def test_a_symlink_in_place_of_the_file_is_not_followed(
    home: Path, workspace: Path, tmp_path: Path
) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious\n")
    path = history_path(home, workspace)
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    history = PromptHistory.open(home, workspace)
    assert history.problem is not None and "could not read" in history.problem
    assert history.add("prompt") is None  # the one notice was given at start
    assert target.read_text() == "precious\n"
    assert history.entries == ["prompt"]  # still recalled in this run


@pytest.mark.parametrize(
    "text",
    [
        "line one\nline two\n\n  indented\n",
        "tabs\tand \r\n crlf and \u2028 separators",
        'quotes " and \\ backslashes and {"json": true}',
        "emoji 🙂 and accents é and a lone surrogate \udcff",
        "trailing spaces   ",
    ],
)
def test_any_prompt_round_trips_exactly(home: Path, workspace: Path, text: str) -> None:
    PromptHistory.open(home, workspace).add(text)
    assert PromptHistory.open(home, workspace).entries == [text]
    assert history_path(home, workspace).read_bytes().isascii()


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1).filter(str.strip))
def test_encoding_round_trips_any_text(text: str) -> None:
    line = encode_entry(text, 1.0)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert decode_entry(line.rstrip(b"\n")) == text


def test_blank_prompts_and_consecutive_repeats_are_not_kept(home: Path, workspace: Path) -> None:
    history = PromptHistory.open(home, workspace)
    for text in ("a", "a", "  \n ", "", "b", "a", "a"):
        history.add(text)
    assert history.entries == ["a", "b", "a"]
    assert PromptHistory.open(home, workspace).entries == ["a", "b", "a"]
    assert len(history.path.read_bytes().splitlines()) == 3


def test_a_huge_prompt_is_recalled_in_this_run_but_never_written(
    home: Path, workspace: Path
) -> None:
    history = PromptHistory.open(home, workspace)
    huge = "x" * (MAX_ENTRY_CHARS + 1)
    history.add("small")
    history.add(huge)
    assert history.entries == ["small", huge]
    assert PromptHistory.open(home, workspace).entries == ["small"]
    assert history.path.stat().st_size < 200


def test_corrupt_lines_are_skipped(home: Path, workspace: Path) -> None:
    history = PromptHistory.open(home, workspace)
    history.add("before")
    with history.path.open("ab") as file:
        file.write(b'{"text": "cut in the mid\n')  # a crash mid-line
        file.write(b"not json at all\n\xff\xfe binary\n[1, 2]\n")
        file.write(b'{"text": 42}\n{"no": "text"}\n{"text": "   "}\n\n')
    history.add("after")
    assert PromptHistory.open(home, workspace).entries == ["before", "after"]


def test_the_newest_entries_are_kept_and_the_file_is_compacted(home: Path, workspace: Path) -> None:
    path = history_path(home, workspace)
    history = PromptHistory(path, max_entries=10, compact_at_lines=15)
    history.load()
    for n in range(40):
        history.add(f"prompt {n}")
        assert len(path.read_bytes().splitlines()) <= 15
    assert history.entries == [f"prompt {n}" for n in range(30, 40)]
    again = PromptHistory(path, max_entries=10, compact_at_lines=15)
    again.load()
    assert again.entries == history.entries
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    names = sorted(p.name for p in path.parent.iterdir())
    assert names == [path.name, path.name + ".lock"]  # no temporary left


def test_a_file_grown_large_in_bytes_is_compacted(home: Path, workspace: Path) -> None:
    path = history_path(home, workspace)
    history = PromptHistory(path, max_entries=3, compact_at_bytes=2000)
    history.load()
    for n in range(20):
        history.add(f"{n} " + "y" * 300)
        assert path.stat().st_size <= 2000 + 400
    assert len(path.read_bytes().splitlines()) <= 6


def _run_writers_a_and_b(
    context: ForkContext,
    target: Callable[[str, str, int, object], None],
    path: Path,
    barrier: object,
) -> list[ForkProcess]:
    """Processes "A" and "B" running ``target`` on the history file at once, 150 prompts
    each; returns them once both have ended (a minute each at the most)."""
    writers = [
        context.Process(target=target, args=(str(path), name, 150, barrier)) for name in "AB"
    ]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(60)
    return writers


def _writer(path: str, name: str, count: int, barrier: object) -> None:
    history = PromptHistory(Path(path), max_entries=100, compact_at_lines=120)
    history.load()
    barrier.wait()  # type: ignore[attr-defined]
    for n in range(count):
        assert history.add(f"{name} {n}\nsecond line of {name} {n}") is None


def test_two_instances_in_one_workspace_interleave_whole_lines_and_lose_none(
    home: Path, workspace: Path
) -> None:
    """Two writers append at once while each also compacts the file now and then (to the
    newest 100): every line is whole, and each writer's prompts still there are its
    newest ones, in order, none missing between them."""
    path = history_path(home, workspace)
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(2)
    writers = _run_writers_a_and_b(context, _writer, path, barrier)
    assert [writer.exitcode for writer in writers] == [0, 0]
    lines = path.read_bytes().splitlines()
    texts = [decode_entry(line) for line in lines]
    assert None not in texts  # no line cut or mixed with another
    assert 100 <= len(texts) <= 120
    for name in "AB":
        own = [t for t in texts if t is not None and t.startswith(name)]
        first = 150 - len(own)
        assert own == [f"{name} {n}\nsecond line of {name} {n}" for n in range(first, 150)]


def _compactor(path: str, stop: object, barrier: object) -> None:
    """Rewrites the file again and again (keeping every line) while others append. A real
    zcoder compacts once in hundreds of prompts; the short pause keeps this one from holding
    the lock all the time (appenders that wait longer than LOCK_WAIT_SECONDS go on without
    it, and that fallback is for a stuck process, not for this test)."""
    history = PromptHistory(Path(path), max_entries=10_000)
    barrier.wait()  # type: ignore[attr-defined]
    while not stop.is_set():  # type: ignore[attr-defined]
        history.compact()
        time.sleep(0.002)


def test_appends_during_compactions_are_never_lost(home: Path, workspace: Path) -> None:
    """A compaction renames a new file over the old one: an append that opened the old one
    must not write into it (it would vanish with it). Every appended prompt survives."""
    path = history_path(home, workspace)
    PromptHistory(path).add("start")
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(3)
    stop = context.Event()
    compactor = context.Process(target=_compactor, args=(str(path), stop, barrier))
    compactor.start()
    writers = _run_writers_a_and_b(context, _appender, path, barrier)
    stop.set()
    compactor.join(30)
    assert [writer.exitcode for writer in writers] == [0, 0] and compactor.exitcode == 0
    texts = [decode_entry(line) for line in path.read_bytes().splitlines()]
    for name in "AB":
        own = [t for t in texts if t is not None and t.startswith(name)]
        assert own == [f"{name} {n}" for n in range(150)]


def _appender(path: str, name: str, count: int, barrier: object) -> None:
    history = PromptHistory(Path(path))
    barrier.wait()  # type: ignore[attr-defined]
    for n in range(count):
        assert history.add(f"{name} {n}") is None


def _unwritable_home(home: str, workspace: str, results: object) -> None:
    """In a child process, as an ordinary user (root would write anywhere)."""
    if os.geteuid() == 0:
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    history = PromptHistory.open(Path(home), Path(workspace))
    outcome: dict[str, object] = {"problem": history.problem}
    outcome["one"] = history.add("one")
    outcome["two"] = history.add("two")
    outcome["entries"] = list(history.entries)
    Path(home).chmod(0o700)  # writable again: the unsaved prompts go with the next one
    outcome["three"] = history.add("three")
    outcome["reloaded"] = PromptHistory.open(Path(home), Path(workspace)).entries
    results.send(outcome)  # type: ignore[attr-defined]


def test_an_unwritable_home_gives_one_notice_and_the_session_keeps_its_prompts() -> None:
    # Not under pytest's tmp_path: as root that is 0700 root's, closed to the child.
    root = Path(tempfile.mkdtemp(prefix="zh", dir="/tmp"))
    try:
        home, workspace = root / "home", root / "project"
        home.mkdir(mode=0o500)
        workspace.mkdir()
        if os.geteuid() == 0:
            for path in (root, home, workspace):
                os.chown(path, NOBODY, NOBODY)
        outcome = _in_child(_unwritable_home, str(home), str(workspace))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert outcome["problem"] is None  # nothing to read yet is no problem
    notice = outcome["one"]
    assert isinstance(notice, str) and "could not write" in notice and "still recalled" in notice
    assert outcome["two"] is None  # once
    assert outcome["entries"] == ["one", "two"]
    assert outcome["three"] is None
    assert outcome["reloaded"] == ["one", "two", "three"]


def _in_child(target: Callable[..., None], *args: object) -> dict[str, object]:
    """Run ``target(*args, sender)`` in a forked process; what it sent back."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=target, args=(*args, sender))
    child.start()
    try:
        assert receiver.poll(30), f"the child sent nothing (exit code {child.exitcode})"
        outcome: dict[str, object] = receiver.recv()
    finally:
        child.join(10)
    return outcome


def _fill_up(path: str, results: object) -> None:
    """In a child process: the file may not grow past its size (RLIMIT_FSIZE, which fails
    a write part-way as a full disk does), then may again."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    history = PromptHistory(Path(path))
    history.load()
    outcome: dict[str, object] = {"first": history.add("saved before")}
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (Path(path).stat().st_size + 10, hard))
    outcome["cut"] = history.add("this one is cut part-way through its line")
    outcome["next"] = history.add("and this one does not fit at all")
    outcome["entries"] = list(history.entries)
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    outcome["after"] = history.add("space again")
    results.send(outcome)  # type: ignore[attr-defined]


def test_a_full_disk_gives_one_notice_and_saves_everything_once_there_is_room(
    home: Path, workspace: Path
) -> None:
    path = history_path(home, workspace)
    outcome = _in_child(_fill_up, str(path))
    assert outcome["first"] is None
    notice = outcome["cut"]
    assert isinstance(notice, str) and "could not write" in notice and str(path) in notice
    assert outcome["next"] is None  # one notice, not one per prompt
    assert outcome["entries"] == [
        "saved before",
        "this one is cut part-way through its line",
        "and this one does not fit at all",
    ]
    assert outcome["after"] is None
    assert PromptHistory.open(home, workspace).entries == [
        *outcome["entries"],
        "space again",
    ]


def test_a_file_where_the_directory_should_be_gives_a_notice_then_recovers(
    home: Path, workspace: Path
) -> None:
    blocked = home / "history"
    home.mkdir()
    blocked.write_text("a file where the directory should be")
    history = PromptHistory.open(home, workspace)
    assert history.problem is not None and str(history.path) in history.problem
    assert "Not a directory" in history.problem
    assert history.add("kept") is None  # the one notice was given at start
    assert history.add("also kept") is None
    assert history.entries == ["kept", "also kept"]
    blocked.unlink()
    assert history.add("third") is None
    assert PromptHistory.open(home, workspace).entries == ["kept", "also kept", "third"]


def test_an_unreadable_file_gives_a_notice_at_start(home: Path, workspace: Path) -> None:
    path = history_path(home, workspace)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)  # not a regular file: never read (nor waited on)
    history = PromptHistory.open(home, workspace)
    assert history.entries == []
    assert history.problem is not None and "could not read" in history.problem
    assert history.add("prompt") is None  # the one notice was that one
    assert history.entries == ["prompt"]


def test_lines_are_json_with_the_text_and_a_time(home: Path, workspace: Path) -> None:
    history = PromptHistory(history_path(home, workspace), clock=lambda: 1700000000.5)
    history.add("hello")
    record = json.loads(history.path.read_text())
    assert record == {"ts": 1700000000.5, "text": "hello"}
