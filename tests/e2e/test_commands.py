"""Commands in the real zcoder, in a pty: output on screen while a command runs, kept when
Escape stops it, and the user's own ``!commands``.

Keys are sent as a terminal sends them. What the model was sent comes from the fake
Ollama's recorded requests, what was saved from the session store.
"""

from __future__ import annotations

import contextlib
import os
import signal

import pytest

from tests.e2e.harness import Instance, World, wait_until
from tests.e2e.tmux import ENTER, start_in_tmux
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.fixtures.processes import pid_alive
from zcoder.agent.prompts import INTERRUPTED
from zcoder.sessions import SessionStore

pytestmark = pytest.mark.timeout(90)

ESCAPE = "\x1b"
STEPS = 'echo "step 1"\nwhile [ ! -e go ]; do sleep 0.05; done\necho "step 2"\n'


def only_session(world: World, instance: Instance):
    with SessionStore(world.home(instance.name)) as store:
        [info] = store.list_sessions(instance.workspace, "coding")
        return store.load(info.id, instance.workspace, "coding")


def run_allowed(
    world: World, command: str, *, prompt: str, shown: str
) -> tuple[FakeOllama, Instance, int]:
    """alpha, with commands allowed, whose model runs ``command`` (call c1) when sent
    ``prompt``: its fake Ollama, the instance and the mark before the prompt, once ``shown``
    is on screen."""
    server = world.server(demo=False)
    server.enqueue(Turn.tool_calls(call("run_command", {"command": command}, id="c1")))
    a = world.start("alpha", server, ZCODER_COMMAND_POLICY="allow")
    return server, a, a.submit_and_wait(prompt, shown)


def test_command_output_is_on_screen_while_the_command_runs(world: World) -> None:
    server = world.server(demo=False)
    workspace = world.workspace("alpha")
    (workspace / "steps.sh").write_text(STEPS)
    server.enqueue(
        Turn.tool_calls(call("run_command", {"command": "bash steps.sh"})),
        Turn.text("both steps ran"),
    )
    a = world.start("alpha", server, ZCODER_COMMAND_POLICY="allow")
    mark = a.submit_and_wait("run the steps", "step 1")
    # The script cannot print step 2 before the file exists, and only this test makes it.
    assert "step 2" not in a.screen_text[mark:]
    assert not (workspace / "go").exists()
    (workspace / "go").touch()
    a.wait_text("step 2", since=mark)
    a.wait_text("[exit code 0]", since=mark)
    a.wait_text("both steps ran", since=mark)

    # Ctrl+T (the byte a terminal sends for it) opens the whole output; q closes it.
    mark = a.mark()
    a.send_key("\x14")
    a.wait_text("run_command: bash steps.sh — completed (1 of 1)", since=mark)
    a.wait_text("Esc/q close", since=mark)
    closing = a.mark()
    a.send_key("q")
    a.wait_text("both steps ran", since=closing)  # the transcript is drawn again
    a.submit("!printf 'view-%s\\n' closed")  # typed into the prompt: the view is closed
    a.wait_text("view-closed", since=mark)
    assert a.quit() == 0


def test_escape_during_a_command_keeps_its_output_on_screen_and_in_the_session(
    world: World,
) -> None:
    # printf, so that "long-2" is on screen only once the command printed it (the entry's
    # header shows the command itself).
    command = "echo $$ > shell.pid; printf 'long-%s\\n' 1 2; sleep 300"
    server, a, mark = run_allowed(world, command, prompt="run the long one", shown="long-2")
    pid = int((a.workspace / "shell.pid").read_text())
    assert pid_alive(pid)
    a.send_key(ESCAPE)
    a.wait_text("— interrupted", since=mark)
    a.wait_text("[Interrupted: the turn was stopped", since=mark)
    wait_until(lambda: not pid_alive(pid), what="the command to be killed")
    assert a.quit() == 0

    data = only_session(world, a)
    expected = f"long-1\nlong-2\n[{INTERRUPTED}]"
    [event] = [e for e in data.events if e.role == "tool"]
    assert (event.text, event.metadata["status"]) == (expected, "interrupted")
    [result] = [m for m in data.messages if m["role"] == "tool"]
    assert result["content"] == expected

    # Reopened, the output is on screen again.
    b = world.start("alpha", server, args=("--resume", data.info.id))
    b.wait_text("long-2")
    b.wait_text("— interrupted")


