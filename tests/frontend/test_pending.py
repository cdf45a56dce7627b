"""The user's waiting input (zcoder.frontend.pending): steering and follow-ups in one list,
saved at every change, held after a stop or a crash until the user resumes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from zcoder.agent import Steer
from zcoder.base.errors import UsageError
from zcoder.frontend.pending import InputKind, PendingInput
from zcoder.sessions import SessionStore, SessionStoreError


def test_steers_are_taken_in_order_and_follow_ups_stay() -> None:
    saved: list[list[tuple[str, str]]] = []
    pending = PendingInput(lambda items: saved.append(list(items)))
    pending.steer("first")
    pending.follow_up("later")
    pending.steer("second")

    assert pending.take_steers() == [Steer("first"), Steer("second")]
    assert pending.take_steers() == []
    assert [(i.kind, i.text) for i in pending.items()] == [(InputKind.FOLLOW_UP, "later")]
    assert saved[-1] == [("follow-up", "later")]
    assert pending.pop_follow_up() == "later" and pending.pop_follow_up() is None
    assert saved[-1] == []


def test_held_input_neither_lands_nor_runs_until_resumed() -> None:
    pending = PendingInput()
    pending.steer("look at b.py")
    pending.follow_up("then run the tests")
    pending.hold()

    assert pending.held and not pending.steering_left()
    assert pending.take_steers() == [] and pending.pop_follow_up() is None
    assert [i.label for i in pending.items()] == ["steering (held)", "follow-up (held)"]
    pending.steer("typed after the stop")  # new input goes on normally
    assert pending.take_steers() == [Steer("typed after the stop")]

    assert pending.resume() == 2
    assert pending.steering_left()
    assert pending.take_steers() == [Steer("look at b.py")]
    assert pending.follow_ups() == ["then run the tests"]


def test_drop_and_take_last_name_what_they_took() -> None:
    pending = PendingInput()
    pending.steer("a")
    pending.follow_up("b")
    pending.follow_up("c")
    assert pending.drop(2).text == "b"
    taken = pending.take_last()
    assert taken is not None and taken.text == "c"
    with pytest.raises(UsageError, match="no queued input number 5; there is 1 to 1"):
        pending.drop(5)
    pending.drop(1)
    with pytest.raises(UsageError, match="the queue is empty"):
        pending.drop(1)
    assert pending.take_last() is None


def test_a_killed_process_leaves_the_input_saved_and_the_next_open_holds_it(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with SessionStore(tmp_path / "home") as store:
        info = store.reuse_or_create(workspace, "coding", "m")
        pending = PendingInput(lambda items: store.replace_pending(info.id, items))
        pending.steer("steer me")
        pending.follow_up("follow me\nwith a second line")
    # no close, no hold: as after kill -9, only what each change saved is left
    with SessionStore(tmp_path / "home") as store:
        data = store.load(info.id, workspace, "coding")
    assert data.pending == [("steer", "steer me"), ("follow-up", "follow me\nwith a second line")]
    again = PendingInput()
    again.restore(data.pending)
    assert all(item.held for item in again.items())
    assert again.take_steers() == [] and again.pop_follow_up() is None


def test_a_failed_save_keeps_the_input_and_says_so_once() -> None:
    def full_disk(_items: object) -> None:
        raise SessionStoreError(Path("/home/sessions.db"), "database or disk is full")

    told: list[str] = []
    pending = PendingInput(full_disk)
    pending.on_save_error = told.append
    pending.steer("one")
    pending.steer("two")
    assert [i.text for i in pending.items()] == ["one", "two"]
    assert told == ["the waiting input could not be saved: database or disk is full"]
