"""Following new output, in a real terminal: zcoder in tmux, the wheel and End as raw bytes.

The fake Ollama streams long replies slowly; the screen is read back from tmux. The wheel
is SGR mouse reporting (``ESC [ < 64 ; x ; y M`` up, ``65`` down), which Textual turns on;
End is ``ESC [ 4 ~``, what tmux sends for it (``ESC [ F`` from xterm itself), Ctrl+End
``ESC [ 1 ; 5 F``.
"""

from __future__ import annotations

import re
import time

import pytest

from tests.e2e.harness import World
from tests.e2e.tmux import TmuxInstance, start_in_tmux, to_hex, wheel_hex
from tests.fixtures.fake_ollama import Turn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

SIZE = (100, 30)
TRANSCRIPT_AT = (60, 10)  # a cell inside the transcript (1-based column, row)
END = "1b 5b 34 7e"
END_XTERM = "1b 5b 46"
CTRL_END = "1b 5b 31 3b 35 46"  # ESC [ 1 ; 5 F
HINT = "new output below"
LINES = 70
TABLE_END = re.compile(r" last +row")  # the table's last row, drawn as a table


def reply(name: str) -> str:
    """A long reply, one short paragraph per numbered line; a table ends it."""
    body = "\n\n".join(f"{name} line {n:03d} of the reply." for n in range(1, LINES + 1))
    return f"{body}\n\n| {name} | done |\n|---|---|\n| last | row |\n"


def last_line(name: str) -> str:
    return f"{name} line {LINES:03d} of the reply."


def numbered_rows(zc: TmuxInstance, name: str) -> list[tuple[int, str]]:
    """The reply's numbered lines on screen, each with its row number. Only the line's
    words: the scrollbar's thumb, at the row's end, moves as the transcript grows."""
    pattern = re.compile(rf"{name} line \d{{3}}(?: of the reply\.)?")
    return [
        (row, found.group())
        for row, text in enumerate(zc.screen())
        if (found := pattern.search(text)) is not None
    ]


def newest_number(zc: TmuxInstance, name: str) -> int:
    found = [int(n) for n in re.findall(rf"{name} line (\d{{3}})", zc.screen_text)]
    return max(found, default=0)


def wheel(zc: TmuxInstance, *, up: bool, turns: int) -> None:
    x, y = TRANSCRIPT_AT
    zc.send_hex(*[wheel_hex(up=up, x=x, y=y)] * turns)


def start(world: World, *replies: str, delay: float | None) -> TmuxInstance:
    server = world.server()
    server.enqueue(*[Turn.text(text, delay=delay) for text in replies])
    return start_in_tmux(world, "proj", server, size=SIZE, ZCODER_RELAY="off")


def scrolled_up(world: World, name: str, *, turns: int) -> TmuxInstance:
    """zcoder streaming ``name``'s long reply slowly, the wheel turned up ``turns`` notches
    once line 12 is on screen, and output since arrived below what is on screen (the hint
    says so)."""
    zc = start(world, reply(name), delay=0.04)
    zc.submit("write a long answer")
    zc.wait_text(f"{name} line 012", timeout=60)
    wheel(zc, up=True, turns=turns)
    zc.wait_text(HINT, timeout=30)
    return zc


def wait_reply_end(zc: TmuxInstance, name: str) -> None:
    """Until the reply's last line and its table, drawn as a table, are on screen."""
    zc.wait_text(last_line(name), timeout=60)
    zc.wait_text(TABLE_END, timeout=30)


def test_without_scrolling_the_end_of_a_long_reply_is_on_screen(world: World) -> None:
    zc = start(world, reply("Alpha"), delay=0.003)
    zc.submit("write a long answer")
    zc.wait_text("Alpha line 030", timeout=60)
    zc.wait_text(last_line("Alpha"), timeout=60)
    zc.wait_text("Ready", timeout=30)
    zc.wait_text(TABLE_END)  # the table, drawn as a table, is the reply's end
    assert HINT not in zc.screen_text
    # The newest line sits just above the table, at the bottom of the transcript.
    [(row, _)] = [(r, t) for r, t in numbered_rows(zc, "Alpha") if last_line("Alpha") in t]
    assert row > SIZE[1] // 2


