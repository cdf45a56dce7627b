from __future__ import annotations

import re
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.sessions.conftest import FakeClock
from zcoder.sessions import (
    DEFAULT_TITLE,
    EVENT_ROLES,
    UNTITLED,
    EventNotFoundError,
    SessionNotFoundError,
    SessionStore,
    SessionStoreError,
    shown_title,
)

# -- scoping ----------------------------------------------------------------------------


def test_sessions_of_another_workspace_are_never_listed_or_loaded(
    store: SessionStore, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    mine = store.create_session(workspace, "coding", "m")
    theirs = store.create_session(other, "coding", "m")
    assert [s.id for s in store.list_sessions(workspace, "coding")] == [mine.id]
    with pytest.raises(SessionNotFoundError, match=theirs.id):
        store.load(theirs.id, workspace, "coding")


def test_sessions_of_another_profile_are_never_listed_or_loaded(
    store: SessionStore, workspace: Path
) -> None:
    coding = store.create_session(workspace, "coding", "m")
    sysadmin = store.create_session(workspace, "sysadmin", "m")
    assert [s.id for s in store.list_sessions(workspace, "coding")] == [coding.id]
    assert [s.id for s in store.list_sessions(workspace, "sysadmin")] == [sysadmin.id]
    with pytest.raises(SessionNotFoundError):
        store.load(sysadmin.id, workspace, "coding")
    with pytest.raises(SessionNotFoundError):
        store.load(coding.id, workspace, "sysadmin")


def test_unknown_session_id_is_not_found(store: SessionStore, workspace: Path) -> None:
    with pytest.raises(SessionNotFoundError, match="/sessions"):
        store.load("123_45678", workspace, "coding")


def test_workspace_reached_through_a_symlink_is_the_same_scope(
    store: SessionStore, workspace: Path, tmp_path: Path
) -> None:
    link = tmp_path / "link"
    link.symlink_to(workspace)
    info = store.create_session(link, "coding", "m")
    assert info.workspace == str(workspace)
    assert [s.id for s in store.list_sessions(workspace, "coding")] == [info.id]
    assert store.load(info.id, str(workspace), "coding").info == info


def test_list_is_newest_first_by_updated_time_then_id(
    store: SessionStore, workspace: Path, clock: FakeClock
) -> None:
    first = store.create_session(workspace, "coding", "m")
    clock.advance()
    second = store.create_session(workspace, "coding", "m")
    twin = store.create_session(workspace, "coding", "m")  # same second as `second`
    clock.advance()
    store.append_event(first.id, "system", "touched")  # activity makes it the newest
    ids = [s.id for s in store.list_sessions(workspace, "coding")]
    assert ids == [first.id, *sorted([second.id, twin.id], reverse=True)]


def test_session_ids_are_epoch_and_digits_and_unique_within_a_second(
    store: SessionStore, workspace: Path, clock: FakeClock
) -> None:
    ids = {store.create_session(workspace, "coding", "m").id for _ in range(300)}
    assert len(ids) == 300
    for session_id in ids:
        assert re.fullmatch(rf"{int(clock.now)}_\d{{5}}", session_id)


# -- titles -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "title"),
    [
        pytest.param(["  Make the parser\nhandle tabs"], "Make the parser", id="first-line"),
        pytest.param(["first", "second"], "first", id="later-messages-never-change-it"),
        pytest.param(["New Job", "something else"], "New Job", id="a-typed-new-job-is-a-title"),
        pytest.param(["   \n "], DEFAULT_TITLE, id="a-blank-message-leaves-it-untitled"),
        pytest.param(["   \n ", "real"], "real", id="the-next-after-a-blank-one-counts"),
    ],
)
def test_a_session_is_untitled_until_the_first_user_message_that_is_not_blank(
    store: SessionStore, workspace: Path, messages: list[str], title: str
) -> None:
    info = store.create_session(workspace, "coding", "m")
    assert info.title == DEFAULT_TITLE
    for text in messages:
        store.record_user_message(info.id, text)
    assert store.load(info.id, workspace, "coding").info.title == title
    typed_a_title = any(text.strip() for text in messages)
    assert store.set_title_if_default(info.id, "third") is not typed_a_title


