"""PromptInput's logic under Pilot: Enter, the newline keys, pastes and collapsed blocks.

Pilot builds key events directly (no terminal parser): these tests pin down what the widget
does with a key or a paste once it has it. What terminals send is tests/tui/test_terminal.py
and the end-to-end tests' job.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual import events
from textual.app import App, ComposeResult

from tests.fixtures.fake_ollama import Turn
from tests.tui.conftest import idle
from zcoder.tui.widgets.prompt import (
    HINT,
    HINT_WITH_PASTE,
    PASTE_COLLAPSE_CHARS,
    PASTE_COLLAPSE_LINES,
    PromptInput,
)

pytestmark = pytest.mark.timeout(60)


class Host(App[None]):
    """Just the prompt; what it posts is recorded."""

    def __init__(self) -> None:
        super().__init__()
        self.prompt = PromptInput(id="prompt", soft_wrap=True, show_line_numbers=False)
        self.submitted: list[str] = []
        self.edit_queued = 0

    def compose(self) -> ComposeResult:
        yield self.prompt

    def on_mount(self) -> None:
        self.prompt.focus()

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        self.submitted.append(message.text)

    def on_prompt_input_edit_queued(self, _message: PromptInput.EditQueued) -> None:
        self.edit_queued += 1


async def paste(pilot: Any, prompt: PromptInput, text: str) -> None:
    prompt.post_message(events.Paste(text))
    await pilot.pause()


async def test_enter_submits_and_keys_typed_after_it_start_the_next_draft() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await pilot.press("h", "i", "enter", "n", "o")
        await pilot.pause()
        assert app.submitted == ["hi"]
        assert app.prompt.text == "no"


async def test_shift_enter_alt_enter_and_ctrl_j_insert_a_new_line() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await pilot.press("a", "shift+enter", "b", "alt+enter", "c", "ctrl+j", "d")
        await pilot.press("ctrl+enter", "e")
        await pilot.pause()
        assert app.prompt.text == "a\nb\nc\nd\ne"
        assert app.submitted == []
        await pilot.press("enter")
        await pilot.pause()
        assert app.submitted == ["a\nb\nc\nd\ne"]


async def test_a_backslash_before_enter_becomes_a_new_line() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await pilot.press("a", "backslash", "enter", "b")
        await pilot.pause()
        assert app.prompt.text == "a\nb"
        assert app.submitted == []
        # A backslash elsewhere on the line is text: Enter submits it.
        app.prompt.load_text("x\\y")
        app.prompt.move_cursor((0, 3))
        await pilot.press("enter")
        await pilot.pause()
        assert app.submitted == ["x\\y"]


async def test_enter_on_a_blank_draft_does_nothing() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await pilot.press("space", "enter")
        await pilot.pause()
        assert app.submitted == []
        assert app.prompt.text == " "


async def test_up_in_the_empty_prompt_asks_for_the_queued_prompt_only_there() -> None:
    app = Host()
    async with app.run_test() as pilot:
        app.prompt.habits.queued_waiting = lambda: True  # prompts are queued
        await pilot.press("up")
        await pilot.pause()
        assert app.edit_queued == 1
        await pilot.press("a", "shift+enter", "b", "up")
        await pilot.pause()
        assert app.edit_queued == 1
        assert app.prompt.cursor_location == (0, 1)


async def test_a_paste_is_inserted_at_the_cursor_and_never_submits() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await pilot.press("[", "]")
        app.prompt.move_cursor((0, 1))
        await paste(pilot, app.prompt, "one\r\ntwo\rthree\x1b[A\n")
        assert app.submitted == []
        assert app.prompt.text == "[one\ntwo\nthree\\e[A\n]"
        assert app.prompt.cursor_location == (3, 0)
        await pilot.press("enter")
        await pilot.pause()
        assert app.submitted == ["[one\ntwo\nthree\\e[A\n]"]


async def test_a_large_paste_shows_collapsed_and_is_submitted_whole() -> None:
    big = "\n".join(f"line {n}" for n in range(1, 501))
    app = Host()
    async with app.run_test() as pilot:
        assert app.prompt.border_subtitle == HINT
        await pilot.press("s", "e", "e", "space")
        await paste(pilot, app.prompt, big)
        await pilot.press("space", "o", "k")
        assert app.prompt.text == "see [pasted 500 lines #1] ok"
        assert app.prompt.border_subtitle == HINT_WITH_PASTE
        await paste(pilot, app.prompt, "x" * (PASTE_COLLAPSE_CHARS + 1))
        assert app.prompt.text.endswith(" ok[pasted 1 line #2]")
        await pilot.press("enter")
        await pilot.pause()
        assert app.submitted == [f"see {big} ok" + "x" * (PASTE_COLLAPSE_CHARS + 1)]
        assert app.prompt.text == ""
        assert app.prompt.border_subtitle == HINT


async def test_a_paste_at_the_limits_is_shown_as_it_is() -> None:
    lines = "\n".join("y" for _ in range(PASTE_COLLAPSE_LINES))
    app = Host()
    async with app.run_test() as pilot:
        await paste(pilot, app.prompt, lines)
        assert app.prompt.text == lines
        app.prompt.clear()
        await paste(pilot, app.prompt, "z" * PASTE_COLLAPSE_CHARS)
        assert app.prompt.text == "z" * PASTE_COLLAPSE_CHARS


async def test_a_collapsed_paste_edits_as_one_piece() -> None:
    big = "\n".join(str(n) for n in range(30))
    app = Host()
    async with app.run_test() as pilot:
        await pilot.press("a")
        await paste(pilot, app.prompt, big)
        await pilot.press("b")
        assert app.prompt.text == "a[pasted 30 lines #1]b"
        # Typing with the cursor inside the block goes after it.
        app.prompt.move_cursor((0, 5))
        await pilot.press("c")
        assert app.prompt.text == "a[pasted 30 lines #1]cb"
        # Backspace just after it removes all of it; Ctrl+Z brings it back, still whole.
        app.prompt.move_cursor((0, 21))
        await pilot.press("backspace")
        assert app.prompt.text == "acb"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.prompt.text == "a[pasted 30 lines #1]cb"
        # Delete just before it removes all of it too.
        app.prompt.move_cursor((0, 1))
        await pilot.press("delete")
        assert app.prompt.text == "acb"
        assert app.prompt.border_subtitle == HINT
        await pilot.press("ctrl+z")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert app.submitted == [f"a{big}cb"]


async def test_ctrl_e_on_a_collapsed_paste_expands_it_elsewhere_goes_to_the_line_end() -> None:
    big = "\n".join(f"row {n}" for n in range(25))
    app = Host()
    async with app.run_test() as pilot:
        await paste(pilot, app.prompt, big)
        await pilot.press("space", "t", "a", "i", "l")
        app.prompt.move_cursor((0, 0))
        await pilot.press("ctrl+e")  # the cursor just before the block
        assert app.prompt.text == f"{big} tail"
        assert app.prompt.border_subtitle == HINT
        app.prompt.move_cursor((0, 1))
        await pilot.press("ctrl+e")  # no block here: the end of the line
        assert app.prompt.cursor_location == (0, len("row 0"))
        await pilot.press("enter")
        await pilot.pause()
        assert app.submitted == [f"{big} tail"]


async def test_typed_text_that_looks_like_a_placeholder_is_sent_as_typed() -> None:
    app = Host()
    async with app.run_test() as pilot:
        app.prompt.load_text("[pasted 3 lines #1]")
        await pilot.press("end", "enter")
        await pilot.pause()
        assert app.submitted == ["[pasted 3 lines #1]"]


async def test_the_app_sends_the_model_a_pasted_prompt_whole(
    fake: Any, make_config: Any, app_factory: Any
) -> None:
    fake.enqueue(Turn.text("read it"))
    big = "\r\n".join(f"l{n}\x1b[0m" for n in range(40))
    app = app_factory(make_config())
    async with app.run_test(size=(120, 40)) as pilot:
        app.prompt_input.focus()
        await pilot.press("x", "shift+enter")
        await paste(pilot, app.prompt_input, big)
        await pilot.press("enter")
        await idle(pilot, app)
        assert app.prompt_input.text == ""
    expected = "x\n" + "\n".join(f"l{n}\\e[0m" for n in range(40))
    assert fake.chat_bodies[-1]["messages"][-1]["content"] == expected


async def test_undoing_a_multi_line_paste_restores_the_draft_and_keeps_zcoder_running() -> None:
    # Textual 8.2.8 alone raises here (issue 6686): the scroll bar goes before the cursor
    # is moved back.
    app = Host()
    async with app.run_test() as pilot:
        await pilot.press("a")
        await paste(pilot, app.prompt, "\n".join(f"r{n}" for n in range(15)))
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.prompt.text == "a"
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert app.prompt.text.startswith("ar0\nr1\n")
        big = "\n".join(f"s{n}" for n in range(40))
        await paste(pilot, app.prompt, big)
        await pilot.press("end", "ctrl+e")  # just after the block: expanded
        assert app.prompt.text.endswith(big)
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.prompt.text.endswith("r14[pasted 40 lines #1]")
        await pilot.press("ctrl+z", "ctrl+z")
        await pilot.pause()
        assert app.prompt.text == "a"
        assert app.prompt.cursor_location == (0, 1)
    assert app.return_code in (None, 0)  # the app did not end with an error


def test_a_paste_ending_in_a_line_break_counts_its_lines_as_a_reader_does() -> None:
    from zcoder.tui.widgets.prompt import PastedBlock

    assert PastedBlock(1, "a\nb\n").placeholder == "[pasted 2 lines #1]"
    assert PastedBlock(2, "one").placeholder == "[pasted 1 line #2]"


async def test_ctrl_z_undoes_a_paste_or_an_expand_alone_not_the_typing_around_it() -> None:
    big = "\n".join(f"t{n}" for n in range(30))
    app = Host()
    async with app.run_test() as pilot:
        await pilot.press("a", "b")
        await paste(pilot, app.prompt, "pasted")
        await pilot.press("c", "d")
        await pilot.press("ctrl+z")
        assert app.prompt.text == "abpasted"
        await pilot.press("ctrl+z")
        assert app.prompt.text == "ab"
        await paste(pilot, app.prompt, big)
        await pilot.press("e", "end", "left", "ctrl+e", "f")
        assert app.prompt.text == f"ab{big}fe"
        await pilot.press("ctrl+z")
        assert app.prompt.text == f"ab{big}e"
        await pilot.press("ctrl+z")
        assert app.prompt.text == "ab[pasted 30 lines #1]e"


def key(name: str, character: str | None = None) -> events.Key:
    return events.Key(name, character)


async def test_cursor_keys_and_typing_that_arrive_together_apply_in_their_order() -> None:
    """Keys a terminal delivers in one burst reach the app's queue together (as under load).
    Textual runs a focused widget's bindings when the key has bubbled back to the app,
    after the prompt inserted the characters behind it: Left Left '!' gave 'next
    question!'. The prompt runs its own bindings as it gets them."""
    app = Host()
    async with app.run_test() as pilot:
        await pilot.press(*"question")
        await pilot.pause()
        for event in (key("left"), key("left"), key("exclamation_mark", "!"), key("home"),
                      key("greater_than_sign", ">")):  # fmt: skip
            app.post_message(event)
        await pilot.pause()
        assert app.prompt.text == ">questi!on"
        assert app.prompt.cursor_location == (0, 1)
