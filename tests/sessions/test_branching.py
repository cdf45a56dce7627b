"""SessionStore.cut (/rewind) and SessionStore.fork (/fork, --fork)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zcoder.sessions import SessionNotFoundError, SessionStore


def _session(store: SessionStore, workspace: Path) -> str:
    sid = store.create_session(workspace, "coding", "m").id
    for n in range(3):
        store.record_user_message(sid, f"prompt {n}")
        store.append_event(sid, "assistant", f"reply {n}")
    store.replace_messages(sid, [{"role": "user", "content": "prompt 0"}])
    store.save_state(sid, "plan", {"items": ["a"]})
    store.replace_pending(sid, [("follow-up", "later")])
    return sid


def test_cut_keeps_what_came_before_the_prompt(store: SessionStore, workspace: Path) -> None:
    sid = _session(store, workspace)
    store.cut(sid, [{"role": "user", "content": "prompt 0"}], ledger=1)
    data = store.load(sid, workspace, "coding")
    assert data.user_ledger == ["prompt 0"]
    assert [(e.role, e.text) for e in data.events] == [
        ("user", "prompt 0"),
        ("assistant", "reply 0"),
    ]
    assert data.state == {"plan": {"items": ["a"]}}
    # New events follow on: seq goes on from what is left.
    store.record_user_message(sid, "prompt 1 again")
    assert [e.seq for e in store.load(sid, workspace, "coding").events] == [1, 2, 3]


def test_fork_copies_everything_but_the_waiting_input_and_leaves_the_source(
    store: SessionStore, workspace: Path
) -> None:
    sid = _session(store, workspace)
    before = store.load(sid, workspace, "coding")
    made = store.fork(sid, workspace, "coding")
    assert made.id != sid and made.title == "fork of prompt 0"
    fork = store.load(made.id, workspace, "coding")
    assert fork.info.title == "fork of prompt 0"
    assert fork.messages == before.messages and fork.user_ledger == before.user_ledger
    assert [(e.seq, e.role, e.text) for e in fork.events] == [
        (e.seq, e.role, e.text) for e in before.events
    ]
    assert fork.state == before.state and fork.pending == []
    store.record_user_message(made.id, "only in the fork")
    after = store.load(sid, workspace, "coding")
    assert after.user_ledger == before.user_ledger and after.events == before.events
    named = store.fork(sid, workspace, "coding", title="  try\nthe other way ")
    assert named.title == "try"


def test_fork_of_another_scope_or_no_session_is_not_found(
    store: SessionStore, workspace: Path, tmp_path: Path
) -> None:
    sid = _session(store, workspace)
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(SessionNotFoundError):
        store.fork(sid, other, "coding")
    with pytest.raises(SessionNotFoundError):
        store.fork("nope", workspace, "coding")