def test_an_untitled_session_has_no_made_up_title_even_if_stored_by_an_older_zcoder(
    store: SessionStore, workspace: Path, tmp_path: Path
) -> None:
    # Older stores wrote the placeholder "New Job" as the title of every session without a
    # prompt; lists showed it as if it were one. Untitled reads as untitled, old or new.
    fresh = store.create_session(workspace, "coding", "m")
    old = store.create_session(workspace, "coding", "m")
    path = store.path
    store.close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE sessions SET title = ? WHERE id = ?", ('"New Job"', old.id))
    reopened = SessionStore(path.parent)
    try:
        listed = {info.id: info.title for info in reopened.list_sessions(workspace, "coding")}
        assert DEFAULT_TITLE == "" and listed == {fresh.id: "", old.id: ""}
        assert reopened.load(old.id, workspace, "coding").info.title == ""
        assert shown_title(listed[old.id]) == UNTITLED == "(no prompt yet)"
        reopened.record_user_message(old.id, "rename the users table")
        assert reopened.load(old.id, workspace, "coding").info.title == "rename the users table"
    finally:
        reopened.close()


def test_relay_events_and_context_messages_never_set_the_title(
    store: SessionStore, workspace: Path
) -> None:
    info = store.create_session(workspace, "coding", "m")
    store.append_event(info.id, "relay", "please run the tests", {"sender": "peer-1"})
    store.append_messages(info.id, [{"role": "user", "content": "[relayed] run the tests"}])
    store.replace_messages(info.id, [{"role": "user", "content": "nudge: call a tool"}])
    store.append_event(info.id, "assistant", "done")
    data = store.load(info.id, workspace, "coding")
    assert data.info.title == DEFAULT_TITLE
    assert data.user_ledger == []
    store.record_user_message(info.id, "now me")
    assert store.load(info.id, workspace, "coding").info.title == "now me"


def test_long_first_message_gives_a_42_character_title(
    store: SessionStore, workspace: Path
) -> None:
    info = store.create_session(workspace, "coding", "m")
    store.record_user_message(info.id, "word " * 30)
    title = store.load(info.id, workspace, "coding").info.title
    assert len(title) <= 42
    assert title.endswith("…")


# -- what is saved ----------------------------------------------------------------------


def test_record_user_message_fills_ledger_and_transcript(
    store: SessionStore, workspace: Path
) -> None:
    info = store.create_session(workspace, "coding", "m")
    event_id = store.record_user_message(info.id, "exact text\n  with indent ")
    data = store.load(info.id, workspace, "coding")
    assert data.user_ledger == ["exact text\n  with indent "]
    assert [(e.id, e.role, e.text) for e in data.events] == [
        (event_id, "user", "exact text\n  with indent ")
    ]


def test_tool_event_goes_from_running_to_completed(store: SessionStore, workspace: Path) -> None:
    info = store.create_session(workspace, "coding", "m")
    running = {"tool": "run_command", "call_id": "c1", "arguments": {"command": "ls"}}
    event_id = store.append_event(info.id, "tool", "$ ls", {**running, "status": "running"})
    store.update_event(event_id, text="$ ls\nREADME", metadata={**running, "status": "completed"})
    (event,) = store.load(info.id, workspace, "coding").events
    assert event.text == "$ ls\nREADME"
    assert event.metadata == {**running, "status": "completed"}
    store.update_event(event_id, text="only text")
    (event,) = store.load(info.id, workspace, "coding").events
    assert (event.text, event.metadata["status"]) == ("only text", "completed")


def test_events_are_numbered_in_order(store: SessionStore, workspace: Path) -> None:
    info = store.create_session(workspace, "coding", "m")
    for role in EVENT_ROLES:
        store.append_event(info.id, role, role)
    events = store.load(info.id, workspace, "coding").events
    assert [(e.seq, e.role) for e in events] == list(enumerate(EVENT_ROLES, start=1))


def test_unknown_role_is_refused(store: SessionStore, workspace: Path) -> None:
    info = store.create_session(workspace, "coding", "m")
    with pytest.raises(ValueError, match="unknown transcript role"):
        store.append_event(info.id, "narrator", "x")  # type: ignore[arg-type]
    assert store.load(info.id, workspace, "coding").events == []


def test_writes_to_a_missing_session_or_event_are_not_found(store: SessionStore) -> None:
    with pytest.raises(SessionNotFoundError):
        store.append_event("1_10000", "assistant", "x")
    with pytest.raises(SessionNotFoundError):
        store.record_user_message("1_10000", "x")
    with pytest.raises(SessionNotFoundError):
        store.replace_messages("1_10000", [])
    with pytest.raises(EventNotFoundError):
        store.update_event(999, text="x")


def test_replace_and_append_messages(store: SessionStore, workspace: Path) -> None:
    info = store.create_session(workspace, "coding", "m")
    store.append_messages(info.id, [{"role": "user", "content": "a"}])
    store.append_messages(info.id, [{"role": "assistant", "content": "b"}])
    assert [m["content"] for m in store.load(info.id, workspace, "coding").messages] == ["a", "b"]
    store.replace_messages(info.id, [{"role": "user", "content": "c"}])
    assert store.load(info.id, workspace, "coding").messages == [{"role": "user", "content": "c"}]


