"""The RelayMessage hook: what it gets, and what its answer does to a relayed message.

Attack tests: a hook that hangs (the message is held at the deadline, not lost), one that
prints 10 MB (bounded, and its refusal's reason is cut), one that fails, a project hook
nobody allowed (never runs), and a wait cancelled mid-hook (the message is held). Each hook
is a real program; the queue is a recording stand-in (the real relay's is in
tests/tui/test_hooks_in_the_app.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import pytest

from tests.hooks.support import entry, marker_script, project_settings, script, write_settings
from tests.tui.test_inbox_ui import envelope
from zcoder.hooks import HookEngine, engine_for, load_hooks
from zcoder.hooks.config import MAX_RELAY_HOOK_SECONDS, RELAY_MESSAGE
from zcoder.hooks.relay_gate import MAX_RECEIPT_REASON, GateVerdict, Judgement, RelayGate
from zcoder.relay import ClaimedMessage

pytestmark = pytest.mark.timeout(60)


class Queue:
    """What the gate did to each message."""

    def __init__(self) -> None:
        self.held: list[str] = []
        self.completed: list[str] = []

    def hold(self, claimed: ClaimedMessage) -> bool:
        self.held.append(claimed.envelope.message_id)
        return True

    def complete(self, claimed: ClaimedMessage) -> None:
        self.completed.append(claimed.envelope.message_id)


def claimed(n: int = 1) -> ClaimedMessage:
    """A message from api (pid 4242, /src/api), verified a live instance, claimed to run."""
    message = dataclasses.replace(envelope(n), sender_kind="instance")
    return ClaimedMessage(sequence=n, envelope=message, path=Path(f"/spool/{n:09d}-4242-{n}.json"))


def user_engine(tmp_path: Path, workspace: Path, body: str, *, timeout: float = 10) -> HookEngine:
    home = tmp_path / "home"
    command = script(tmp_path, "relay", body)
    write_settings(home / "settings.json", {RELAY_MESSAGE: entry(command, "", timeout)})
    engine, problems = engine_for(home, workspace)
    assert engine is not None and not problems
    return engine


async def admit(
    engine: HookEngine | None, message: ClaimedMessage | None = None
) -> tuple[Judgement, Queue]:
    queue = Queue()
    judgement = await RelayGate().admit(engine, message or claimed(), queue)
    return judgement, queue


async def test_the_hook_reads_who_sent_what(tmp_path: Path, workspace: Path) -> None:
    seen = tmp_path / "seen.json"
    engine = user_engine(
        tmp_path, workspace, f"open({str(seen)!r}, 'w').write(json.dumps(payload))"
    )
    judgement, queue = await admit(engine)
    assert judgement.verdict is GateVerdict.RUN and queue.held == queue.completed == []
    payload = json.loads(seen.read_text())
    assert payload["hook_event_name"] == RELAY_MESSAGE and payload["cwd"] == str(workspace)
    assert payload["message"] == "task number 1" and payload["message_id"] == "4242-1"
    assert payload["sender"] == {
        "instance_id": "4242-peer",
        "pid": 4242,
        "name": "api",
        "label": "api (pid 4242, /src/api)",
        "kind": "instance",
        "workspace": "/src/api",
    }


@pytest.mark.parametrize(
    ("body", "verdict", "reason"),
    [
        ("print('not from api', file=sys.stderr); sys.exit(2)", GateVerdict.REFUSE, "not from api"),
        (
            "print(json.dumps({'hookSpecificOutput': {'permissionDecision': 'deny',"
            " 'permissionDecisionReason': 'no deploys'}}))",
            GateVerdict.REFUSE,
            "no deploys",
        ),
        (
            "print(json.dumps({'hookSpecificOutput': {'permissionDecision': 'ask',"
            " 'permissionDecisionReason': 'look first'}}))",
            GateVerdict.HOLD,
            "look first",
        ),
        ("print(json.dumps({'continue': False}))", GateVerdict.HOLD, "a RelayMessage hook held it"),
        (
            "print(json.dumps({'hookSpecificOutput': {'permissionDecision': 'allow'}}))",
            GateVerdict.RUN,
            "",
        ),
        ("sys.exit(1)", GateVerdict.HOLD, "its RelayMessage hook failed"),
        ('print(\'{"decision": "blo\')', GateVerdict.HOLD, "its RelayMessage hook failed"),
    ],
)
async def test_allow_refuse_or_hold(
    tmp_path: Path, workspace: Path, body: str, verdict: GateVerdict, reason: str
) -> None:
    judgement, queue = await admit(user_engine(tmp_path, workspace, body))
    assert (judgement.verdict, judgement.reason) == (verdict, reason)
    assert queue.held == (["4242-1"] if verdict is GateVerdict.HOLD else [])
    assert queue.completed == (["4242-1"] if verdict is GateVerdict.REFUSE else [])


async def test_a_hook_that_hangs_holds_the_message_at_its_deadline(
    tmp_path: Path, workspace: Path
) -> None:
    engine = user_engine(tmp_path, workspace, "time.sleep(600)", timeout=1)
    judgement, queue = await admit(engine)
    assert judgement.verdict is GateVerdict.HOLD and queue.held == ["4242-1"]
    assert any("did not finish in time" in n for n in judgement.notices)


def test_a_relay_hook_never_waits_longer_than_the_cap(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    write_settings(home / "settings.json", {RELAY_MESSAGE: entry("true", "", 600)})
    (command,) = load_hooks(home, workspace).commands_for(RELAY_MESSAGE, "api")
    assert command.timeout == MAX_RELAY_HOOK_SECONDS


async def test_a_hook_that_prints_10_mb_is_bounded(tmp_path: Path, workspace: Path) -> None:
    body = "sys.stdout.write('o' * 10_000_000); sys.stderr.write('e' * 10_000_000); sys.exit(2)"
    judgement, queue = await admit(user_engine(tmp_path, workspace, body))
    assert judgement.verdict is GateVerdict.REFUSE and queue.completed == ["4242-1"]
    assert len(judgement.reason) == MAX_RECEIPT_REASON and judgement.reason.startswith("eee")


async def test_a_project_relay_hook_nobody_allowed_does_not_run(
    tmp_path: Path, workspace: Path
) -> None:
    marker = tmp_path / "ran"
    refuse_all = marker_script(tmp_path, "planted", marker) + "; exit 2"
    write_settings(project_settings(workspace), {RELAY_MESSAGE: entry(refuse_all)})
    engine, _ = engine_for(tmp_path / "home", workspace)
    assert engine is not None
    judgement, queue = await admit(engine)
    assert judgement.verdict is GateVerdict.RUN and queue.completed == []
    assert not marker.exists()


async def test_each_message_is_judged_once(tmp_path: Path, workspace: Path) -> None:
    """A message the hook held and the user then runs from /agents held runs."""
    count = tmp_path / "count"
    body = f"open({str(count)!r}, 'a').write('x'); sys.exit(1)"
    engine = user_engine(tmp_path, workspace, body)
    gate, queue, message = RelayGate(), Queue(), claimed()
    assert (await gate.admit(engine, message, queue)).verdict is GateVerdict.HOLD
    assert (await gate.admit(engine, message, queue)).verdict is GateVerdict.RUN
    assert (await gate.admit(engine, claimed(2), queue)).verdict is GateVerdict.HOLD
    assert count.read_text() == "xx"


async def test_cancelled_while_the_hook_runs_the_message_is_held(
    tmp_path: Path, workspace: Path
) -> None:
    started = tmp_path / "started"
    body = f"open({str(started)!r}, 'w').write('1'); time.sleep(600)"
    engine = user_engine(tmp_path, workspace, body, timeout=30)
    queue = Queue()
    task = asyncio.create_task(RelayGate().admit(engine, claimed(), queue))
    while not started.exists():
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert queue.held == ["4242-1"] and queue.completed == []


async def test_without_relay_hooks_every_message_runs(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    write_settings(home / "settings.json", {"Stop": entry("exit 2")})
    engine, _ = engine_for(home, workspace)
    judgement, queue = await admit(engine)
    assert judgement.verdict is GateVerdict.RUN and queue.held == []
    none, _ = await admit(None)
    assert none.verdict is GateVerdict.RUN
