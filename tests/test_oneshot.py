"""``zcoder --prompt`` end to end: the real program in a subprocess, the fake Ollama over
HTTP, a private ZCODER_HOME, and no terminal (unless a test gives it a pty)."""

from __future__ import annotations

import os
import select
import signal
import socket
import stat
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pexpect
import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from zcoder.model.errors import OTHER_WAYS_TO_A_MODEL
from zcoder.sessions import SessionStore

RUN_TIMEOUT = 20.0


@dataclass
class Env:
    home: Path
    workspace: Path
    vars: dict[str, str]


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)


def make_env(tmp_path: Path) -> Env:
    """A private home, runtime, registry and workspace (alpha.txt, beta.py) for zcoder."""
    home = tmp_path / "zhome"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "alpha.txt").write_text("alpha\n")
    (workspace / "beta.py").write_text("print('beta')\n")
    private = {name: tmp_path / name for name in ("xdg", "runtime", "relay", "tmp", "user")}
    for path in private.values():
        path.mkdir(mode=0o700)
    variables = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ZCODER_", "OLLAMA_", "XDG_"))
    }
    variables.update(
        ZCODER_HOME=str(home),
        XDG_CONFIG_HOME=str(private["xdg"]),
        XDG_RUNTIME_DIR=str(private["runtime"]),
        ZCODER_RELAY_DIR=str(private["relay"]),
        TMPDIR=str(private["tmp"]),
        HOME=str(private["user"]),
        ZCODER_MODEL="qwen3-coder",
    )
    return Env(home, workspace.resolve(), variables)


def argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "zcoder", *args]


