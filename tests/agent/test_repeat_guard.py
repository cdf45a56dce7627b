"""A reply that loops on the same text is cut while it streams (zcoder.model.repeats):
the response is closed, what came before is kept with the loop once, the user and the
model are told, and the turn ends Incomplete. A long reply that repeats legitimately
(a table, code with braces and blank lines) streams to its end."""

from __future__ import annotations

from tests.agent.support import Harness
from tests.fixtures.fake_ollama import ENDLESS_PIECE, Turn
from zcoder.agent import AssistantMessage, ErrorNotice, Outcome


async def test_a_server_streaming_a_loop_is_cut_and_the_turn_ends_incomplete(
    harness: Harness,
) -> None:
    harness.server.enqueue(Turn.endless(before="Packages: "))  # ENDLESS_PIECE until hung up
    finished = await harness.agent.run_user_turn("which packages?")
    assert finished.outcome is Outcome.INCOMPLETE
    assert f"repeated {ENDLESS_PIECE.strip()!r}" in finished.error
    assert harness.server.wait_for_disconnect()  # the looping response was closed
    (shown,) = harness.log.of(AssistantMessage)
    assert shown.partial
    assert shown.text.startswith("Packages: and more\n\n[zcoder stopped this reply: the text")
    assert shown.text.count("and more") == 1  # the loop once
    assert any("Incomplete" in e.text for e in harness.log.of(ErrorNotice))

    # The model reads its reply as cut, with the reason, on the next request.
    harness.server.enqueue(Turn.text("Sorry."))
    await harness.agent.run_user_turn("go on")
    replies = [m for m in harness.bodies()[-1]["messages"] if m["role"] == "assistant"]
    assert replies[-1]["content"] == shown.text


async def test_a_long_table_and_code_with_repeated_lines_stream_to_their_end(
    harness: Harness,
) -> None:
    table = "| name | size |\n|---|---|\n" + "".join(f"| f{n}.py | {n} |\n" for n in range(80))
    code = "".join(f"if (a{n}) {{\n  if (b) {{\n    go();\n  }}\n}}\n\n\n" for n in range(40))
    reply = table + "\n" + "}\n" * 30 + code
    harness.server.enqueue(Turn.text(reply))
    finished = await harness.agent.run_user_turn("a table and code")
    assert finished.outcome is Outcome.COMPLETE
    (shown,) = harness.log.of(AssistantMessage)
    assert shown.text == reply and not shown.partial


async def test_reasoning_that_loops_is_cut_too(harness: Harness) -> None:
    loop = "Let me check numpy-2.12-py38-py38, " * 60
    harness.server.enqueue(Turn.thinking(loop, "never reached"))
    finished = await harness.agent.run_user_turn("which numpy?")
    assert finished.outcome is Outcome.INCOMPLETE
    assert "repeated" in finished.error
    assert not any("never reached" in m.text for m in harness.log.of(AssistantMessage))
