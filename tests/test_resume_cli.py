"""``--resume`` on the command line: unknown and ambiguous ids exit 2 before anything starts,
a unique prefix is enough, the session's model comes back, and ``--prompt`` respects the
lock of a session open in another zcoder. The real program in a subprocess (or a pty)."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import pexpect
import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.sessions.test_locks import start_holder, stop
from tests.test_oneshot import Env, make_env, prompt, sessions
from zcoder.sessions import SessionStore

ALT_SCREEN = "\x1b[?1049h"


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


def saved(env: Env, title: str, model: str = "qwen3-coder", *, at: float | None = None) -> str:
    """A session with one exchange, made through the store (``at``: its creation time)."""
    clock = time.time if at is None else (lambda: at)
    with SessionStore(env.home, clock=clock) as store:
        info = store.create_session(env.workspace, "coding", model)
        store.record_user_message(info.id, title)
        store.append_event(info.id, "assistant", f"answer to {title}")
        store.replace_messages(
            info.id,
            [{"role": "user", "content": title}, {"role": "assistant", "content": "ok"}],
        )
        return info.id


def test_prompt_with_an_unknown_id_exits_2_listing_recent_ids(env: Env, fake: FakeOllama) -> None:
    known = saved(env, "fix the parser")
    done = prompt(env, fake, "hi", "--resume", "42")
    assert done.returncode == 2
    assert f"zcoder: no session '42' in this workspace ({env.workspace}, profile coding)" in (
        done.stderr
    )
    listed = [line.split() for line in done.stderr.splitlines() if line.startswith("  ")]
    assert listed[0][0] == known and "parser" in listed[0]
    assert fake.requests == []  # nothing was asked of the model
    assert done.stdout == ""


def test_an_ambiguous_prefix_exits_2_listing_the_candidates(env: Env, fake: FakeOllama) -> None:
    one = saved(env, "first", at=1_788_012_120.0)
    two = saved(env, "second", at=1_788_012_120.0)
    done = prompt(env, fake, "hi", "--resume", "1788012120")
    assert done.returncode == 2
    assert "'1788012120' names 2 sessions" in done.stderr
    assert one in done.stderr and two in done.stderr
    assert fake.requests == []


def test_a_unique_prefix_resumes_the_session(env: Env, fake: FakeOllama) -> None:
    saved(env, "old", at=1_700_000_000.0)
    wanted = saved(env, "the one", at=1_788_012_120.0)
    fake.enqueue(Turn.text("again"))
    done = prompt(env, fake, "more", "--resume", "17880")
    assert done.returncode == 0, done.stderr
    [body] = fake.chat_bodies
    assert [m["content"] for m in body["messages"][1:]] == ["the one", "ok", "more"]
    data = next(d for d in sessions(env) if d.info.id == wanted)
    assert data.user_ledger == ["the one", "more"]


def test_the_interactive_ui_with_an_unknown_id_exits_2_before_it_starts(
    env: Env, fake: FakeOllama
) -> None:
    known = saved(env, "something saved")
    host = f"127.0.0.1:{fake.port}"
    child = pexpect.spawn(
        sys.executable,
        ["-m", "zcoder", "--host", host, "--resume", "nope"],
        env=env.vars,
        cwd=str(env.workspace),
        encoding="utf-8",
        timeout=15,
    )
    child.expect(pexpect.EOF)
    child.close()
    output = child.before or ""
    assert child.exitstatus == 2
    assert "no session 'nope'" in output and known in output
    assert ALT_SCREEN not in output  # the full-screen UI never started
    assert fake.requests == []


def test_resuming_with_prompt_uses_the_sessions_model_unless_m_is_given(
    env: Env, fake: FakeOllama
) -> None:
    session = saved(env, "with llama", model="llama3.2")
    fake.enqueue(Turn.text("one"), Turn.text("two"))
    done = prompt(env, fake, "go on", "--resume", session)
    assert done.returncode == 0, done.stderr
    assert fake.chat_bodies[0]["model"] == "llama3.2"
    assert "Model: llama3.2 (this session's model; it was qwen3-coder)" in done.stderr
    forced = prompt(env, fake, "and on", "--resume", session, "-m", "qwen3-coder")
    assert forced.returncode == 0, forced.stderr
    assert fake.chat_bodies[1]["model"] == "qwen3-coder"
    (data,) = sessions(env)
    assert data.info.model == "qwen3-coder"  # the session now remembers the model used


def test_resuming_a_model_the_server_lacks_says_so_and_keeps_the_current(
    env: Env, fake: FakeOllama
) -> None:
    session = saved(env, "old model", model="gone-model")
    fake.enqueue(Turn.text("fine"))
    done = prompt(env, fake, "go on", "--resume", session)
    assert done.returncode == 0, done.stderr
    assert "gone-model, which the server does not list; keeping qwen3-coder" in done.stderr
    assert fake.chat_bodies[0]["model"] == "qwen3-coder"


def test_prompt_refuses_a_session_open_in_another_zcoder(env: Env, fake: FakeOllama) -> None:
    session = saved(env, "busy elsewhere")
    holder = start_holder(env.home, session)
    try:
        done = prompt(env, fake, "hi", "--resume", session)
        assert done.returncode == 1
        assert f"session {session} is open in another zcoder (pid {holder.pid})" in done.stderr
        assert fake.chat_bodies == []
    finally:
        stop(holder, signal.SIGKILL)
    fake.enqueue(Turn.text("now it works"))
    again = prompt(env, fake, "hi", "--resume", session)  # the crash freed the lock
    assert again.returncode == 0, again.stderr


def test_prompt_does_not_take_the_fresh_session_another_zcoder_has(
    env: Env, fake: FakeOllama
) -> None:
    with SessionStore(env.home) as store:
        fresh = store.create_session(env.workspace, "coding", "qwen3-coder")
    holder = start_holder(env.home, fresh.id)
    try:
        fake.enqueue(Turn.text("hello"))
        done = prompt(env, fake, "hi")
        assert done.returncode == 0, done.stderr
        assert f"session {fresh.id} is open in another zcoder (pid {holder.pid})" in done.stderr
    finally:
        stop(holder, signal.SIGTERM)
    by_id = {d.info.id: d for d in sessions(env)}
    assert by_id[fresh.id].user_ledger == []  # untouched
    assert [d.user_ledger for i, d in by_id.items() if i != fresh.id] == [["hi"]]
