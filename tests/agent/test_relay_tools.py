"""send_agent_message's arguments: the design's ``target_instance_id``, and ``target`` too.

Two real relays in a private registry; the tool is dispatched through the real registry,
so the schema's validation is the one a model's call meets. A call the model writes as
text is recovered (zcoder.model.recovery) under either name too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent.support import Harness
from tests.fixtures.approver import ScriptedApprover
from tests.fixtures.fake_ollama import Turn
from tests.fixtures.workspace import short_dir
from zcoder.agent import Outcome
from zcoder.agent.relay_tools import (
    RELAY_SENDER_KEY,
    SEND_AGENT_MESSAGE,
    register_relay_tools,
    restrict_schemas,
)
from zcoder.relay import ClaimedMessage, Peer, Relay, load_relay_settings
from zcoder.tools import (
    ApprovalPolicy,
    CommandPolicy,
    Profile,
    ToolContext,
    ToolRegistry,
    ToolResult,
    TurnOrigin,
)

__all__ = ["short_dir"]  # the fixture root stands on (tests.fixtures.workspace)


class Confirmer:
    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []
        self.steers: list[bool] = []

    async def confirm_send(self, peer: Peer, message: str, *, steer: bool = False) -> bool:
        self.asked.append((peer.instance_id, message))
        self.steers.append(steer)
        return True


@pytest.fixture
def root(short_dir: Path) -> Path:
    return short_dir  # short: socket paths are short


def _relay(root: Path, name: str, **kwargs: Any) -> Relay:
    """A started relay working in ``root/name``; ``kwargs`` go to Relay (home, interactive)."""
    env = {"ZCODER_HOME": str(root / "home"), "ZCODER_RELAY_DIR": str(root / "reg")}
    workspace = root / name
    workspace.mkdir()
    relay = Relay(
        load_relay_settings(env), workspace=workspace, env={**os.environ, **env}, **kwargs
    )
    relay.start()
    assert relay.available, relay.status().reason
    return relay


@pytest.fixture
def pair(root: Path) -> Iterator[tuple[Relay, Relay]]:
    me, peer = _relay(root, "me"), _relay(root, "weekly-digest")
    try:
        yield me, peer
    finally:
        me.stop()
        peer.stop()


def _tools(me: Relay) -> tuple[ToolRegistry, Confirmer]:
    registry = ToolRegistry()
    confirmer = Confirmer()
    register_relay_tools(registry, me, confirmer)
    return registry, confirmer


def _ctx(root: Path, origin: TurnOrigin = TurnOrigin.USER, **extras: Any) -> ToolContext:
    return ToolContext(
        workspace=root / "me",
        profile=Profile.CODING,
        origin=origin,
        approval=ApprovalPolicy(CommandPolicy.ASK, Profile.CODING),
        approver=ScriptedApprover(),
        extras=dict(extras),
    )


async def _send(me: Relay, root: Path, arguments: dict[str, Any]) -> tuple[ToolResult, Confirmer]:
    """send_agent_message from ``me`` in the user's turn; its result and who confirmed what."""
    registry, confirmer = _tools(me)
    result = await registry.dispatch(SEND_AGENT_MESSAGE, arguments, _ctx(root))
    return result, confirmer


def _bodies(relay: Relay) -> list[str]:
    bodies = []
    while (claimed := relay.claim_one()) is not None:
        assert isinstance(claimed, ClaimedMessage), claimed  # never quarantined
        bodies.append(claimed.envelope.body)
    return bodies


def test_the_schema_names_target_instance_id_as_the_design_does(
    pair: tuple[Relay, Relay], root: Path
) -> None:
    registry, _ = _tools(pair[0])
    [schema] = [
        s for s in registry.schemas(_ctx(root)) if s["function"]["name"] == SEND_AGENT_MESSAGE
    ]
    parameters = schema["function"]["parameters"]
    assert set(parameters["properties"]) == {"target_instance_id", "message", "delivery"}
    assert parameters["required"] == ["target_instance_id", "message"]  # the seed's two
    assert parameters["properties"]["delivery"]["enum"] == ["queue", "steer"]
    assert "x-aliases" not in parameters  # checked by the registry, never sent
    described = parameters["properties"]["target_instance_id"]["description"]
    assert "instance id" in described and "name" in described


async def test_a_steer_says_what_the_receiver_will_do_with_it(
    pair: tuple[Relay, Relay], root: Path
) -> None:
    me, peer = pair
    peer.set_state("busy")  # a turn runs there, but `me` is no trusted instance of peer's
    arguments = {"target_instance_id": peer.instance_id, "message": "look", "delivery": "steer"}
    result, asked = await _send(me, root, arguments)
    assert result.ok, result.output
    assert result.metadata["delivery"] == "queue"
    assert "not steered" in result.output and "queued at position 1" in result.output
    plain, asked_plain = await _send(
        me, root, {"target_instance_id": peer.instance_id, "message": "m"}
    )
    assert plain.metadata["delivery"] == "" and "steer" not in plain.output
    assert (asked.steers, asked_plain.steers) == ([True], [False])  # the user was told
    assert _bodies(peer) == ["look", "m"]


