"""The transcript as the user reads it: following new output, and replies drawn as markdown.

Wheel turns are posted to the transcript as Textual mouse events here; the same through a
real terminal's bytes is tests/e2e/test_transcript_scroll.py.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from rich.segment import Segment
from textual import events
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widget import Widget

from tests.fixtures.fake_ollama import Turn
from tests.tui.conftest import entries, idle, submit, transcript_text, wait_until
from tests.tui.support import answered
from zcoder.agent import AssistantDelta, AssistantMessage
from zcoder.tui.widgets.transcript import AssistantEntry, Entry, FollowHint, Transcript, system_text

pytestmark = pytest.mark.timeout(60)
SIZE = (100, 30)

LONG_REPLY = "\n\n".join(f"Paragraph {n} of a long reply." for n in range(1, 61))
MARKDOWN_REPLY = """# Findings

Some **bold** words.

| file | lines |
|------|------:|
| hello.py | 1 |

```python
def greet(name):
    return name
```
"""


def wheel(app: Any, *, up: bool, turns: int = 1) -> None:
    transcript = app.transcript
    kind = events.MouseScrollUp if up else events.MouseScrollDown
    for _ in range(turns):
        transcript.post_message(kind(transcript, 5, 5, 0, -1 if up else 1, 0, False, False, False))


def fill(app: Any, count: int = 40) -> None:
    for n in range(count):
        app.show(Entry("system", system_text(f"older line {n}")))


def drawn(entry: Widget) -> list[list[Segment]]:
    """The lines the entry's parts draw (their own rendering, not the terminal's)."""
    lines: list[list[Segment]] = []
    for part in entry.children:
        width, height = part.size
        for strip in part.render_lines(Region(0, 0, width, height)):
            lines.append(list(strip))
    return lines


def drawn_text(entry: Widget) -> str:
    return "\n".join("".join(segment.text for segment in line).rstrip() for line in drawn(entry))


async def test_a_streaming_reply_is_followed_to_its_end(fake, make_config, app_factory):
    # Slowly enough that the reply grows over many frames.
    fake.enqueue(Turn.text(LONG_REPLY, delay=0.005))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "write a lot")
        await wait_until(pilot, lambda: "Paragraph 20 " in transcript_text(app))
        transcript = app.transcript
        assert transcript.scroll_y == transcript.max_scroll_y > 0
        await idle(pilot, app)
        await pilot.pause()
        assert transcript.max_scroll_y > 0
        assert transcript.following
        assert transcript.scroll_y == transcript.max_scroll_y
        assert "Paragraph 60 of a long reply." in drawn_text(entries(app, "assistant")[0])


async def test_scrolled_up_the_view_stays_put_while_output_arrives(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        fill(app)
        await pilot.pause()
        transcript = app.transcript
        assert transcript.following and not app.transcript.hint.display
        wheel(app, up=True, turns=2)
        await pilot.pause()
        assert not transcript.following
        top = transcript.scroll_y
        assert 0 < top < transcript.max_scroll_y
        # A reply streams (its entry grows) and new entries arrive below.
        text = ""
        for n in range(40):
            text += f"streamed paragraph {n}\n\n"
            app.agent_view.on_event(AssistantDelta(f"streamed paragraph {n}\n\n"))
            if n % 10 == 0:
                app.show(Entry("system", system_text(f"newer line {n}")))
            await pilot.pause(0.01)
        app.agent_view.on_event(AssistantMessage(text=text, streamed=True))
        await pilot.pause(0.2)
        assert transcript.scroll_y == top
        assert not transcript.following
        assert app.transcript.hint.display  # "new output below"

        # Back down to the end with the wheel: following again, the hint gone.
        while transcript.scroll_y < transcript.max_scroll_y:
            wheel(app, up=False)
            await pilot.pause()
        assert transcript.following and not app.transcript.hint.display
        app.show(Entry("system", system_text("after the return")))
        await pilot.pause()
        assert transcript.scroll_y == transcript.max_scroll_y


async def test_end_follows_again_unless_it_moves_the_cursor_of_a_typed_prompt(
    fake, make_config, app_factory
):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        fill(app)
        await pilot.pause()
        transcript = app.transcript
        wheel(app, up=True, turns=3)
        await pilot.pause()
        assert not transcript.following

        # Text in the prompt: End is the prompt's (cursor to the end of the line).
        app.prompt_input.load_text("some words")
        app.prompt_input.move_cursor((0, 2))
        await pilot.press("end")
        assert app.prompt_input.cursor_location == (0, 10)
        assert not transcript.following

        # Ctrl+End follows whatever the prompt holds, and leaves the prompt alone.
        await pilot.press("ctrl+end")
        await pilot.pause()
        assert transcript.following and transcript.scroll_y == transcript.max_scroll_y
        assert app.prompt_input.text == "some words"

        # With an empty prompt, End is enough.
        wheel(app, up=True, turns=3)
        await pilot.pause()
        assert not transcript.following
        app.prompt_input.load_text("")
        await pilot.press("end")
        await pilot.pause()
        assert transcript.following and transcript.scroll_y == transcript.max_scroll_y


async def test_a_wheel_turn_with_nothing_to_scroll_keeps_following(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.transcript.max_scroll_y == 0
        wheel(app, up=True, turns=2)
        await pilot.pause()
        fill(app)
        await pilot.pause()
        assert app.transcript.following
        assert app.transcript.scroll_y == app.transcript.max_scroll_y > 0


async def test_another_session_shown_is_followed_from_its_end(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with answered(app, fake, "write a lot", Turn.text(LONG_REPLY), size=SIZE) as pilot:
        first = app.session_id
        assert first is not None
        wheel(app, up=True, turns=3)
        await pilot.pause()
        assert not app.transcript.following
        await pilot.press("ctrl+n")
        await pilot.pause()
        app.sessions.load(first)
        await pilot.pause()
        assert app.transcript.following
        assert app.transcript.scroll_y == app.transcript.max_scroll_y > 0


async def test_a_reply_is_drawn_as_markdown_and_reloads_the_same(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with answered(
        app, fake, "what did you find", Turn.text(MARKDOWN_REPLY), size=SIZE
    ) as pilot:
        await pilot.pause()
        [reply] = entries(app, "assistant")
        assert isinstance(reply, AssistantEntry)
        assert reply.plain == "assistant\n" + MARKDOWN_REPLY  # the text, for /copy and tests
        shown = drawn_text(reply)
        assert shown.startswith("assistant\n")
        assert "Findings" in shown and "# Findings" not in shown
        assert "Some bold words." in shown
        assert " file      lines" in shown and " hello.py      1" in shown
        assert "```" not in shown and "    return name" in shown
        # The code is highlighted: its keyword and its name have colours of their own.
        colours = {
            segment.text.strip(): segment.style.color
            for line in drawn(reply)
            for segment in line
            if segment.style is not None and segment.text.strip() in ("def", "greet")
        }
        assert colours["def"] is not None and colours["greet"] is not None
        assert colours["def"] != colours["greet"]
        streamed = drawn_text(reply)
        session = app.session_id
        assert session is not None
        await pilot.press("ctrl+n")
        await pilot.pause()
        app.sessions.load(session)
        await pilot.pause()
        [again] = entries(app, "assistant")
        assert again is not reply and again.plain == reply.plain
        assert drawn_text(again) == streamed


async def test_escape_bytes_in_a_reply_are_shown_not_sent(fake, make_config, app_factory):
    escapes = Turn.text("Clear \x1b[2J title \x1b]0;owned\x07 done\n\n```\n\x1b[31mred\n```\n")
    app = app_factory(make_config())
    async with answered(app, fake, "hi", escapes, size=SIZE) as pilot:
        await pilot.pause()
        [reply] = entries(app, "assistant")
        shown = drawn_text(reply)
        assert "\\e[2J" in shown and "\\e]0;owned" in shown and "\\e[31mred" in shown
        texts = "".join(segment.text for line in drawn(reply) for segment in line)
        assert "\x1b" not in texts and "\x07" not in texts


async def test_a_stopped_reply_keeps_its_partial_label(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.agent_view.on_event(AssistantDelta("half an **answ"))
        stopped = AssistantMessage(text="half an **answ", streamed=True, partial=True)
        app.agent_view.on_event(stopped)
        await pilot.pause()
        [reply] = entries(app, "assistant")
        assert reply.plain == "assistant (stopped, partial)\nhalf an **answ"
        await wait_until(pilot, lambda: "stopped, partial" in drawn_text(reply))
        assert "half an **answ" in drawn_text(reply)


async def test_a_click_on_the_new_output_line_follows_again(fake, make_config, app_factory):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        fill(app)
        await pilot.pause()
        wheel(app, up=True, turns=3)
        await pilot.pause()
        app.show(Entry("system", system_text("arrived below")))
        await wait_until(pilot, lambda: app.transcript.hint.display)
        await pilot.click(FollowHint)
        await pilot.pause()
        assert app.transcript.following and not app.transcript.hint.display
        assert app.transcript.scroll_y == app.transcript.max_scroll_y


async def test_a_long_streamed_reply_replaced_by_its_final_text_shows_only_that(
    fake, make_config, app_factory
):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        # The session opens (its transcript cleared, the view reset) before anything streams:
        # under load it could come between the pieces and leave two entries.
        await wait_until(pilot, lambda: app.session_id is not None)
        await pilot.pause()
        streamed = "".join(f"Streamed paragraph {n} with some words.\n\n" for n in range(80))
        for piece in streamed.split("\n\n"):
            app.agent_view.on_event(AssistantDelta(piece + "\n\n"))
            await pilot.pause(0.005)
        [reply] = entries(app, "assistant")
        await wait_until(pilot, lambda: "Streamed paragraph 79" in drawn_text(reply))
        assert len(reply.children) > 2  # closed parts, then the growing part
        final = "".join(f"Final paragraph {n}.\n\n" for n in range(60))
        app.agent_view.on_event(AssistantMessage(text=final, streamed=True))
        await pilot.pause(0.2)
        shown = drawn_text(reply)
        assert "Streamed" not in shown
        assert shown.count("Final paragraph") == 60 and "Final paragraph 59." in shown
        assert reply.plain == "assistant\n" + final


class TranscriptHost(App[None]):
    """A transcript alone, to stream into an entry without the rest of the app."""

    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")


@contextlib.asynccontextmanager
async def a_streaming_entry() -> AsyncIterator[tuple[Any, Transcript, AssistantEntry]]:
    """An empty streaming assistant entry, added to a bare transcript and mounted."""
    app = TranscriptHost()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.query_one(Transcript)
        entry = AssistantEntry("", streaming=True)
        transcript.add(entry)
        await pilot.pause()
        yield pilot, transcript, entry


async def test_while_the_user_types_a_streaming_reply_is_redrawn_after_a_pause() -> None:
    async with a_streaming_entry() as (pilot, transcript, entry):
        entry.stream("First words.")
        assert entry.blocks.text == "First words."  # nobody types: drawn at once
        await wait_until(pilot, lambda: entry._timer is None)

        transcript.note_typing()
        entry.stream("First words. And more.")
        assert entry.plain.endswith("And more.")  # the text is current...
        assert entry.blocks.text == "First words."  # ...its drawing waits for a pause
        await wait_until(pilot, lambda: entry.blocks.text == "First words. And more.")


async def test_a_reply_held_too_long_is_drawn_after_a_keys_echo_though_typing_goes_on() -> None:
    import time

    from zcoder.tui.widgets.assistant_entry import TYPING_REDRAW_MAX

    async with a_streaming_entry() as (pilot, transcript, entry):
        await wait_until(pilot, lambda: entry._timer is None)
        transcript.note_typing()
        entry.stream("Held while typing.")
        assert entry.blocks.text == ""
        entry._drawn_at = time.monotonic() - TYPING_REDRAW_MAX  # held for too long now

        def typing_on() -> bool:
            transcript.note_typing()  # a key every check: the pause never comes
            return entry.blocks.text == "Held while typing."

        await wait_until(pilot, typing_on)


async def test_keys_in_the_prompt_tell_the_transcript_the_user_is_typing(
    fake, make_config, app_factory
):
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        before = app.transcript.typed_at
        await pilot.press("h", "i")
        assert app.transcript.typed_at > before
        assert app.prompt_input.text == "hi"


LINES_REPLY = """Changed files:
src/app.py
src/cli.py
tests/test_app.py

