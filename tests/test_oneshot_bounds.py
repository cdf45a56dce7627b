"""``zcoder --prompt`` against servers that misbehave or say little, end to end: the real
program in a subprocess, the fake servers over HTTP, a private ZCODER_HOME."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.fixtures.fake_openai import FakeOpenAI
from tests.test_oneshot import RUN_TIMEOUT, Env, argv, make_env


@pytest.fixture
def env(tmp_path) -> Env:
    return make_env(tmp_path)


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


def run(
    env: Env, *args: str, stdin: bytes | None = None, server: FakeOllama | None = None
) -> subprocess.CompletedProcess[bytes]:
    """zcoder with ``stdin`` piped in (None: no stdin at all, /dev/null)."""
    host = ("--host", f"127.0.0.1:{server.port}") if server is not None else ()
    return subprocess.run(
        argv("-w", str(env.workspace), *host, *args),
        env=env.vars,
        cwd=env.workspace,
        input=stdin if stdin is not None else None,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        timeout=RUN_TIMEOUT,
        start_new_session=True,
        check=False,
    )


# -- a server that never finishes (item 5) ------------------------------------------------


def test_keep_alives_forever_end_at_the_idle_deadline(env: Env, fake: FakeOllama) -> None:
    env.vars["ZCODER_IDLE_TIMEOUT"] = "0.5"
    fake.enqueue(Turn.keepalive(before="Thinking about it"))
    done = run(env, "--prompt", "hi", server=fake)
    assert done.returncode == 1
    assert b"no new output for 0.5 seconds" in done.stderr
    assert b"ZCODER_IDLE_TIMEOUT" in done.stderr
    assert b"Traceback" not in done.stderr


def test_endless_content_stops_at_the_output_cap(env: Env) -> None:
    env.vars["ZCODER_MAX_REPLY_CHARS"] = "300"
    with FakeOpenAI() as server:
        server.enqueue(Turn.endless())
        done = run(env, "--prompt", "hi", "--base-url", server.base_url)
    assert done.returncode == 1
    assert b"passed 300 characters without ending" in done.stderr
    assert len(done.stdout) <= 300 + 20


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ZCODER_IDLE_TIMEOUT", "soon"),
        ("ZCODER_IDLE_TIMEOUT", "0"),
        ("ZCODER_MAX_REPLY_CHARS", "-5"),
    ],
)
def test_bad_bounds_are_usage_errors(env: Env, fake: FakeOllama, name: str, value: str) -> None:
    env.vars[name] = value
    done = run(env, "--prompt", "hi", server=fake)
    assert done.returncode == 2
    assert name.encode() in done.stderr
    assert fake.chat_bodies == []


# -- a chat template that drops tools (item 17) -------------------------------------------


def test_a_template_without_tools_is_warned_about_on_stderr_once(env: Env) -> None:
    with FakeOpenAI(supports_tools=False) as server:
        server.enqueue(Turn.text("I have no tools."))
        done = run(env, "--prompt", "read alpha.txt", "--base-url", server.base_url)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"I have no tools.\n"
    assert done.stderr.count(b"cannot take tools") == 1
    assert b"--jinja --chat-template-file" in done.stderr


# -- a tool call written as text (item 20) ------------------------------------------------


def test_a_call_written_as_text_never_reaches_stdout(env: Env, fake: FakeOllama) -> None:
    call_text = '{"name": "read_file", "arguments": {"path": "alpha.txt"}}'
    fake.enqueue(
        Turn.text(f"I will read it.\n\n{call_text}\n"),  # qwen2.5-coder's habit
        Turn.text("alpha.txt says alpha."),
    )
    done = run(env, "--prompt", "what does alpha say?", server=fake)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"I will read it.\nalpha.txt says alpha.\n"
    assert b"[tool] read_file(path='alpha.txt')" in done.stderr
    assert fake.chat_bodies[1]["messages"][-1]["content"] == "alpha\n"
