"""Compaction through the fake Ollama: manual, automatic, resumed, and big tool outputs."""

from __future__ import annotations

import re
from typing import Any

from tests.agent.support import Harness
from tests.fixtures.envelopes import relayed
from tests.fixtures.fake_ollama import Turn, call
from zcoder.agent import Notice, Outcome
from zcoder.agent.compaction import SUMMARY_OPEN, split_history
from zcoder.model.tokens import estimate_request_tokens

SUMMARY = "Goals: rename users.name. Files: db.py changed. Open work: run the tests."


async def _three_turns(harness: Harness, counts: tuple[int, int, int] = (500, 600, 700)) -> None:
    for text, count in zip(("first", "second", "third"), counts, strict=True):
        # Varied words: a reply repeating one phrase is stopped as a loop (model/repeats.py).
        long_answer = f"answer to {text}" + "".join(f" with detail {n}" for n in range(150))
        harness.server.enqueue(Turn.text(long_answer, prompt_eval_count=count))
        await harness.agent.run_user_turn(f"{text} request")


def _sent_after_a_summary(harness: Harness) -> dict[str, Any]:
    """The last request, checked to carry the summary the request before it asked for."""
    summariser, request = harness.bodies()[-2:]
    assert "Relayed exchanges" in summariser["messages"][0]["content"]
    assert request["messages"][1]["content"].startswith(SUMMARY_OPEN)
    return request


async def _the_fourth_request_goes_after_a_summary(harness: Harness) -> None:
    """The history is compacted before the fourth request, which then completes."""
    harness.server.enqueue(Turn.text(SUMMARY), Turn.text("after compaction"))
    finished = await harness.agent.run_user_turn("fourth request")

    assert finished.outcome is Outcome.COMPLETE
    request = _sent_after_a_summary(harness)
    assert request["messages"][-1]["content"] == "fourth request"


async def test_compact_summarises_older_turns_and_keeps_the_latest(harness: Harness) -> None:
    await _three_turns(harness)
    harness.server.enqueue(Turn.text(SUMMARY))
    result = await harness.agent.compact("the rename")

    assert result.compacted and result.before > result.after
    summariser = harness.bodies()[-1]
    assert "tools" not in summariser or not summariser["tools"]
    assert summariser["messages"][0]["role"] == "system"
    assert "Relayed exchanges" in summariser["messages"][0]["content"]
    assert "focus on: the rename" in summariser["messages"][0]["content"]
    assert "first request" in summariser["messages"][1]["content"]
    assert "third request" not in summariser["messages"][1]["content"]
    messages = harness.agent.messages
    assert messages[0]["content"].startswith(SUMMARY_OPEN) and SUMMARY in messages[0]["content"]
    assert [m["content"][:16] for m in messages[1:]] == [
        "second request",
        "answer to second",
        "third request",
        "answer to third ",
    ]
    assert any("Compacted" in n.text and "→" in n.text for n in harness.log.of(Notice))
    # The user's transcript is whole; the session's model history is the compacted one,
    # so a resumed session goes on from the summary.
    data = harness.load()
    assert [e.text for e in data.events if e.role == "user"] == [
        "first request",
        "second request",
        "third request",
    ]
    assert data.messages == messages
    assert data.user_ledger == ["first request", "second request", "third request"]
    harness.server.enqueue(Turn.text("going on"))
    await harness.agent.run_user_turn("fourth request")
    sent = harness.bodies()[-1]["messages"]
    assert sent[0]["role"] == "system" and sent[1]["content"].startswith(SUMMARY_OPEN)


async def test_relayed_exchanges_reach_the_summariser_labelled_as_relayed(
    harness: Harness,
) -> None:
    harness.server.enqueue(Turn.text("done relayed"))
    await harness.agent.run_relay_turn(
        relayed("update weeklyDigest.ts", sender_project="user-profiles")
    )
    await _three_turns(harness)
    harness.server.enqueue(Turn.text(SUMMARY))
    await harness.agent.compact()
    text = harness.bodies()[-1]["messages"][1]["content"]
    assert "RELAYED TASK (from another zcoder agent, not the user)" in text
    assert "Sender: user-profiles (pid 4242)" in text


async def test_nothing_to_compact_with_only_the_latest_turns(harness: Harness) -> None:
    harness.server.enqueue(Turn.text("hi"))
    await harness.agent.run_user_turn("only one")
    result = await harness.agent.compact()
    assert not result.compacted
    assert len(harness.bodies()) == 1  # no summary was asked for


async def test_compaction_runs_on_its_own_past_the_threshold(harness: Harness) -> None:
    harness.agent.settings.num_ctx = 8192
    # The server's counts say the third request already filled 90% of the window.
    await _three_turns(harness, counts=(2000, 3000, 7400))
    await _the_fourth_request_goes_after_a_summary(harness)
    notices = [n.text for n in harness.log.of(Notice)]
    assert any("nearly full" in n for n in notices)
    assert any(n.startswith("Compacted automatically") for n in notices)


async def test_a_session_resumed_in_a_new_process_compacts_before_its_first_request(
    harness: Harness,
) -> None:
    """No server count yet (a new process): the estimate decides, so the first request of a
    resumed session too big for the window is compacted first, not sent as is."""
    await _three_turns(harness, counts=(2000, 3000, 7400))
    history = list(harness.agent.messages)
    harness.agent.use_session(harness.session_id, history, [])  # as --resume in a new process
    harness.agent.keeper.meter.reset()
    harness.agent.settings.num_ctx = 2048
    await _the_fourth_request_goes_after_a_summary(harness)