1. read the file
2. run the tests
   twice

| file | lines |
|------|------:|
| app.py | 12 |

```
$ make
ok
```
"""


def assert_lines_kept(shown: str) -> None:
    """Issue 27 item 9: a reply's line breaks are lines; lists, tables and code as
    before."""
    rows = [row.strip() for row in shown.splitlines()]
    assert rows[rows.index("Changed files:") + 1 :][:3] == [
        "src/app.py",
        "src/cli.py",
        "tests/test_app.py",
    ]
    assert "src/app.py src/cli.py" not in shown
    steps = ["1 read the file", "2 run the tests", "twice"]
    assert rows[rows.index(steps[0]) :][:3] == steps
    assert "file    lines" in shown and "app.py     12" in shown
    assert "|" not in shown and "```" not in shown
    assert "$ make" in rows and "ok" in rows


async def test_a_replys_line_breaks_are_shown_as_lines_while_it_streams_and_after(
    fake, make_config, app_factory
):
    # While it streams (the server then goes silent, the turn still running) ...
    fake.enqueue(Turn.stall(before=LINES_REPLY, seconds=30))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "what changed")
        await wait_until(pilot, lambda: "ok" in transcript_text(app) and app.busy)
        [reply] = entries(app, "assistant")
        await wait_until(pilot, lambda: "$ make" in drawn_text(reply))
        assert app.busy
        assert_lines_kept(drawn_text(reply))
        await pilot.press("escape")
        await idle(pilot, app)
    # ... and once it has ended.
    fake.enqueue(Turn.text(LINES_REPLY))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "what changed")
        await idle(pilot, app)
        await pilot.pause()
        [reply] = entries(app, "assistant")
        assert_lines_kept(drawn_text(reply))