async def test_an_unknown_delivery_sends_nothing(pair: tuple[Relay, Relay], root: Path) -> None:
    me, peer = pair
    arguments = {"target_instance_id": peer.instance_id, "message": "x", "delivery": "now"}
    result, confirmer = await _send(me, root, arguments)
    assert not result.ok and "'delivery' must be one of" in result.output
    assert confirmer.asked == [] and _bodies(peer) == []


@pytest.mark.parametrize("key", ["target_instance_id", "target"])
async def test_a_call_with_the_designs_argument_or_the_alias_is_delivered(
    pair: tuple[Relay, Relay], root: Path, key: str
) -> None:
    me, peer = pair
    message = f"sent with {key}"
    result, confirmer = await _send(me, root, {key: peer.instance_id, "message": message})
    assert result.ok, result.output
    assert confirmer.asked == [(peer.instance_id, message)]
    assert _bodies(peer) == [message]


async def test_a_unique_name_is_accepted_as_the_target_instance_id(
    pair: tuple[Relay, Relay], root: Path
) -> None:
    me, peer = pair
    result, _ = await _send(me, root, {"target_instance_id": "weekly-digest", "message": "hi"})
    assert result.ok, result.output
    assert _bodies(peer) == ["hi"]


async def test_two_different_targets_in_one_call_are_refused_and_nothing_is_sent(
    pair: tuple[Relay, Relay], root: Path
) -> None:
    me, peer = pair
    arguments = {"target_instance_id": peer.instance_id, "target": "someone-else", "message": "hi"}
    result, confirmer = await _send(me, root, arguments)
    assert not result.ok and "target_instance_id" in result.output
    assert confirmer.asked == [] and _bodies(peer) == []


async def test_a_missing_target_names_the_designs_argument(
    pair: tuple[Relay, Relay], root: Path
) -> None:
    result, _ = await _send(pair[0], root, {"message": "hi"})
    assert not result.ok and "target_instance_id" in result.output


async def test_in_a_relayed_turn_both_spellings_reach_only_the_sender(
    pair: tuple[Relay, Relay], root: Path
) -> None:
    me, peer = pair
    registry, _ = _tools(me)
    ctx = _ctx(root, TurnOrigin.RELAY, **{RELAY_SENDER_KEY: peer.instance_id})
    [schema] = [
        s
        for s in restrict_schemas(registry.schemas(ctx), ctx)
        if s["function"]["name"] == SEND_AGENT_MESSAGE
    ]
    target = schema["function"]["parameters"]["properties"]["target_instance_id"]
    assert target["enum"] == [peer.instance_id]
    assert "x-aliases" not in schema["function"]["parameters"]  # never sent in this turn either
    for key in ("target_instance_id", "target"):
        refused = await registry.dispatch(
            SEND_AGENT_MESSAGE, {key: "weekly-digest", "message": "by name"}, ctx
        )
        assert not refused.ok
        sent = await registry.dispatch(
            SEND_AGENT_MESSAGE, {key: peer.instance_id, "message": f"reply {key}"}, ctx
        )
        assert sent.ok, sent.output
    assert _bodies(peer) == ["reply target_instance_id", "reply target"]


@pytest.mark.parametrize("key", ["target_instance_id", "target"])
async def test_a_call_written_as_text_with_either_argument_name_is_recovered_and_delivered(
    pair: tuple[Relay, Relay], harness: Harness, key: str
) -> None:
    me, peer = pair
    confirmer = Confirmer()
    register_relay_tools(harness.agent.registry, me, confirmer)
    written = json.dumps(
        {"name": SEND_AGENT_MESSAGE, "arguments": {key: peer.instance_id, "message": "lint"}}
    )
    harness.server.enqueue(Turn.text(f"```json\n{written}\n```"), Turn.text("asked"))
    finished = await harness.agent.run_user_turn("ask weekly-digest to lint")

    assert finished.outcome is Outcome.COMPLETE, finished.error
    assert confirmer.asked == [(peer.instance_id, "lint")]
    assert _bodies(peer) == ["lint"]
    [assistant] = [m for m in harness.bodies()[1]["messages"] if m["role"] == "assistant"]
    [recovered] = assistant["tool_calls"]
    assert recovered["id"].startswith("recovered_")
    # The call is recorded in the model's words; dispatch reads the other name.
    assert recovered["function"]["arguments"] == {key: peer.instance_id, "message": "lint"}