async def test_no_automatic_compaction_when_it_is_off(harness: Harness) -> None:
    harness.agent.settings.num_ctx = 8192
    harness.agent.settings.compact_at = None
    await _three_turns(harness, counts=(2000, 3000, 7400))
    harness.server.enqueue(Turn.text("no compaction"))
    await harness.agent.run_user_turn("fourth request")
    assert not any(m["content"].startswith(SUMMARY_OPEN) for m in harness.agent.messages)


async def test_a_tool_output_too_big_for_the_window_is_cut_with_a_way_to_read_the_rest(
    harness: Harness,
) -> None:
    harness.agent.settings.num_ctx = 8192
    (harness.workspace / "big.txt").write_text("".join(f"line {i} of data\n" for i in range(4000)))
    harness.server.enqueue(
        Turn.tool_calls(
            call("read_file_range", {"path": "big.txt", "start_line": 1, "end_line": 4000})
        ),
        Turn.text("read"),
    )
    await harness.agent.run_user_turn("read it")
    result = [m for m in harness.bodies()[-1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "cut here" in result and "read_file_range" in result
    assert "line 1 of data" in result and "line 3999 of data" in result
    assert len(result) < 8192


def test_the_split_never_separates_calls_from_their_results() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "1", "function": {}}]},
        {"role": "tool", "content": "r", "tool_call_id": "1"},
        {"role": "user", "content": "[zcoder] a nudge is not a turn"},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "2", "function": {}}]},
        {"role": "tool", "content": "r", "tool_call_id": "2"},
        {"role": "user", "content": "c"},
    ]
    older, kept = split_history(messages)
    assert [m["content"] for m in older][-1] == "[zcoder] a nudge is not a turn"
    assert kept[0]["content"] == "b" and kept[2]["role"] == "tool"


async def _short_turns(harness: Harness, last_prompt: int, last_reply: int) -> None:
    """Three short turns; the server counts the last one far above zcoder's estimate (a
    tokenizer that splits this text finely, a template that adds much)."""
    for n, text in enumerate(("first", "second", "third")):
        last = n == 2
        harness.server.enqueue(
            Turn.text(
                f"answer to {text}" + "".join(f" a detail {n}" for n in range(70)),  # ~350
                prompt_eval_count=last_prompt if last else 900 * (n + 1),
                eval_count=last_reply if last else 5,
            )
        )
        await harness.agent.run_user_turn(f"{text} request")


async def test_compaction_fires_when_the_server_counted_93_percent(harness: Harness) -> None:
    """Issue 18 item 13: 15,200 of 16,384 tokens measured; the next request is bigger still.
    A prediction from the estimate, scaled at most 4 times, put it near half the window."""
    harness.agent.settings.num_ctx = 16384
    await _short_turns(harness, last_prompt=15000, last_reply=200)
    assert harness.agent.usage_now().used == 15200
    body = harness.bodies()[-1]
    assert estimate_request_tokens(body["messages"], body["tools"]) * 4 < 16384 * 0.85
    await _the_fourth_request_goes_after_a_summary(harness)
    [report] = [n.text for n in harness.log.of(Notice) if n.text.startswith("Compacted")]
    # Like with like: the next request before and after, measured the same way; before is
    # at least what the server counted, and compaction made it smaller.
    before, after = (int(n.replace(",", "")) for n in re.findall(r"~([\d,]+)", report))
    assert before >= 15200 and after < before


async def test_no_compaction_while_the_measured_usage_is_below_the_threshold(
    harness: Harness,
) -> None:
    harness.agent.settings.num_ctx = 16384
    await _short_turns(harness, last_prompt=9000, last_reply=100)
    harness.server.enqueue(Turn.text("no compaction"))
    await harness.agent.run_user_turn("fourth request")
    assert not any(m["content"].startswith(SUMMARY_OPEN) for m in harness.agent.messages)
    assert not [n for n in harness.log.of(Notice) if n.text.startswith("Compact")]


async def test_what_was_added_since_the_last_count_is_predicted_on_top_of_it(
    harness: Harness,
) -> None:
    """80 % measured, then a tool result of a few hundred tokens: the request that carries
    it would pass 85 %, so the history is compacted before it is sent."""
    harness.agent.settings.num_ctx = 16384
    await _short_turns(harness, last_prompt=13000, last_reply=100)
    (harness.workspace / "notes.txt").write_text("some words of a note\n" * 50)  # ~260
    harness.server.enqueue(
        Turn.tool_calls(call("read_file", {"path": "notes.txt"}), prompt_eval_count=13200),
        Turn.text(SUMMARY),
        Turn.text("read it"),
    )
    await harness.agent.run_user_turn("read the notes")
    request = _sent_after_a_summary(harness)
    assert request["messages"][-1]["role"] == "tool"


async def test_the_manual_report_compares_the_same_measure_before_and_after(
    harness: Harness,
) -> None:
    harness.agent.settings.num_ctx = 16384
    await _short_turns(harness, last_prompt=12000, last_reply=50)
    harness.server.enqueue(Turn.text(SUMMARY))
    result = await harness.agent.compact()
    assert result.compacted
    assert result.before >= 12050  # not an estimate far below what the server counted
    assert result.after < result.before
    assert f"~{result.before:,} → ~{result.after:,}" in result.text