def test_messages_that_are_not_json_are_refused_before_anything_is_written(
    store: SessionStore, workspace: Path
) -> None:
    info = store.create_session(workspace, "coding", "m")
    store.replace_messages(info.id, [{"role": "user", "content": "kept"}])
    with pytest.raises(ValueError, match="JSON"):
        store.replace_messages(info.id, [{"content": float("nan")}])
    with pytest.raises(TypeError, match="JSON"):
        store.append_messages(info.id, [{"content": object()}])
    with pytest.raises(TypeError, match="dict"):
        store.append_messages(info.id, ["not a dict"])  # type: ignore[list-item]
    assert store.load(info.id, workspace, "coding").messages == [
        {"role": "user", "content": "kept"}
    ]


def test_set_model_is_saved(store: SessionStore, workspace: Path) -> None:
    info = store.create_session(workspace, "coding", "qwen3-coder")
    store.set_model(info.id, "llama3.2")
    assert store.load(info.id, workspace, "coding").info.model == "llama3.2"


any_text = st.text(st.characters(codec=None, exclude_categories=[]), max_size=200)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | any_text,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(any_text, children, max_size=5)
    ),
    max_leaves=20,
)
json_objects = st.dictionaries(any_text, json_values, max_size=6)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    model=any_text,
    messages=st.lists(json_objects, max_size=6),
    typed=st.lists(any_text, max_size=4),
    events=st.lists(st.tuples(st.sampled_from(EVENT_ROLES), any_text, json_objects), max_size=6),
)
def test_reload_gives_back_exactly_what_was_saved(
    home: Path,
    workspace: Path,
    *,
    model: str,
    messages: list[dict[str, Any]],
    typed: list[str],
    events: list[tuple[Any, str, dict[str, Any]]],
) -> None:
    with SessionStore(home) as store:
        info = store.create_session(workspace, "coding", model)
        store.replace_messages(info.id, messages)
        for text in typed:
            store.record_user_message(info.id, text)
        ids = [store.append_event(info.id, role, text, meta) for role, text, meta in events]
        first = store.load(info.id, workspace, "coding")
    with SessionStore(home) as reopened:
        again = reopened.load(info.id, workspace, "coding")
    assert again == first
    assert again.info.model == model
    assert again.messages == messages
    assert again.user_ledger == typed
    saved = [(e.role, e.text, e.metadata) for e in again.events if e.id in ids]
    assert saved == [(role, text, meta) for role, text, meta in events]


def test_big_and_deep_metadata_round_trips(store: SessionStore, workspace: Path) -> None:
    info = store.create_session(workspace, "coding", "m")
    deep: dict[str, Any] = {"leaf": "\x00\u2028\ud800end"}
    for level in range(200):
        deep = {f"level{level}": deep, "list": [level, -0.0, 1e308, None, True]}
    big = {"output": "line\r\n" * 200_000, "deep": deep}
    event_id = store.append_event(info.id, "tool", "big", big)
    (event,) = store.load(info.id, workspace, "coding").events
    assert event.id == event_id
    assert event.metadata == big


def test_workspace_with_undecodable_bytes_round_trips(store: SessionStore, tmp_path: Path) -> None:
    odd = tmp_path / "caf\udce9"  # a directory named with the Latin-1 byte 0xE9
    odd.mkdir()
    info = store.create_session(odd, "coding", "m")
    assert [s.id for s in store.list_sessions(odd, "coding")] == [info.id]
    assert store.load(info.id, odd, "coding").info.workspace == str(odd.resolve())


# -- empty-session reuse ----------------------------------------------------------------


def test_starting_reuses_the_newest_empty_session(
    store: SessionStore, workspace: Path, clock: FakeClock
) -> None:
    older_empty = store.create_session(workspace, "coding", "m")
    clock.advance()
    newer_empty = store.create_session(workspace, "coding", "m")
    clock.advance()
    used = store.create_session(workspace, "coding", "m")
    store.record_user_message(used.id, "hi")
    reused = store.reuse_or_create(workspace, "coding", "other-model")
    assert reused.id == newer_empty.id
    assert reused.model == "other-model"
    assert {s.id for s in store.list_sessions(workspace, "coding")} == {
        older_empty.id,
        newer_empty.id,
        used.id,
    }


