"""Sessions people can find, end to end: real zcoder processes in pseudo-terminals.

Two instances in one workspace get different sessions and the second says why; leaving
prints ``zcoder --resume ID`` once the terminal is the shell's again; that command reopens
the transcript and the session's model. Ground truth comes from the session store; the
screen is checked for short fragments.
"""

from __future__ import annotations

import base64
import re
import shlex
import sys

import pytest

from tests.e2e.harness import World, strip_terminal, wait_until
from tests.e2e.tmux import ENTER, TMUX, start_in_tmux
from tests.fixtures.fake_ollama import Turn
from zcoder.sessions import SessionStore

pytestmark = pytest.mark.timeout(120)

LEAVE_ALT_SCREEN = "\x1b[?1049l"
RESUME_HINT = re.compile(r"zcoder --resume (\d+_\d+)")


def test_two_instances_in_one_workspace_get_different_sessions_and_the_second_says_why(
    world: World,
) -> None:
    server = world.server(demo=False)
    first = world.start("proj", server)
    second = world.start("proj", server)  # the same workspace and home
    second.wait_text(re.compile(r"is open in another zcoder \(pid \d+\); this zcoder"))
    with SessionStore(world.home("proj")) as store:
        sessions = store.list_sessions(first.workspace, "coding")
    assert len(sessions) == 2  # one each, none shared
    opened = re.search(r"this zcoder opened (\d+_\d+)", second.screen_text)
    assert opened is not None
    other = next(s.id for s in sessions if s.id != opened.group(1))
    assert f"Session {other} is open in another zcoder (pid {first.pid})" in second.screen_text


def test_leaving_prints_the_resume_command_and_it_reopens_the_transcript_and_model(
    world: World,
) -> None:
    server = world.server(demo=False)
    server.enqueue(Turn.text("The parser lives in src/parse.py."))
    first = world.start("proj", server, args=("-m", "llama3.2"))
    first.wait_text("llama3.2@")
    first.submit("where is the parser?")
    first.wait_text("src/parse.py.")
    assert first.quit() == 0
    raw = first.raw_output
    after = raw[raw.rindex(LEAVE_ALT_SCREEN) :]  # printed on the shell's screen, not the app's
    hint = RESUME_HINT.search(after)
    assert hint is not None, after[-500:]
    session = hint.group(1)
    with SessionStore(world.home("proj")) as store:
        data = store.load(session, first.workspace, "coding")
    assert data.user_ledger == ["where is the parser?"]
    assert data.info.model == "llama3.2"

    # ZCODER_MODEL is qwen3-coder: resuming puts the session's model back.
    again = world.start("proj", server, args=("--resume", session))
    again.wait_text("where is the parser?")
    again.wait_text("src/parse.py.")
    again.wait_text("this session's model; it was qwen3-coder")
    again.wait_text("llama3.2@")
    assert again.quit() == 0
    assert RESUME_HINT.search(again.raw_output.rsplit(LEAVE_ALT_SCREEN, 1)[-1])


def test_the_hint_restarts_the_program_that_ran_with_the_server_it_used(world: World) -> None:
    """Issue 27 item 14: the printed command works from where the user is (here ``python
    -m zcoder``, which PATH's ``zcoder`` is not) and names the server given by a flag."""
    server = world.server(demo=False)
    server.enqueue(Turn.text("Noted."))
    first = world.start("proj", None, args=("--host", server.url))
    first.submit("remember this")
    first.wait_text("Noted.")
    assert first.quit() == 0
    line = first.raw_output.rsplit(LEAVE_ALT_SCREEN, 1)[-1]
    hint = re.search(r"Resume this session with: (.*)", line)
    assert hint is not None, line[-500:]
    words = shlex.split(strip_terminal(hint.group(1)).strip())
    assert words[:3] == [sys.executable, "-m", "zcoder"]
    assert words[3] == "--resume" and words[5:] == ["--host", server.url]
    again = world.start("proj", None, args=tuple(words[3:]))  # the printed command's options
    again.wait_text("remember this")
    again.wait_text("Noted.")
    assert again.quit() == 0


def test_an_empty_session_prints_no_hint_and_sigterm_prints_it(world: World) -> None:
    server = world.server(demo=False)
    empty = world.start("proj", server)
    assert empty.quit() == 0
    assert "--resume" not in empty.raw_output.rsplit(LEAVE_ALT_SCREEN, 1)[-1]

    server.enqueue(Turn.text("done that"))
    busy = world.start("proj", server)
    busy.submit("do this")
    busy.wait_text("done that")
    busy.signal(15)
    busy.wait_exit()
    assert RESUME_HINT.search(busy.raw_output.rsplit(LEAVE_ALT_SCREEN, 1)[-1])


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (make test installs it)")
@pytest.mark.parametrize("set_clipboard", ["on", "external"])
def test_copy_reaches_tmux_only_with_set_clipboard_on(world: World, set_clipboard: str) -> None:
    """/copy writes OSC 52; tmux takes it (into its paste buffer, and on to the outer
    terminal) with ``set -s set-clipboard on``; its default, ``external``, ignores programs
    that set the clipboard. docs/usage.md says so."""
    reply = "Run:\n\n```sh\nmake test\n```"
    server = world.server(demo=False)
    server.enqueue(Turn.text(reply))
    pane = start_in_tmux(world, "proj", server)
    pane.tmux("set-option", "-s", "set-clipboard", set_clipboard)
    pane.type_text("show me")
    pane.send_hex(ENTER)
    pane.wait_text("make test")
    pane.type_text("/copy")
    pane.send_hex(ENTER)
    pane.wait_text(f"Copied {len(reply)} characters")
    encoded = base64.b64encode(reply.encode()).decode()
    wait_until(lambda: f"\x1b]52;c;{encoded}\x07" in pane.raw_output, what="OSC 52 written")
    buffers = pane.tmux("list-buffers", "-F", "#{buffer_name}", check=False).split()
    if set_clipboard == "on":
        assert pane.tmux("show-buffer") == reply
    else:
        assert buffers == []
