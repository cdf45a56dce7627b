"""The interactive program in tmux against the real llama.cpp server and SmolLM2-135M.

The keys go through a real terminal (tests/e2e/tmux.py); what happened is read from the
session store (the messages the model was sent and sent back) and the screen. A turn is
over when the session holds the reply and the header's badge says no turn runs.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.e2e.harness import DIALOG_ARMED, World, wait_until
from tests.e2e.tmux import TmuxInstance, start_in_tmux
from tests.real.conftest import RealServer
from zcoder.agent.compaction import is_summary
from zcoder.relay import Relay, load_relay_settings
from zcoder.relay.receipts import OUTCOMES
from zcoder.sessions import SessionStore

pytestmark = pytest.mark.timeout(900)  # the lock on REAL_ROOT may wait for another worker

TURN_TIMEOUT = 240.0
ESCAPE = "\x1b"
RUN_ECHO = (
    "Reply with exactly this and nothing else: <tool_call>"
    '{"name": "run_command", "arguments": {"command": "cat alpha.txt"}}</tool_call>'
)
READ_NOTES = (
    "Reply with exactly this and nothing else: <tool_call>"
    '{"name": "read_file", "arguments": {"path": "notes.txt"}}</tool_call>'
)
STORY = "Write a very long story about a dragon who learns to code."


def start(world: World, env: dict[str, str]) -> TmuxInstance:
    """zcoder in tmux, in the workspace ``ws`` (the one-shot tests' path: the same prompt)."""
    return start_in_tmux(world, "ws", None, **env)  # type: ignore[arg-type]


def stored(instance: TmuxInstance) -> tuple[list[str], list[dict[str, Any]]]:
    """What the user typed (never compacted) and the model's history, as stored now."""
    home = instance.env["ZCODER_HOME"]
    with SessionStore(home) as store:
        infos = store.list_sessions(instance.workspace, "coding")
        if not infos:
            return [], []
        data = store.load(infos[0].id, instance.workspace, "coding")
    return list(data.user_ledger), [dict(m) for m in data.messages]


def messages(instance: TmuxInstance) -> list[dict[str, Any]]:
    """The model's history of the instance's session, as stored now."""
    return stored(instance)[1]


IDLE_BADGES = ("Ready", "Incomplete", "Stopped", "Error", "Blocked", "Loop stopped")
"""The header's badge once a turn is over (zcoder.agent.status)."""


def idle(instance: TmuxInstance) -> bool:
    """No turn running: the header's badge (the relay may be off: no manifest to ask)."""
    header = instance.screen()[0]
    return any(f" {badge} " in header for badge in IDLE_BADGES)


def wait_turn(instance: TmuxInstance, typed: int) -> list[dict[str, Any]]:
    """Until the turn of the ``typed``-th prompt is over; the history then."""

    def over() -> list[dict[str, Any]] | None:
        ledger, history = stored(instance)
        done = len(ledger) >= typed and history and history[-1]["role"] == "assistant"
        return history if done and idle(instance) else None

    try:
        return wait_until(over, timeout=TURN_TIMEOUT, what=f"{instance.name}'s turn {typed}")
    except TimeoutError as exc:
        raise AssertionError(f"{exc}; the screen:\n{instance.screen_text}") from None


def test_a_turn_a_tool_call_approved_with_y_and_escape_mid_reply(
    real_world: World, tool_server: RealServer
) -> None:
    (real_world.workspace("ws") / "alpha.txt").write_text("alpha-of-the-real-test\n")
    a = start(real_world, tool_server.env(ZCODER_MAX_OUTPUT_TOKENS="160", ZCODER_RELAY="off"))

    # The first turn: a command, which needs the user's approval; `y` in the dialog runs it.
    # (First, while the history is empty: that is when this model repeats a call exactly.)
    a.submit(RUN_ECHO)
    a.wait_text(DIALOG_ARMED, timeout=TURN_TIMEOUT)
    a.send_key("y")
    history = wait_turn(a, 1)
    (result,) = [m for m in history if m["role"] == "tool"]
    assert "alpha-of-the-real-test" in result["content"]  # the command ran
    (asked,) = [m for m in history if m.get("tool_calls")]
    assert asked["tool_calls"][0]["id"] == result["tool_call_id"]
    a.wait_text(re.compile(r"ctx [\d.]+k/4k \d+%"))  # the meter: the server's count, its window

    # Escape while the reply streams stops it; the next request is answered as usual.
    a.submit(STORY)
    a.wait_text("Writing reply", timeout=TURN_TIMEOUT)
    a.send_key(ESCAPE)
    a.wait_text("Stopped after", timeout=TURN_TIMEOUT)
    wait_until(lambda: idle(a), timeout=TURN_TIMEOUT, what="the stopped turn's end")
    a.submit("Say hello.")
    history = wait_turn(a, 3)
    assert history[-1]["content"].strip()
    assert "Error" not in a.screen()[0]  # the header's badge


def test_context_shows_the_output_cap_that_the_window_leaves(
    real_world: World, tool_server: RealServer
) -> None:
    a = start(real_world, tool_server.env(ZCODER_RELAY="off"))
    # The window is probed in the background after start; /context reports what is known
    # when it is typed ("Window: unknown" before the probe), so wait for the header's /4k.
    a.wait_text(re.compile(r"ctx ~?[\d.]+k/4k"), timeout=TURN_TIMEOUT)
    a.submit("/context")
    a.wait_text("Window: 4,096 tokens", timeout=TURN_TIMEOUT)
    found = a.wait_text(re.compile(r"Output cap: [\d,]+ tokens \(the window leaves [\d,]+"))
    cap = int(found.split()[2].replace(",", ""))
    assert 1024 <= cap < 4096  # lowered from ZCODER_MAX_OUTPUT_TOKENS (8,192), floor 1,024
    a.wait_text("ZCODER_MAX_OUTPUT_TOKENS is 8,192")


def test_compaction_on_a_2048_token_window_is_triggered_by_the_servers_counts(
    real_world: World, small_window_server: RealServer
) -> None:
    workspace = real_world.workspace("ws")
    words = ["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dogs", "by", "rivers"]
    lines = [" ".join(words[(i + j) % len(words)] for j in range(10)) for i in range(15)]
    (workspace / "notes.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = small_window_server.env(ZCODER_MAX_OUTPUT_TOKENS="32", ZCODER_RELAY="off")
    a = start(real_world, env)

    # The first turn reads a file into the history; by the third or fourth the server's
    # counts put the next request past 85 % of the window, with an older turn to compact
    # (which one depends on how long the model's replies came out).
    a.submit(READ_NOTES)
    history = wait_turn(a, 1)
    assert any(m["role"] == "tool" and "quick brown fox" in m["content"] for m in history)
    compacted_at = None
    for turn in (2, 3, 4):
        a.submit("Say hello.")
        history = wait_turn(a, turn)
        if any(is_summary(m) for m in history):
            compacted_at = turn
            break
    assert compacted_at is not None, f"never compacted; the screen:\n{a.screen_text}"
    assert compacted_at >= 3, "compacted before the history had an older turn to summarise"
    # The request after it fitted: answered, and the server counted it inside the window.
    assert not any(m["role"] == "tool" for m in history)  # the file's turn is summarised
    assert history[-1]["role"] == "assistant"
    found = a.wait_text(re.compile(r"ctx [\d.]+k/2k \d+%"))
    used = float(found.split()[1].split("k/")[0]) * 1000
    assert used < 2048
    assert "Compacted automatically" in a.screen_text
    assert "error" not in a.screen_text.split("Compacted automatically")[-1].lower()


def test_a_relayed_task_runs_on_the_real_model_and_the_sender_gets_its_receipt(
    real_world: World, tool_server: RealServer
) -> None:
    receiver = start(real_world, tool_server.env(ZCODER_MAX_OUTPUT_TOKENS="48"))
    env = real_world.env("sender", None)
    workspace = real_world.workspace("sender")
    sender = Relay(load_relay_settings(env), workspace=workspace, env=env, interactive=True)
    status = sender.start()
    assert status.available, status.reason
    try:
        result = sender.send(receiver.instance_id, "Say hello.")
        assert result.accepted, result.text

        def receipt() -> Any:
            (sent,) = [s for s in sender.receipts.sent() if s.message_id == result.message_id]
            return sent.receipt

        got = wait_until(receipt, timeout=TURN_TIMEOUT, what="the receipt")
    finally:
        sender.stop()
    # What the small model made of the task is its business (a 135M model may well try a
    # tool badly); the protocol is ours: the task ran as a turn and its receipt came back.
    assert got.outcome in OUTCOMES, got
    assert got.in_reply_to == result.message_id
    assert got.target_instance_id == sender.instance_id
    history = messages(receiver)
    tasks = [i for i, m in enumerate(history) if "<agent_relay>" in str(m.get("content"))]
    assert len(tasks) == 1
    assert "Say hello." in history[tasks[0]]["content"]
    assert any(m["role"] == "assistant" for m in history[tasks[0] :])  # the model's turn
