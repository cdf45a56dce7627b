"""``zcoder --prompt`` against servers that misbehave or say little, end to end: the real
program in a subprocess, the fake servers over HTTP, a private ZCODER_HOME."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.fixtures.fake_openai import FakeOpenAI
from tests.test_oneshot import RUN_TIMEOUT, Env, argv, make_env
from zcoder.oneshot.input import STDIN_LIMIT


@pytest.fixture
def env(tmp_path) -> Env:
    return make_env(tmp_path)


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


def test_an_endless_line_stops_at_the_line_cap_with_what_came_before_printed(
    env: Env, fake: FakeOllama
) -> None:
    """Issue 27 item 5: one line without end, on the command line's front end."""
    env.vars["ZCODER_MAX_LINE_BYTES"] = str(256 * 1024)
    fake.enqueue(Turn.endless_line(before="Here is the start"))
    done = run(env, "--prompt", "hi", server=fake)
    assert done.returncode == 1
    assert b"sent a line longer than 256 KiB without ending it" in done.stderr
    assert b"ZCODER_MAX_LINE_BYTES" in done.stderr
    assert b"Here is the start" in done.stdout
    assert b"Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ZCODER_IDLE_TIMEOUT", "soon"),
        ("ZCODER_IDLE_TIMEOUT", "0"),
        ("ZCODER_MAX_REPLY_CHARS", "-5"),
        ("ZCODER_MAX_LINE_BYTES", "4MB"),
        ("ZCODER_MAX_REPLY_BYTES", "0"),
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


# -- standard input and JSON output (item 10) ---------------------------------------------


def user_text(server: FakeOllama) -> str:
    (body,) = server.chat_bodies
    return str(body["messages"][-1]["content"])


def test_piped_input_goes_to_the_model_after_the_prompt(env: Env, fake: FakeOllama) -> None:
    log = b"ERROR disk full\nWARN retrying\n"
    fake.enqueue(Turn.text("The disk is full."))
    done = run(env, "--prompt", "explain this log", stdin=log, server=fake)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"The disk is full.\n"
    assert user_text(fake) == (
        f"explain this log\n\nstandard input ({len(log)} bytes):\n```\n"
        "ERROR disk full\nWARN retrying\n```"
    )


def test_long_input_is_cut_and_says_where(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(Turn.text("Long."))
    data = b"x" * (STDIN_LIMIT + 5000)
    done = run(env, "--prompt", "summarise", stdin=data, server=fake)
    assert done.returncode == 0, done.stderr
    text = user_text(fake)
    assert f"standard input ({STDIN_LIMIT + 5000:,} bytes, truncated at {STDIN_LIMIT:,}):" in text
    assert text.count("x") == STDIN_LIMIT


def test_input_with_backtick_fences_keeps_its_block_whole(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(Turn.text("ok"))
    run(env, "--prompt", "review", stdin=b"```python\nprint(1)\n```\n", server=fake)
    assert user_text(fake).endswith(":\n````\n```python\nprint(1)\n```\n````")


def test_prompt_dash_reads_the_prompt_from_standard_input(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(Turn.text("Done."))
    done = run(env, "--prompt", "-", stdin=b"list the files\n", server=fake)
    assert done.returncode == 0, done.stderr
    assert user_text(fake) == "list the files\n"


def test_prompt_dash_without_input_is_a_usage_error(env: Env, fake: FakeOllama) -> None:
    done = run(env, "--prompt", "-", server=fake)  # stdin is /dev/null
    assert done.returncode == 2
    assert b"standard input" in done.stderr
    assert fake.chat_bodies == []


def test_a_terminal_on_stdin_is_not_read(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(Turn.text("Hi."))
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            argv("-w", str(env.workspace), "--host", f"127.0.0.1:{fake.port}", "-p", "hi"),
            env=env.vars,
            stdin=follower,
            capture_output=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert done.returncode == 0, done.stderr
    assert user_text(fake) == "hi"


def test_a_pipe_left_open_and_silent_is_not_waited_for_forever(
    env: Env, fake: FakeOllama, tmp_path: Path
) -> None:
    env.vars["ZCODER_STDIN_WAIT"] = "0.3"
    fake.enqueue(Turn.text("Hi."))
    out_path, err_path = tmp_path / "out", tmp_path / "err"
    with out_path.open("wb") as out_file, err_path.open("wb") as err_file:
        proc = subprocess.Popen(
            argv("-w", str(env.workspace), "--host", f"127.0.0.1:{fake.port}", "-p", "hi"),
            env=env.vars,
            stdin=subprocess.PIPE,  # never written, and closed only after zcoder ended
            stdout=out_file,
            stderr=err_file,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=RUN_TIMEOUT)
        finally:
            proc.kill()
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait()
    out, err = out_path.read_bytes(), err_path.read_bytes()
    assert proc.returncode == 0, err
    assert out == b"Hi.\n"
    assert b"standard input sent nothing for 0.3 seconds; going on without it" in err
    assert user_text(fake) == "hi"


def test_json_output_is_one_object_with_reply_tools_usage_and_status(
    env: Env, fake: FakeOllama
) -> None:
    fake.enqueue(
        Turn.tool_calls(call("read_file", {"path": "alpha.txt"}, id="call_a")),
        Turn.text("alpha.txt says alpha.", prompt_eval_count=900, eval_count=7),
    )
    done = run(env, "--prompt", "what does alpha say?", "--json", server=fake)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # the whole of stdout is one object
    assert report["reply"] == "alpha.txt says alpha."
    assert report["outcome"] == "complete" and report["exit_code"] == 0
    assert report["error"] is None
    (tool,) = report["tool_calls"]
    assert tool["id"] == "call_a" and tool["name"] == "read_file"
    assert tool["arguments"] == {"path": "alpha.txt"}
    assert tool["status"] == "completed" and tool["output"] == "alpha\n"
    assert report["usage"] == {"context_tokens": 907, "context_window": report["usage"][
        "context_window"], "measured": True}  # fmt: skip
    assert report["model"] == "qwen3-coder" and report["session_id"]
    assert b"[tool] read_file" in done.stderr  # activity still on stderr


def test_json_output_reports_a_failure_too(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(Turn.http_error(404))
    done = run(env, "--prompt", "hi", "--output-format", "json", server=fake)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["outcome"] == "error" and report["exit_code"] == 1
    assert "ollama pull qwen3-coder" in report["error"]
    assert report["reply"] == "" and report["tool_calls"] == []


def test_json_output_is_not_printed_for_a_usage_error(env: Env, fake: FakeOllama) -> None:
    done = run(env, "--prompt", "hi", "--json", "--resume", "nosuchsession", server=fake)
    assert done.returncode == 2
    assert done.stdout == b""  # a usage error: nothing ran, nothing to report
    assert b"nosuchsession" in done.stderr
