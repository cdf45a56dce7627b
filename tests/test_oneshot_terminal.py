"""Attack tests: what ``--prompt`` writes to a terminal from a prompt-injected model, a
hostile file name, a hook and a repository. The real program runs against the fake model,
in a pseudo-terminal (everything it writes arrives there, stdout and stderr alike) or with
its output piped.

On a terminal nothing raw may arrive (ESC, CR, BEL, C1, bidi, zero-width), and what it
carried is shown; to a pipe the reply is the model's exact text.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pexpect
from hypothesis import given
from hypothesis import strategies as st

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.fixtures.terminal_text import (
    BIDI,
    CLEAR,
    CSI8,
    HIDE,
    OSC52,
    ZERO_WIDTH,
    assert_nothing_raw,
    hidden_command,
)
from tests.hooks.support import entry, project_settings, script, write_settings
from tests.test_oneshot import Env, env, zcoder_bytes
from zcoder.base.sanitize import screen_safe
from zcoder.oneshot.output import ReplyWriter

__all__ = ["env"]  # the --prompt tests' fixture: a private home and workspace

RUN_TIMEOUT = 30.0
# A reply a prompt-injected model writes: OSC 52 fills the clipboard, a clear-screen, a
# carriage return that hides a line's start, an 8-bit CSI, a bidi override, a zero-width
# space; a tab and line breaks it may keep.
REPLY = (
    f"Done.\tAll good.\nrm -rf ~{HIDE}Nothing to see{OSC52}\n{CLEAR}fresh {CSI8}red "
    f"{BIDI}txet{ZERO_WIDTH} end"
)
SHOWN = (
    "Done.\tAll good.\nrm -rf ~\\r\\e[2KNothing to see\\e]52;c;cm0gLXJmIH4=\\x07\n"
    "\\e[2J\\e[Hfresh \\x9b31mred \\u202etxet\\u200b end"
)


def finish(response: str) -> Turn:
    return Turn.tool_calls(call("finish", {"status": "complete", "response": response}))


def piped(env: Env, fake: FakeOllama, text: str, *extra: str) -> subprocess.CompletedProcess[bytes]:
    """``zcoder --prompt text`` with its output piped, kept as bytes (no newline translation)."""
    host = f"127.0.0.1:{fake.port}"
    return zcoder_bytes(env, "--prompt", text, "--host", host, "-w", str(env.workspace), *extra)


def run_in_pty(env: Env, fake: FakeOllama, text: str, *extra: str) -> tuple[str, int]:
    """``zcoder --prompt text`` in a pseudo-terminal: all it wrote there (checked: nothing
    raw), and its exit status."""
    host = f"127.0.0.1:{fake.port}"
    args = ["-m", "zcoder", "--prompt", text, "--host", host, "-w", str(env.workspace), *extra]
    child = pexpect.spawn(
        sys.executable, args, env=env.vars, cwd=str(env.workspace), timeout=RUN_TIMEOUT
    )
    child.expect(pexpect.EOF)
    child.close()
    return assert_nothing_raw(child.before, pty=True), child.exitstatus


def test_a_streamed_reply_reaches_a_terminal_made_visible(env: Env) -> None:
    with FakeOllama() as fake:
        fake.enqueue(Turn.text(REPLY))
        shown, code = run_in_pty(env, fake, "hello")
    assert code == 0
    assert SHOWN in shown


def test_a_final_answer_reaches_a_terminal_made_visible(env: Env) -> None:
    """The reply of the finish tool is written whole, not streamed: the same holds."""
    with FakeOllama() as fake:
        fake.enqueue(finish(REPLY))
        shown, code = run_in_pty(env, fake, "hello")
    assert code == 0
    assert SHOWN in shown


def test_to_a_pipe_the_reply_is_the_models_exact_text(env: Env) -> None:
    with FakeOllama() as fake:
        fake.enqueue(Turn.text(REPLY))
        done = piped(env, fake, "hello")
        fake.enqueue(finish(REPLY))
        whole = piped(env, fake, "hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (REPLY + "\n").encode()
    assert whole.stdout == (REPLY + "\n").encode()


def test_a_hostile_file_name_from_list_files_is_shown_made_visible(env: Env) -> None:
    """The demo brain lists the files, then repeats the tool's output as its reply: the
    name reaches the terminal twice, in the tool's line (stderr) and in the reply."""
    (env.workspace / f"!{OSC52}{BIDI}evil.txt").write_text("x")
    with FakeOllama(demo=True) as fake:
        shown, code = run_in_pty(env, fake, "list the files here")
    assert code == 0
    name = "!\\e]52;c;cm0gLXJmIH4=\\x07\\u202eevil.txt"
    assert f"[tool] list_files: completed — {name}" in shown
    assert shown.count(name) >= 2


