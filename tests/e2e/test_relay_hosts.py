"""A model's send to an agent on another machine (relay.hosts), in tmux: the user's dialog
names the host, the key that answers it is the terminal's own byte, and the message
reaches the receiver behind a real sshd (tests/fixtures/far_side.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.e2e.harness import World, wait_until
from tests.e2e.tmux import start_in_tmux
from tests.fixtures.fake_ollama import Turn, call
from tests.fixtures.far_side import Sides, far_and_near
from tests.fixtures.model_requests import tool_results
from tests.fixtures.sshd import available
from zcoder.relay import ClaimedMessage

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(available() is not None, reason=str(available())),
]
CONFIRM = "Send this message to another zcoder agent?"


@pytest.fixture
def sides() -> Iterator[Sides]:
    with far_and_near() as made:
        yield made


@pytest.mark.parametrize("size", [(140, 40), (60, 15)], ids=["140x40", "60x15"])
def test_a_send_to_a_listed_host_is_asked_with_its_host_and_arrives_there(
    world: World, sides: Sides, size: tuple[int, int]
) -> None:
    receiver = sides.receiver()
    server = world.server(demo=False)
    home = world.home("here")
    home.mkdir(mode=0o700, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"relay": {"hosts": [sides.host]}}))
    target = f"{sides.host}:far"
    server.enqueue(
        Turn.tool_calls(call("send_agent_message", {"target": target, "message": "run it"})),
        Turn.text("Handed over."),
    )
    try:
        tui = start_in_tmux(
            world,
            "here",
            server,
            size=size,
            ZCODER_SSH=sides.here["ZCODER_SSH"],
            ZCODER_REMOTE_ZCODER=sides.remote_zcoder,
        )
        mark = tui.submit_and_wait("Ask far to run it", CONFIRM)
        tui.wait_text(f"on {sides.host}", since=mark)  # the dialog says the host
        assert receiver.claim_one() is None  # nothing went before the answer
        tui.answer_dialog("y", since=mark)  # the byte the terminal sends for y
        tui.wait_text("Handed over.", since=mark)
        claimed = wait_until(receiver.claim_one, what="the message on the far side")
        assert isinstance(claimed, ClaimedMessage)
        # Its receipt comes back over the same ssh, into this transcript, escaped.
        assert receiver.send_receipt(claimed.envelope, "completed", "3 passed\x1b[2J") == (
            "accepted"
        )
        tui.wait_text(f"{sides.host}:far", since=mark)
        tui.wait_text("passed\\e[2J", since=mark)  # the ESC shown as text
    finally:
        receiver.stop()
    assert claimed.envelope.body == "run it" and claimed.envelope.sender_kind == "send"
    result = tool_results(server.chat_bodies[1])[-1]
    assert result.startswith(f"Message accepted by far ({receiver.instance_id})")
