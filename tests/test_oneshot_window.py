"""``zcoder --prompt`` sizes the context window: the real program in a subprocess, the fake
Ollama over HTTP, a private ZCODER_HOME (fixtures of tests/test_oneshot.py)."""

from __future__ import annotations

import json

from tests import test_oneshot
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.test_oneshot import Env, prompt

env = test_oneshot.env


def test_every_request_carries_the_window_from_ollama(env: Env, fake: FakeOllama) -> None:
    fake.context_lengths["qwen3-coder"] = 262144
    fake.enqueue(Turn.tool_calls(call("list_files", {"path": "."})), Turn.text("Two files."))
    done = prompt(env, fake, "list the files")
    assert done.returncode == 0, done.stderr
    assert len(fake.chat_bodies) == 2
    assert [body["options"]["num_ctx"] for body in fake.chat_bodies] == [32768, 32768]
    assert "keep_alive" not in fake.chat_bodies[0]  # Ollama's own default unless set
    assert fake.loads == {"qwen3-coder:latest": 1}
    assert "context window" not in done.stderr  # Ollama allocated what was asked


def test_the_flag_wins_and_keep_alive_is_sent(env: Env, fake: FakeOllama) -> None:
    env.vars.update(ZCODER_CONTEXT_WINDOW="20000", ZCODER_KEEP_ALIVE="1h")
    fake.enqueue(Turn.text("ok"))
    done = prompt(env, fake, "hi", "--context-window", "12k")
    assert done.returncode == 0, done.stderr
    [body] = fake.chat_bodies
    assert (body["options"]["num_ctx"], body["keep_alive"]) == (12288, "1h")


def test_a_model_entry_of_settings_json_is_used(env: Env, fake: FakeOllama) -> None:
    env.home.mkdir(mode=0o700, parents=True, exist_ok=True)
    settings = {"context_window": 9000, "models": {"qwen3-coder": {"context_window": 24576}}}
    (env.home / "settings.json").write_text(json.dumps(settings))
    fake.enqueue(Turn.text("ok"))
    done = prompt(env, fake, "hi")
    assert done.returncode == 0, done.stderr
    assert fake.chat_bodies[0]["options"]["num_ctx"] == 24576


def test_a_broken_settings_file_is_a_warning_on_stderr(env: Env, fake: FakeOllama) -> None:
    env.home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (env.home / "settings.json").write_text('{"context_window": ')
    fake.enqueue(Turn.text("ok"))
    done = prompt(env, fake, "hi")
    assert done.returncode == 0, done.stderr
    assert f"[zcoder] {env.home / 'settings.json'} is ignored: it is not valid JSON" in done.stderr
    assert done.stdout.strip() == "ok"
    assert fake.chat_bodies[0]["options"]["num_ctx"] == 32768  # the trained length, capped


def test_an_allocation_other_than_asked_is_reported_on_stderr(env: Env, fake: FakeOllama) -> None:
    fake.allocations["qwen3-coder"] = 4096
    fake.enqueue(Turn.text("ok"))
    done = prompt(env, fake, "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    expected = "Ollama loaded qwen3-coder with a 4096-token context window, not the 32768"
    assert done.stderr.count(expected) == 1
    assert "--context-window 4096" in done.stderr


def test_a_bad_window_is_a_usage_error(env: Env, fake: FakeOllama) -> None:
    done = prompt(env, fake, "hi", "--context-window", "tiny")
    assert done.returncode == 2
    assert "--context-window must be a whole number of tokens" in done.stderr
    assert fake.requests == []
