"""notify_when_idle and wait_for_receipt between two real relays: the tool's answers, the
notice given to the model as context, and a wait the turn's cancellation ends at once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.agent.support import Harness, wait_until
from tests.agent.test_relay_tools import _ctx, pair, root
from tests.fixtures.fake_ollama import Turn, call
from tests.fixtures.workspace import short_dir
from zcoder.agent import Outcome, ToolFinished, TurnFinished
from zcoder.agent.relay_waits import NOTIFY_WHEN_IDLE, WAIT_FOR_RECEIPT, register_relay_waits
from zcoder.frontend.relay_inbox import RelayHistory
from zcoder.relay import ClaimedMessage, Relay
from zcoder.relay.registry import read_manifest_file
from zcoder.tools import (
    ToolRegistry,
    ToolResult,
)

__all__ = ["pair", "root", "short_dir"]  # fixtures: me, and a peer "weekly-digest"

WAIT = 30.0


async def _call(me: Relay, root: Path, tool: str, args: dict[str, Any]) -> ToolResult:
    registry = ToolRegistry()
    register_relay_waits(registry, me)
    return await registry.dispatch(tool, args, _ctx(root))


def _sent(pair: tuple[Relay, Relay]) -> tuple[Relay, Relay, str]:
    """(me, beta, the id of a task me sent beta)."""
    me, beta = pair
    assert beta.instance_id is not None
    sent = me.send(beta.instance_id, "run the tests")
    assert sent.status == "accepted" and sent.message_id is not None
    return me, beta, sent.message_id


def _waiting_on(relay: Relay) -> str:
    assert relay.registry is not None
    return read_manifest_file(relay.registry, f"a-{relay.instance_id}.json").waiting_on


async def test_wait_for_receipt_returns_the_outcome_and_summary(
    pair: tuple[Relay, Relay], root: Path
) -> None:
    me, beta, _message_id = _sent(pair)
    claimed = beta.claim_one()
    assert isinstance(claimed, ClaimedMessage)
    registry = ToolRegistry()
    register_relay_waits(registry, me)
    waiting = asyncio.create_task(
        registry.dispatch(
            WAIT_FOR_RECEIPT, {"message_id": "weekly-digest", "timeout_s": WAIT}, _ctx(root)
        )
    )
    await wait_until(lambda: _waiting_on(me) == beta.instance_id, what="waiting_on published")
    await asyncio.to_thread(beta.send_receipt, claimed.envelope, "completed", "all 12 pass")
    result = await asyncio.wait_for(waiting, WAIT)
    assert result.ok
    assert result.output == (
        "Receipt from weekly-digest: completed. Summary (self-reported):\nall 12 pass"
    )
    assert _waiting_on(me) == ""  # the wait is over: nothing published


async def test_wait_for_receipt_says_still_waiting_at_its_timeout(
    pair: tuple[Relay, Relay], root: Path
) -> None:
    me, _beta, message_id = _sent(pair)
    args = {"message_id": message_id, "timeout_s": 0.2}
    result = await _call(me, root, WAIT_FOR_RECEIPT, args)
    assert result.ok and result.output == "still waiting: no receipt from weekly-digest after 0.2 s"
    unknown = await _call(me, root, WAIT_FOR_RECEIPT, {"message_id": "nope-1"})
    assert not unknown.ok and "no message 'nope-1' was sent" in unknown.output


async def test_wait_for_receipt_refuses_a_wait_that_closes_a_cycle(
    pair: tuple[Relay, Relay], root: Path
) -> None:
    me, beta = pair
    assert me.instance_id is not None and beta.instance_id is not None
    assert beta.begin_wait(me.instance_id) is None  # beta waits on me
    _me, _beta, message_id = _sent(pair)
    result = await _call(me, root, WAIT_FOR_RECEIPT, {"message_id": message_id})
    assert not result.ok
    assert result.output == (
        "Error: refused: waiting on weekly-digest would close a cycle: me → weekly-digest → me"
    )


async def test_notify_when_idle_returns_at_once_and_the_notice_reaches_the_model(
    pair: tuple[Relay, Relay], root: Path, harness: Harness
) -> None:
    me, beta = pair
    beta.set_state("busy")
    result = await _call(me, root, NOTIFY_WHEN_IDLE, {"target_instance_id": "weekly-digest"})
    assert result.ok, result.output
    assert "will say once when it is next idle" in result.output
    history = RelayHistory(me, store=lambda: None, session_id=lambda: None, workspace=root)
    assert history.take_receipts(harness.agent) == []
    beta.set_state("ready")
    shown: list[Any] = []

    def arrived() -> bool:
        shown.extend(history.take_receipts(harness.agent))
        return bool(shown)

    await wait_until(arrived, what="the idle notice")
    assert [s.text for s in shown] == ["weekly-digest idle: nothing running or queued"]
    record = harness.agent.messages[-1]["content"]
    assert record.startswith("<agent_receipt>") and "says it is idle now" in record
    assert f"instance {beta.instance_id}" in record


async def test_the_turns_cancellation_ends_a_wait_for_receipt_at_once(
    pair: tuple[Relay, Relay], harness: Harness
) -> None:
    me, beta, message_id = _sent(pair)
    register_relay_waits(harness.agent.registry, me)
    harness.server.enqueue(Turn.tool_calls(call(WAIT_FOR_RECEIPT, {"message_id": message_id})))
    task = asyncio.create_task(harness.agent.run_user_turn("wait for weekly-digest"))
    await wait_until(lambda: _waiting_on(me) == beta.instance_id, what="the wait to start")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert harness.log.of(TurnFinished)[-1].outcome is Outcome.STOPPED
    [finished] = [e for e in harness.log.of(ToolFinished) if e.name == WAIT_FOR_RECEIPT]
    assert finished.status == "interrupted"
    assert _waiting_on(me) == ""
    assert me.receipts._waiters.pop(message_id) == []  # nothing left waiting


async def test_wait_for_receipt_ends_when_the_peer_goes(
    pair: tuple[Relay, Relay], root: Path
) -> None:
    me, beta, message_id = _sent(pair)
    registry = ToolRegistry()
    register_relay_waits(registry, me)
    args = {"message_id": message_id, "timeout_s": WAIT}
    waiting = asyncio.create_task(registry.dispatch(WAIT_FOR_RECEIPT, args, _ctx(root)))
    await wait_until(lambda: _waiting_on(me) == beta.instance_id, what="the wait to start")
    await asyncio.to_thread(beta.stop)  # its manifest and socket go
    result = await asyncio.wait_for(waiting, WAIT)
    assert not result.ok
    assert result.output == "Error: weekly-digest is gone; no receipt will come"
