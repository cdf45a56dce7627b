"""Up/Down recall, Ctrl+R search and Tab completion with the real zcoder in tmux.

The keys are the bytes a terminal sends (Up ``1b 5b 41``, Down ``1b 5b 42``, Ctrl+R ``12``,
Tab ``09``, Shift+Tab ``1b 5b 5a``, Enter ``0d``), in one burst and one byte at a time,
through tmux to zcoder's own input parser. What was sent is read from the fake Ollama's
recorded requests; the screen (tmux's, which knows where each character is) shows the
search and Tab's choices.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import CTRL_J, ENTER, TmuxInstance, start_in_tmux, to_hex
from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.fixtures.model_requests import last_user_messages

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

UP = "1b 5b 41"
DOWN = "1b 5b 42"
CTRL_R = "12"
TAB = "09"
SHIFT_TAB = "1b 5b 5a"
ESCAPE = "1b"


def wait_sent(server: FakeOllama, count: int) -> list[str]:
    """The prompts sent, once there are ``count`` of them."""

    def enough() -> list[str] | None:
        sent = last_user_messages(server.chat_bodies)
        return sent if len(sent) >= count else None

    return wait_until(enough, what=f"{count} prompts at the model")


Sender = Callable[[TmuxInstance, str], None]


def in_one_burst(zc: TmuxInstance, hex_bytes: str) -> None:
    zc.send_hex(hex_bytes)


def one_byte_at_a_time(zc: TmuxInstance, hex_bytes: str) -> None:
    zc.send_slowly(hex_bytes)


SENDERS = pytest.mark.parametrize("send", [in_one_burst, one_byte_at_a_time])


@pytest.fixture
def server(world: World) -> FakeOllama:
    """The demo brain, for the zcoders of a test (one after the other)."""
    return world.server()


def start(
    world: World, server: FakeOllama, name: str = "proj", *, history: Sequence[str] = ()
) -> TmuxInstance:
    """zcoder in tmux, with the prompts of ``history`` sent first, each once the model has
    the one before."""
    zc = start_in_tmux(world, name, server, size=(110, 30), ZCODER_RELAY="off")
    for prompt in history:
        before = len(server.chat_bodies)
        say(zc, prompt)
        wait_sent(server, before + 1)
    return zc


def say(zc: TmuxInstance, text: str) -> None:
    """Type ``text`` and send it with Enter (typed first, so it is no paste)."""
    zc.type_text(text)
    zc.wait_text(text)
    zc.send_hex(ENTER)


def settle() -> None:
    """A moment for keys already sent to be read (before checking that nothing happened)."""
    time.sleep(0.5)


@SENDERS
def test_up_recalls_a_prompt_of_the_previous_run_and_enter_sends_it(
    world: World, server: FakeOllama, send: Sender
) -> None:
    zc = start(world, server, history=["first prompt", "second prompt"])
    zc.quit()  # (its exit status is tests/e2e/test_tmux_harness.py's concern)

    zc = start(world, server)  # the same workspace and home
    zc.type_text("my draft")
    zc.wait_text("my draft")
    send(zc, UP)
    zc.wait_text("second prompt")
    send(zc, UP)
    zc.wait_text("first prompt")
    send(zc, DOWN)
    zc.wait_text("second prompt")
    send(zc, DOWN)
    zc.wait_text("my draft")  # the draft is back
    send(zc, f"{UP} {UP} {ENTER}")
    assert wait_sent(server, 3) == ["first prompt", "second prompt", "first prompt"]


def test_a_multi_line_prompt_comes_back_whole_in_the_next_run(
    world: World, server: FakeOllama
) -> None:
    zc = start(world, server)
    zc.type_text("line one")
    zc.send_hex(CTRL_J)  # a new line (Alt+Enter and Shift+Enter are branch term's)
    zc.type_text("  line two")
    zc.wait_text("  line two")
    zc.send_hex(ENTER)
    assert wait_sent(server, 1) == ["line one\n  line two"]
    zc.quit()  # (its exit status is tests/e2e/test_tmux_harness.py's concern)
    zc = start(world, server)
    zc.send_hex(UP)
    zc.wait_text("  line two")
    zc.send_hex(ENTER)  # the cursor is on the first line: Enter sends it all
    assert wait_sent(server, 2)[-1] == "line one\n  line two"


def test_another_workspace_has_its_own_history(world: World, server: FakeOllama) -> None:
    zc = start(world, server, "one", history=["only in workspace one"])
    zc.quit()  # (its exit status is tests/e2e/test_tmux_harness.py's concern)
    other = start(world, server, "two")
    other.send_hex(UP)
    other.type_text("typed after up")
    other.send_hex(ENTER)
    assert wait_sent(server, 2)[-1] == "typed after up"


@SENDERS
def test_ctrl_r_finds_a_prompt_enter_takes_it_to_edit_escape_cancels(
    world: World, server: FakeOllama, send: Sender
) -> None:
    zc = start(world, server, history=["deploy the app", "fix the tests"])

    zc.type_text("draft")
    zc.wait_text("draft")
    send(zc, CTRL_R)
    zc.wait_text("search:")
    send(zc, to_hex("dep"))
    zc.wait_text("search: dep")
    zc.wait_text("deploy the app")
    send(zc, ENTER)  # accepted for editing, not sent
    zc.wait_gone("search:")
    send(zc, to_hex(" now"))
    zc.wait_text("deploy the app now")
    settle()
    assert len(last_user_messages(server.chat_bodies)) == 2

    # Escape cancels: the text before the search comes back.
    send(zc, CTRL_R)
    send(zc, to_hex("fix"))
    zc.wait_text("search: fix")
    send(zc, ESCAPE)
    zc.wait_gone("search:")
    send(zc, ENTER)
    assert wait_sent(server, 3)[-1] == "deploy the app now"


def test_escape_in_the_search_does_not_stop_the_running_turn(world: World) -> None:
    server = world.server(demo=False)
    server.enqueue(Turn.text("done"), Turn.stall(before="still working", seconds=30))
    zc = start(world, server, history=["earlier prompt"])
    say(zc, "a long task")
    zc.wait_text("still working")
    zc.send_hex(CTRL_R)
    zc.type_text("earl")
    zc.wait_text("search: earl")
    zc.send_hex(ESCAPE)
    zc.wait_gone("search:")
    settle()
    assert not any(r.disconnected.is_set() for r in server.requests if r.path == "/api/chat")
    zc.send_hex(ESCAPE)  # now Escape is the app's: it stops the turn
    wait_until(
        lambda: any(r.disconnected.is_set() for r in server.requests if r.path == "/api/chat"),
        what="the stalled request to be dropped",
    )


@SENDERS
def test_tab_completes_a_command_and_a_path_and_typing_goes_on_in_the_prompt(
    world: World, server: FakeOllama, send: Sender
) -> None:
    (world.workspace("proj") / "hello.py").write_text("print('hi')\n")
    zc = start(world, server)

    send(zc, to_hex("/hel") + f" {TAB} {ENTER}")
    zc.wait_text(re.compile(r"Ctrl\+Q +quit"))  # completed and sent: /help's last row

    send(zc, f"{TAB} {SHIFT_TAB}")  # nothing to complete: nothing happens, focus stays
    send(zc, to_hex("look at hel") + f" {TAB} " + to_hex("please") + f" {ENTER}")
    assert wait_sent(server, 1) == ["look at hello.py please"]


def test_several_choices_are_listed_and_tab_steps_through_them(
    world: World, server: FakeOllama
) -> None:
    zc = start(world, server)
    zc.type_text("/co")
    zc.send_hex(TAB)
    zc.wait_text("/codex  /compact  /context  /copy")  # listed in the input's lower border
    zc.send_hex(f"{TAB} {TAB} {TAB} {ENTER}")  # /codex, /compact, then /context, sent
    zc.wait_text("› /context")


def test_the_keys_of_one_burst_are_all_taken(world: World, server: FakeOllama) -> None:
    """Up, Tab and text all in one write, as a fast typist's terminal may send them."""
    (world.workspace("proj") / "notes.md").write_text("")
    zc = start(world, server, history=["read no"])
    zc.send_hex(f"{UP} {TAB} " + to_hex("twice") + f" {ENTER}")
    sent: list[Any] = wait_sent(server, 2)
    assert sent[-1] == "read notes.md twice"
