"""Sessions of ``zcoder --prompt`` (issue 18 item 16): marked one-shot in the store, and not
kept when nothing was ever written to them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.sessions.conftest import old_store
from zcoder.sessions import STORE_FILE_NAME, SessionStore
from zcoder.sessions.schema import SCHEMA_VERSION, read_version


def test_a_one_shot_session_is_marked_and_listed_as_such(
    store: SessionStore, workspace: Path
) -> None:
    interactive = store.create_session(workspace, "coding", "m")
    store.record_user_message(interactive.id, "interactive work")
    one_shot = store.create_session(workspace, "coding", "m", one_shot=True)
    store.record_user_message(one_shot.id, "oa list")
    assert one_shot.one_shot and not interactive.one_shot
    listed = {info.id: info.one_shot for info in store.list_sessions(workspace, "coding")}
    assert listed == {interactive.id: False, one_shot.id: True}
    assert store.load(one_shot.id, workspace, "coding").info.one_shot


def test_reusing_an_empty_session_gives_it_the_kind_of_the_run_that_takes_it(
    store: SessionStore, workspace: Path
) -> None:
    empty = store.create_session(workspace, "coding", "m")
    taken = store.reuse_or_create(workspace, "coding", "m", one_shot=True)
    assert taken.id == empty.id and taken.one_shot
    again = store.reuse_or_create(workspace, "coding", "m")
    assert again.id == empty.id and not again.one_shot
    new = store.reuse_or_create(workspace, "coding", "m", one_shot=True)
    assert new.one_shot


def test_an_unused_session_is_discarded_and_a_used_one_never(
    store: SessionStore, workspace: Path
) -> None:
    unused = store.create_session(workspace, "coding", "m", one_shot=True)
    used = store.create_session(workspace, "coding", "m", one_shot=True)
    store.record_user_message(used.id, "-")
    relayed = store.create_session(workspace, "coding", "m")
    store.append_event(relayed.id, "relay", "a relayed task")
    with_history = store.create_session(workspace, "coding", "m")
    store.replace_messages(with_history.id, [{"role": "user", "content": "context"}])

    assert store.discard_if_unused(unused.id)
    for kept in (used, relayed, with_history):
        assert not store.discard_if_unused(kept.id)
    listed = [info.id for info in store.list_sessions(workspace, "coding")]
    assert unused.id not in listed
    assert set(listed) == {used.id, relayed.id, with_history.id}


def test_a_store_of_version_3_gets_the_mark_and_keeps_its_sessions(
    tmp_path: Path, workspace: Path
) -> None:
    home = tmp_path / "old-home"
    with old_store(home, 3) as conn:
        conn.execute(
            "INSERT INTO sessions VALUES ('s1', ?, '\"coding\"', '\"m\"', '\"old job\"', 0,"
            " 1.0, 1.0, 1, 'tok')",
            (f'"{workspace}"',),
        )

    with SessionStore(home) as store:
        (old,) = store.list_sessions(workspace, "coding")
        assert (old.id, old.title, old.one_shot) == ("s1", "old job", False)
        marked = store.create_session(workspace, "coding", "m", one_shot=True)
        assert store.load(marked.id, workspace, "coding").info.one_shot
    conn = sqlite3.connect(home / STORE_FILE_NAME)
    assert read_version(conn) == SCHEMA_VERSION >= 4
    assert dict(conn.execute("SELECT id, one_shot FROM sessions")) == {"s1": 0, marked.id: 1}
    conn.close()