def test_a_hooks_system_message_is_shown_made_visible(env: Env) -> None:
    """The user's own hook (it runs unasked) relays what a tool wrote in its message."""
    said = f"lint says: ok{HIDE}{OSC52}{BIDI}"
    body = f"print(json.dumps({{'systemMessage': {said!r}}}))"
    command = script(env.home.parent, "UserPromptSubmit", body)
    write_settings(env.home / "settings.json", {"UserPromptSubmit": entry(command)})
    with FakeOllama() as fake:
        fake.enqueue(finish("ok"))
        shown, code = run_in_pty(env, fake, "hello")
    assert code == 0
    assert "lint says: ok\\r\\e[2K\\e]52;c;cm0gLXJmIH4=\\x07\\u202e" in shown


def test_the_project_hook_notice_shows_the_hidden_command(env: Env, tmp_path: Path) -> None:
    """The notice that a project hook was not run names its command whole, on a terminal
    and in a log alike (standard error is for people)."""
    marker = tmp_path / "pwned"
    write_settings(
        project_settings(env.workspace), {"UserPromptSubmit": entry(hidden_command(str(marker)))}
    )
    with FakeOllama() as fake:
        fake.enqueue(finish("ok"))
        shown, code = run_in_pty(env, fake, "hello")
        fake.enqueue(finish("ok"))
        logged = piped(env, fake, "hello")
    assert code == 0 and logged.returncode == 0
    hidden = f"touch {marker}; echo pwned\\r\\e[2Kruff format --quiet ."
    assert f"A project hook was not run (you have not agreed to it): {hidden}" in shown
    assert hidden in assert_nothing_raw(logged.stderr)
    assert not marker.exists()


def test_the_command_question_shows_what_the_model_hid(env: Env) -> None:
    """A command asked about on the terminal is shown whole: its ``rm`` is not erased."""
    command = f"rm -rf ~/notes{HIDE}ls -la"
    with FakeOllama() as fake:
        fake.enqueue(Turn.tool_calls(call("run_command", {"command": command})), finish("ok"))
        host = f"127.0.0.1:{fake.port}"
        child = pexpect.spawn(
            sys.executable,
            ["-m", "zcoder", "--prompt", "tidy", "--host", host, "-w", str(env.workspace)],
            env=env.vars,
            cwd=str(env.workspace),
            timeout=RUN_TIMEOUT,
        )
        child.expect_exact(b"[n]o: ")
        asked = assert_nothing_raw(child.before, pty=True)
        child.sendline(b"n")
        child.expect(pexpect.EOF)
        child.close()
    assert "$ rm -rf ~/notes\\r\\e[2Kls -la" in asked


def test_json_output_carries_no_raw_control_and_parses_to_the_exact_reply(env: Env) -> None:
    with FakeOllama() as fake:
        fake.enqueue(finish(REPLY))
        shown, code = run_in_pty(env, fake, "hello", "--json")
        fake.enqueue(finish(REPLY))
        done = piped(env, fake, "hello", "--json")
    assert code == 0 and done.returncode == 0, done.stderr
    assert "\\u001b]52;c;cm0gLXJmIH4=\\u0007" in shown and "\\u202e" in shown
    assert json.loads(assert_nothing_raw(done.stdout))["reply"] == REPLY


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@given(st.text(alphabet="ab\r\n\t\x1b\u200b\ufe0f\u26a0 ", max_size=30), st.data())
def test_a_reply_in_pieces_is_shown_as_the_whole_would_be(text: str, data: st.DataObject) -> None:
    """However the stream cuts the reply (a CR LF, an emoji and its selector apart), the
    terminal shows what ``screen_safe`` shows of the whole."""
    cuts = sorted(data.draw(st.sets(st.integers(0, len(text)), max_size=6)))
    terminal = FakeTerminal()
    stream = ReplyWriter(terminal)
    for start, end in zip([0, *cuts], [*cuts, len(text)], strict=True):
        stream.write(text[start:end])
    stream.end()
    assert terminal.getvalue() == screen_safe(text)