@pytest.mark.parametrize(
    "fill",
    [
        lambda s, sid: s.append_event(sid, "relay", "hello from a peer"),
        lambda s, sid: s.append_messages(sid, [{"role": "user", "content": "context"}]),
        lambda s, sid: s.record_user_message(sid, "typed"),
    ],
    ids=["event", "message", "user-message"],
)
def test_a_session_with_anything_in_it_is_not_reused(
    store: SessionStore, workspace: Path, fill: Any
) -> None:
    first = store.create_session(workspace, "coding", "m")
    fill(store, first.id)
    second = store.reuse_or_create(workspace, "coding", "m")
    assert second.id != first.id
    assert store.reuse_or_create(workspace, "coding", "m").id == second.id


def test_reuse_stays_within_scope(store: SessionStore, workspace: Path, tmp_path: Path) -> None:
    empty_sysadmin = store.create_session(workspace, "sysadmin", "m")
    empty_elsewhere = store.create_session(tmp_path, "coding", "m")
    mine = store.reuse_or_create(workspace, "coding", "m")
    assert mine.id not in {empty_sysadmin.id, empty_elsewhere.id}


# -- interrupted tools ------------------------------------------------------------------


def test_running_tool_of_this_live_process_is_not_marked(
    store: SessionStore, workspace: Path
) -> None:
    info = store.create_session(workspace, "coding", "m")
    store.append_event(info.id, "tool", "$ sleep 9", {"status": "running"})
    assert store.mark_interrupted_tools(info.id) == 0
    (event,) = store.load(info.id, workspace, "coding").events
    assert event.metadata["status"] == "running"


def test_reload_without_running_tools_shows_the_same_transcript(
    store: SessionStore, workspace: Path
) -> None:
    info = store.create_session(workspace, "coding", "m")
    store.record_user_message(info.id, "go")
    tool = store.append_event(info.id, "tool", "$ ls", {"status": "running"})
    store.update_event(tool, metadata={"status": "failed", "exit": 2})
    store.append_event(info.id, "error", "oops", {})
    first = store.load(info.id, workspace, "coding")
    assert store.load(info.id, workspace, "coding") == first


# -- threads ----------------------------------------------------------------------------


def test_one_store_is_safe_from_several_threads(store: SessionStore, workspace: Path) -> None:
    shared = store.create_session(workspace, "coding", "m")

    def work(n: int) -> None:
        own = store.create_session(workspace, "coding", f"t{n}")
        for i in range(100):
            store.append_event(own.id, "assistant", str(i))
            store.append_event(shared.id, "assistant", f"{n}:{i}")

    with ThreadPoolExecutor(max_workers=4) as pool:
        for future in [pool.submit(work, n) for n in range(4)]:
            future.result(timeout=60)  # re-raises anything the thread raised
    events = store.load(shared.id, workspace, "coding").events
    assert sorted(e.text for e in events) == sorted(
        f"{n}:{i}" for n in range(4) for i in range(100)
    )
    assert [e.seq for e in events] == list(range(1, 401))


def test_two_stores_in_two_threads_lose_nothing(home: Path, workspace: Path) -> None:
    with SessionStore(home) as setup:
        shared = setup.create_session(workspace, "coding", "m")

    def work(n: int) -> None:
        with SessionStore(home) as own_store:
            for i in range(100):
                own_store.append_event(shared.id, "assistant", f"{n}:{i}")

    with ThreadPoolExecutor(max_workers=2) as pool:
        for future in [pool.submit(work, n) for n in range(2)]:
            future.result(timeout=60)
    with SessionStore(home) as check:
        texts = [e.text for e in check.load(shared.id, workspace, "coding").events]
    assert sorted(texts) == sorted(f"{n}:{i}" for n in range(2) for i in range(100))


def test_closed_store_says_so(home: Path, workspace: Path) -> None:
    store = SessionStore(home)
    store.close()
    store.close()
    with pytest.raises(SessionStoreError, match="closed"):
        store.list_sessions(workspace, "coding")


# -- what a session keeps besides its history -------------------------------------------


def test_session_state_is_kept_by_key_replaced_whole_and_forgotten_on_none(
    store: SessionStore, workspace: Path
) -> None:
    one = store.create_session(workspace, "coding", "m")
    two = store.create_session(workspace, "coding", "m")
    assert store.load(one.id, workspace, "coding").state == {}
    store.save_state(one.id, "plan", {"items": [{"step": "read", "status": "done"}]})
    store.save_state(one.id, "goal", {"objective": "ship ✓"})
    store.save_state(one.id, "plan", {"items": []})
    store.save_state(two.id, "plan", {"items": [{"step": "other", "status": "pending"}]})
    assert store.load(one.id, workspace, "coding").state == {
        "goal": {"objective": "ship ✓"},
        "plan": {"items": []},
    }
    store.save_state(one.id, "goal", None)
    assert store.load(one.id, workspace, "coding").state == {"plan": {"items": []}}
    assert store.load(two.id, workspace, "coding").state["plan"]["items"][0]["step"] == "other"