def test_a_bang_command_shows_its_output_and_is_context_for_the_next_prompt(
    world: World,
) -> None:
    server = world.server(demo=False)
    a = world.start("alpha", server)  # the "ask" policy: a !command is not asked about
    wait_until(lambda: server.load_requests, what="the warm-up's request")
    mark = a.submit_and_wait("!printf 'sh%s\\n' ell-out", "shell-out", "[exit code 0]")
    assert server.chat_bodies == []  # no model request

    server.enqueue(Turn.text("it printed shell-out"))
    a.submit("what did it print?")
    a.wait_text("it printed shell-out", since=mark)
    [body] = server.chat_bodies
    contents = [m["content"] for m in body["messages"]]
    assert sum("shell-out" in c for c in contents) == 1
    assert contents[-1] == "what did it print?"
    assert a.quit() == 0

    data = only_session(world, a)
    assert data.user_ledger == ["what did it print?"]
    [event] = [e for e in data.events if e.role == "tool"]
    assert event.metadata["user_command"] is True
    assert event.text == "shell-out\n[exit code 0]"


def test_a_command_running_when_zcoder_is_killed_reopens_interrupted_with_its_output(
    world: World,
) -> None:
    # The output (upper case) is not in the command line the entry shows as the call
    # starts: seeing it on screen means zcoder has read it.
    command = "echo before-the-kill | tr a-z A-Z; echo $$ > shell.pid; sleep 300"
    _, a, _ = run_allowed(world, command, prompt="run it", shown="BEFORE-THE-KILL")
    pid_file = a.workspace / "shell.pid"
    wait_until(lambda: pid_file.exists() and pid_file.read_text().endswith("\n"), what="pid")
    shell = int(pid_file.read_text())
    try:
        a.signal(signal.SIGKILL)
        a.wait_exit()
        data = only_session(world, a)  # loading marks what the dead process left running
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell, signal.SIGKILL)  # its own process group: not the pty's
    [event] = [e for e in data.events if e.role == "tool"]
    assert event.metadata["status"] == "interrupted"
    assert event.text == "BEFORE-THE-KILL\n"


@pytest.mark.parametrize("mode", ["off", "on"])
def test_in_tmux_the_entry_shows_the_tail_and_ctrl_t_the_whole_output(
    world: World, mode: str
) -> None:
    """On a real screen (tmux), with and without tmux's extended keys: the entry's last
    lines, and Ctrl+T (the byte a terminal sends) opening the whole output at its end."""
    zc = start_in_tmux(world, f"t-{mode}", None, extended_keys=mode, ZCODER_RELAY="off")
    zc.type_text("!seq 1 100")
    zc.send_hex(ENTER)
    zc.wait_text("… 88 earlier lines · Ctrl+T shows the whole output")
    zc.wait_text("[exit code 0]")
    rows = zc.screen()
    assert [row.strip(" │█▊▎") for row in rows if row.strip(" │█▊▎").isdigit()] == [
        str(n) for n in range(89, 101)
    ]
    zc.send_hex("14")  # Ctrl+T
    zc.wait_text("$ seq 1 100 — completed (1 of 1)")
    zc.wait_text("Esc/q close")
    shown = [row.strip(" │█▊▎") for row in zc.screen()]
    assert "100" in shown and "[exit code 0]" in shown  # it opens at the end
    assert "1" not in shown  # too long for the view: its start is above
    zc.type_text("q")
    zc.wait_gone("Esc/q close")
    zc.type_text("still typing")
    zc.wait_text("still typing")  # the keys go to the prompt again