def zcoder(
    env: Env, *args: str, variables: dict[str, str] | None = None, timeout: float = RUN_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """Run zcoder with no terminal at all: stdin closed, no controlling tty; in env.workspace,
    with env.vars unless told other ``variables``."""
    return subprocess.run(
        argv(*args), check=False, text=True, **_no_terminal(env, variables, timeout)
    )


def zcoder_bytes(env: Env, *args: str) -> subprocess.CompletedProcess[bytes]:
    """:func:`zcoder`, its output kept as the bytes it wrote (no decoding, no newline
    translation): for tests of what reaches a terminal or a pipe."""
    return subprocess.run(argv(*args), check=False, **_no_terminal(env))


def _no_terminal(
    env: Env, variables: dict[str, str] | None = None, timeout: float = RUN_TIMEOUT
) -> dict[str, Any]:
    """subprocess.run's arguments for :func:`zcoder` and :func:`zcoder_bytes`."""
    return {
        "env": env.vars if variables is None else variables,
        "cwd": env.workspace,
        "stdin": subprocess.DEVNULL,
        "capture_output": True,
        "timeout": timeout,
        "start_new_session": True,
    }


def prompt(env: Env, server: FakeOllama, text: str, *extra: str):
    host = f"127.0.0.1:{server.port}"
    return zcoder(env, "--prompt", text, "--host", host, "-w", str(env.workspace), *extra)


def start_hi(env: Env, host: str) -> subprocess.Popen[bytes]:
    """zcoder --prompt hi against ``host``, left running with no terminal, its output piped."""
    return subprocess.Popen(
        argv("--prompt", "hi", "--host", host, "-w", str(env.workspace)),
        env=env.vars,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def sessions(env: Env, profile: str = "coding"):
    with SessionStore(env.home) as store:
        infos = store.list_sessions(env.workspace, profile)
        return [store.load(info.id, env.workspace, profile) for info in infos]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_list_the_files_here_lists_them_and_saves_the_session(env: Env) -> None:
    with FakeOllama(demo=True) as server:  # the demo brain calls list_files, then echoes it
        done = prompt(env, server, "list the files here")

    assert done.returncode == 0, done.stderr
    assert "alpha.txt" in done.stdout and "beta.py" in done.stdout
    assert "[tool] list_files(path='.')" in done.stderr
    assert "[tool] list_files: completed" in done.stderr
    assert "Traceback" not in done.stderr
    (data,) = sessions(env)
    assert data.info.title == "list the files here"
    assert data.user_ledger == ["list the files here"]
    assert [e.role for e in data.events] == ["user", "tool", "assistant"]
    assert data.events[1].metadata["status"] == "completed"
    assert [m["role"] for m in data.messages] == ["user", "assistant", "tool", "assistant"]
    assert stat.S_IMODE(env.home.stat().st_mode) == 0o700


def test_ollama_down_says_where_and_how_to_start_it(env: Env) -> None:
    port = free_port()
    done = zcoder(env, "--prompt", "hi", "--host", f"127.0.0.1:{port}", "-w", str(env.workspace))

    assert done.returncode == 1
    expected = f"Ollama is not reachable at http://127.0.0.1:{port}; start it with `ollama serve`"
    assert f"zcoder: {expected}{OTHER_WAYS_TO_A_MODEL}\n" in done.stderr
    assert done.stderr.count("start it with `ollama serve`") == 1  # said once (issue 27)
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_a_missing_model_says_how_to_pull_it(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(Turn.http_error(404))
    done = prompt(env, fake, "hi", "-m", "x")

    assert done.returncode == 1
    assert "zcoder: model 'x' not found; run `ollama pull x`\n" in done.stderr
    assert fake.chat_bodies[0]["model"] == "x"
    assert "Traceback" not in done.stderr


def test_without_a_terminal_a_command_is_denied_and_the_model_told(
    env: Env, fake: FakeOllama
) -> None:
    fake.enqueue(
        Turn.tool_calls(call("run_command", {"command": "touch ran.txt"}, id="c1")),
        Turn.text("I could not run it."),
    )
    done = prompt(env, fake, "touch a file")

    assert done.returncode == 0, done.stderr
    assert not (env.workspace / "ran.txt").exists()
    result = fake.chat_bodies[1]["messages"][-1]
    assert result["tool_call_id"] == "c1"
    assert result["content"].startswith("Error: the command was not run")
    assert "no terminal to ask" in result["content"]
    assert "no terminal to ask for approval; the command was denied" in done.stderr
    assert "[tool] run_command: failed" in done.stderr
    assert "I could not run it." in done.stdout


def test_yes_runs_commands_without_asking(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(
        Turn.tool_calls(call("run_command", {"command": "touch ran.txt; echo made"})),
        Turn.tool_calls(call("finish", {"status": "complete", "response": "Made ran.txt."})),
    )
    done = prompt(env, fake, "touch a file", "--yes")

    assert done.returncode == 0, done.stderr
    assert (env.workspace / "ran.txt").exists()
    assert fake.chat_bodies[1]["messages"][-1]["content"] == "made\n[exit code 0]"
    assert done.stdout.strip() == "Made ran.txt."


def test_deny_commands_refuses_without_asking(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(
        Turn.tool_calls(call("run_command", {"command": "touch ran.txt"})), Turn.text("ok")
    )
    done = prompt(env, fake, "touch", "--deny-commands")
    assert done.returncode == 0
    assert not (env.workspace / "ran.txt").exists()
    assert "--deny-commands" in fake.chat_bodies[1]["messages"][-1]["content"]


def test_blocked_exits_1_with_the_response_on_stdout(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(Turn.tool_calls(call("finish", {"status": "blocked", "response": "Need a key."})))
    done = prompt(env, fake, "deploy")
    assert done.returncode == 1
    assert done.stdout == "Need a key.\n"
    assert "blocked" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--yes", "--profile", "sysadmin"), "cannot be used with the sysadmin profile"),
        (("-w", "/nonexistent/zcoder-test-dir"), "is not a directory"),
        (("--prompt", "   "), "--prompt needs some text"),
    ],
)
def test_usage_errors_exit_2_before_any_request(
    env: Env, fake: FakeOllama, args: tuple[str, ...], message: str
) -> None:
    base = ("--prompt", "hi") if "--prompt" not in args else ()
    done = zcoder(env, *base, "--host", f"127.0.0.1:{fake.port}", *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert fake.requests == []


def test_sysadmin_refuses_allow_policy_from_the_environment_too(env: Env, fake: FakeOllama) -> None:
    env.vars["ZCODER_COMMAND_POLICY"] = "allow"
    done = prompt(env, fake, "hi", "--profile", "sysadmin")
    assert done.returncode == 2
    assert "sysadmin" in done.stderr


def read_until(stream: IO[bytes], marker: bytes, timeout: float) -> bytes:
    """Read a pipe as bytes arrive until ``marker`` was seen (or the deadline passed)."""
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], 0.05)
        if ready:
            chunk = os.read(stream.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
    return seen


def test_a_reader_that_goes_away_stops_the_run_quietly(env: Env, fake: FakeOllama) -> None:
    """``zcoder --prompt ... | head``: once the pipe's reader has gone, the turn stops, as
    a pipe's writer does (exit 141, 128 + SIGPIPE), with no traceback; the session keeps
    what was said. Before, every later piece of the reply printed a BrokenPipeError."""
    fake.enqueue(Turn.text(" ".join(f"word{n}" for n in range(2000)), delay=0.005))
    with start_hi(env, f"127.0.0.1:{fake.port}") as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert b"word3 " in read_until(proc.stdout, b"word3 ", RUN_TIMEOUT)
        proc.stdout.close()  # the reader goes away mid-reply
        err = proc.stderr.read().decode()
        proc.wait(timeout=RUN_TIMEOUT)
    assert proc.returncode == 141, err
    assert "Traceback" not in err and "Broken pipe" not in err, err
    (data,) = sessions(env)
    assert data.user_ledger == ["hi"]
    assert [(e.role, e.metadata.get("partial")) for e in data.events] == [
        ("user", None),
        ("assistant", True),
        ("system", None),  # the stop, as Ctrl+C's
    ]


def test_sigint_during_a_stall_exits_130_and_saves_the_stop(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(Turn.stall(before="Thinking about "))
    with start_hi(env, f"127.0.0.1:{fake.port}") as proc:
        assert proc.stdout is not None
        shown = read_until(proc.stdout, b"Thinking about ", RUN_TIMEOUT)
        assert shown == b"Thinking about ", "the partial reply never streamed"
        proc.send_signal(signal.SIGINT)
        rest, err_bytes = proc.communicate(timeout=RUN_TIMEOUT)
    err = err_bytes.decode()

    assert proc.returncode == 130, err
    assert fake.wait_for_disconnect(5.0)
    assert "interrupted" in err
    assert "Traceback" not in err
    assert (shown + rest).decode() == "Thinking about \n"
    (data,) = sessions(env)
    assert data.user_ledger == ["hi"]
    assert [(e.role, e.metadata.get("partial")) for e in data.events] == [
        ("user", None),
        ("assistant", True),
        ("system", None),
    ]
    assert data.messages == [{"role": "user", "content": "hi"}]


def test_resume_continues_a_saved_session(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(Turn.text("first answer"), Turn.text("second answer"))
    assert prompt(env, fake, "first").returncode == 0
    (data,) = sessions(env)
    done = prompt(env, fake, "second", "--resume", data.info.id)
    assert done.returncode == 0, done.stderr
    sent = fake.chat_bodies[1]["messages"]
    assert [m["content"] for m in sent[1:]] == ["first", "first answer", "second"]
    missing = prompt(env, fake, "third", "--resume", "no-such-session")
    assert missing.returncode == 2  # a usage error (tests/test_resume_cli.py has the rest)
    assert "no session 'no-such-session'" in missing.stderr


def test_print_instructions_prints_the_chain_nearest_last(env: Env, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    workspace = repo / "sub" / "ws"
    workspace.mkdir(parents=True)
    (repo / ".git").mkdir()
    env.home.mkdir()
    (env.home / "AGENTS.md").write_text("HOME-RULE\n")
    (repo / "AGENTS.md").write_text("ROOT-RULE\n")
    (workspace / "AGENTS.md").write_text("WS-RULE\n")
    done = zcoder(env, "--print-instructions", "-w", str(workspace))

    assert done.returncode == 0, done.stderr
    out = done.stdout
    positions = [out.index(rule) for rule in ("HOME-RULE", "ROOT-RULE", "WS-RULE")]
    assert positions == sorted(positions)
    assert f"## From {env.home / 'AGENTS.md'}" in out
    assert f"## From {workspace.resolve() / 'AGENTS.md'}" in out


def test_interactive_mode_without_a_terminal_points_to_prompt(env: Env) -> None:
    done = zcoder(env, "-w", str(env.workspace))
    assert done.returncode == 2
    assert "--prompt" in done.stderr
    assert "terminal" in done.stderr


def spawn_in_pty(env: Env, fake: FakeOllama, text: str) -> pexpect.spawn:
    host = f"127.0.0.1:{fake.port}"
    args = ["-m", "zcoder", "--prompt", text, "--host", host, "-w", str(env.workspace)]
    return pexpect.spawn(
        sys.executable, args, env=env.vars, cwd=str(env.workspace), encoding="utf-8", timeout=10
    )


def test_with_a_terminal_the_command_is_asked_and_y_runs_it(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(
        Turn.tool_calls(call("run_command", {"command": "touch ran.txt"})), Turn.text("ran")
    )
    child = spawn_in_pty(env, fake, "touch it")
    child.expect_exact("$ touch ran.txt")
    child.expect_exact("[y]es once, [a]llow all, [n]o: ")
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (env.workspace / "ran.txt").exists()


def test_ctrl_c_at_the_approval_prompt_exits_130_at_once(env: Env, fake: FakeOllama) -> None:
    fake.enqueue(Turn.tool_calls(call("run_command", {"command": "touch ran.txt"})))
    child = spawn_in_pty(env, fake, "touch it")
    child.expect_exact("[y]es once, [a]llow all, [n]o: ")
    started = time.monotonic()
    child.sendintr()
    child.expect(pexpect.EOF, timeout=5)
    child.close()
    assert child.exitstatus == 130
    assert time.monotonic() - started < 5
    assert not (env.workspace / "ran.txt").exists()


def test_an_internal_error_is_one_clear_line_not_a_traceback(tmp_path, monkeypatch, capsys):
    from zcoder.config import load_config
    from zcoder.oneshot import run as oneshot

    async def broken(*_args, **_kwargs):
        raise RuntimeError("something we did not foresee")

    monkeypatch.setattr(oneshot, "_run", broken)
    config = load_config({"ZCODER_HOME": str(tmp_path / "home")}, workspace=str(tmp_path))
    assert oneshot.run_prompt(config, "hi") == 1
    err = capsys.readouterr().err
    assert err.strip() == "zcoder: internal error: RuntimeError: something we did not foresee"
    assert "Traceback" not in err


def test_a_cut_off_answer_is_reported_with_the_setting_that_raises_it(
    env: Env, fake: FakeOllama
) -> None:
    fake.enqueue(Turn.text("The first half of the answer", done_reason="length", eval_count=64))
    done = prompt(env, fake, "explain everything")

    assert done.returncode == 1
    assert "The first half of the answer" in done.stdout
    assert "reply was cut off at the output limit" in done.stderr
    assert "ZCODER_MAX_OUTPUT_TOKENS" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_prompt_runs_session_is_marked_one_shot(env: Env, fake: FakeOllama) -> None:
    """Issue 18 item 16: --prompt sessions are marked, so the interactive list can hide
    them; a run that reuses an empty interactive session marks it too."""
    with SessionStore(env.home) as store:
        empty = store.create_session(env.workspace, "coding", "qwen3-coder")
    fake.enqueue(Turn.text("here"))
    done = prompt(env, fake, "oa list")
    assert done.returncode == 0, done.stderr
    (data,) = sessions(env)
    assert data.info.id == empty.id and data.info.one_shot
    assert data.info.title == "oa list"


def test_a_prompt_run_stopped_before_its_prompt_was_recorded_keeps_no_session(
    env: Env,
) -> None:
    """A server that accepts the connection and never answers: zcoder waits on its first
    request (the model's window) with the session already taken. Stopped there, the
    session holds nothing and is not kept as an empty, untitled one."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        with start_hi(env, f"127.0.0.1:{silent.getsockname()[1]}") as proc:
            silent.settimeout(RUN_TIMEOUT)
            connection, _ = silent.accept()  # zcoder is waiting for an answer now
            with connection:
                proc.send_signal(signal.SIGINT)
                _out, err = proc.communicate(timeout=RUN_TIMEOUT)
    assert proc.returncode == 130, err
    assert sessions(env) == []