def test_wheel_up_holds_the_view_while_output_continues_then_end_follows(world: World) -> None:
    zc = scrolled_up(world, "Beta", turns=3)
    before = numbered_rows(zc, "Beta")
    newest_before = newest_number(zc, "Beta")
    assert before, zc.screen_text
    # The model goes on streaming for a while: the rows on screen do not move.
    time.sleep(1.5)
    assert numbered_rows(zc, "Beta") == before
    assert newest_number(zc, "Beta") == newest_before

    # End (as tmux sends it, the prompt being empty): the newest output is on screen again
    # and is followed from then on.
    zc.send_hex(END)
    zc.wait_gone(HINT)
    assert newest_number(zc, "Beta") > newest_before
    wait_reply_end(zc, "Beta")


def test_wheel_back_down_to_the_end_follows_again(world: World) -> None:
    zc = scrolled_up(world, "Gamma", turns=2)
    held = numbered_rows(zc, "Gamma")
    time.sleep(0.5)
    assert numbered_rows(zc, "Gamma") == held
    # Wheel down, a notch at a time, until the view reaches the end and follows.
    deadline = time.monotonic() + 30
    while HINT in zc.screen_text and time.monotonic() < deadline:
        wheel(zc, up=False, turns=1)
        time.sleep(0.05)
    assert HINT not in zc.screen_text
    wait_reply_end(zc, "Gamma")


def test_while_typing_end_moves_the_cursor_and_ctrl_end_follows(world: World) -> None:
    zc = scrolled_up(world, "Delta", turns=3)
    held = numbered_rows(zc, "Delta")
    newest_before = newest_number(zc, "Delta")
    zc.type_text("next question")
    zc.wait_text("next question")
    zc.send_hex("1b 5b 44 1b 5b 44")  # Left twice, then End (xterm's bytes): the prompt's
    zc.send_hex(END_XTERM)
    zc.type_text("!")
    zc.wait_text("next question!")  # the cursor went to the end of the typed line
    assert HINT in zc.screen_text and numbered_rows(zc, "Delta") == held
    zc.send_hex(CTRL_END)
    zc.wait_gone(HINT)
    zc.wait_text(last_line("Delta"), timeout=60)
    assert newest_number(zc, "Delta") > newest_before
    assert "next question" in zc.screen_text  # the prompt kept what was typed


PAGE_UP = "1b 5b 35 7e"


@pytest.mark.parametrize("scroll", ["wheel", "pageup"])
def test_sending_while_scrolled_up_brings_the_view_to_the_end(world: World, scroll: str) -> None:
    """Issue 27 item 12: a prompt or a command the user sends is answered at the end, and
    the view goes there, however far up they had scrolled."""
    zc = start(world, reply("first"), "the second answer", delay=None)
    zc.submit("write a long answer")
    zc.wait_text(TABLE_END, timeout=60)  # the whole reply is in

    def scroll_up() -> None:
        if scroll == "wheel":
            wheel(zc, up=True, turns=15)
        else:
            zc.send_hex(PAGE_UP, PAGE_UP, PAGE_UP)  # typed in the prompt, which keeps it
        zc.wait_gone(last_line("first"))

    scroll_up()
    zc.type_text("and then?\r")
    zc.wait_text("the second answer")
    zc.wait_text("and then?")

    scroll_up()
    zc.type_text("/diff\r")
    zc.wait_text("No file changes in this session")
    zc.wait_text("› /diff")
    zc.quit()


def test_typing_after_a_click_in_the_transcript_goes_to_the_prompt(world: World) -> None:
    """A click in the transcript (to scroll or select) leaves the focus in the prompt:
    every key the user types next reaches it, and Enter sends it (all but the first key
    were lost when the click gave the transcript the focus)."""
    server = world.server()
    server.enqueue(Turn.text("first answer"), Turn.text("second answer"))
    zc = start_in_tmux(world, "proj", server, size=(60, 15), ZCODER_RELAY="off")
    zc.submit("first question")
    zc.wait_text("first answer", timeout=60)
    x, y = 20, 4  # a cell of the transcript
    zc.send_hex(to_hex(f"\x1b[<0;{x};{y}M"), to_hex(f"\x1b[<0;{x};{y}m"))  # press, release
    zc.type_text("second question")
    zc.wait_text("▊ second question")
    zc.send_hex("0d")
    zc.wait_text("second answer", timeout=60)
    assert server.chat_bodies[-1]["messages"][-1]["content"] == "second question"
