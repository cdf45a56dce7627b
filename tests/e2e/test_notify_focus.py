"""ZCODER_NOTIFY in a real terminal: the focus reports a terminal sends (ESC [ O when it
loses focus, ESC [ I when it gets it back) reach zcoder through tmux as raw bytes, and a
turn's end or a question waiting is told through the terminal only while unfocused.

What zcoder wrote is read back raw (tmux's pipe-pane). Inside tmux the notification is
wrapped in tmux's passthrough when the pane allows it (``allow-passthrough on``).
"""

from __future__ import annotations

import pytest

from tests.e2e.harness import DIALOG_ARMED, World, wait_until
from tests.e2e.tmux import ENTER, TmuxInstance, start_in_tmux, to_hex
from tests.fixtures.fake_ollama import Turn, call

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

FOCUS_OUT = "1b 5b 4f"  # ESC [ O
FOCUS_IN = "1b 5b 49"  # ESC [ I
WRAPPED = "\x1bPtmux;\x1b\x1b]777;notify;zcoder alpha;"


def notices(zc: TmuxInstance) -> list[str]:
    """The bodies of the notifications zcoder wrote, in order."""
    raw = zc.raw_output
    return [part.split("\x07", 1)[0] for part in raw.split(WRAPPED)[1:]]


def ask(zc: TmuxInstance, text: str, *, then: str = "") -> None:
    """Type ``text``, then Enter and ``then`` in one burst: a key means the terminal has
    focus (Textual takes it so), so the user looks away only after sending."""
    zc.send_hex(to_hex(text))
    zc.wait_text(text)
    zc.send_hex(ENTER, then)


def test_a_turn_end_and_a_question_are_told_only_while_the_terminal_is_unfocused(
    world: World,
) -> None:
    server = world.server(demo=False)
    server.enqueue(
        Turn.text("first reply"),
        Turn.text("second reply"),
        Turn.tool_calls(call("run_command", {"command": "touch asked.txt"})),
        Turn.text("done"),
    )
    zc = start_in_tmux(world, "alpha", server, size=(100, 30))
    zc.tmux("set-option", "-g", "focus-events", "on")
    zc.tmux("set-option", "-p", "-t", "zc", "allow-passthrough", "on")
    assert zc._display("#{allow-passthrough}") in ("1", "on")  # tmux 3.3: 1, 3.4: on

    assert "\x1b[?1004h" in zc.raw_output  # zcoder asked the terminal for focus reports
    ask(zc, "one")  # focused (as a terminal that never reported focus is taken to be)
    zc.wait_text("first reply")
    ask(zc, "two", then=FOCUS_OUT)  # the terminal loses focus while the turn runs
    zc.wait_text("second reply")
    wait_until(lambda: notices(zc) == ["the turn ended"], what="the turn's end told")

    zc.send_hex(FOCUS_IN)
    ask(zc, "three", then=FOCUS_OUT)  # away again: the question that comes is told
    zc.wait_text(DIALOG_ARMED)
    wait_until(
        lambda: notices(zc) == ["the turn ended", "a question waits for your answer"],
        what="the question told",
    )
    zc.send_hex(FOCUS_IN)
    zc.send_key("y")
    zc.wait_text("done")
    # Focused again: the third turn's end is not told.
    assert notices(zc) == ["the turn ended", "a question waits for your answer"]
    # The bell follows each notification; nothing of the model's text is in them.
    assert zc.raw_output.count(WRAPPED) == 2
    assert all("reply" not in body for body in notices(zc))
