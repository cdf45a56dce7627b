"""Watches between real relays: one notice when the peer is next idle, unforgeable,
bounded, dropped when either side goes, and one `unsupported` from zcoder.zsh."""

from __future__ import annotations

import os
from typing import Any

from tests.relay.conftest import RelayFactory
from tests.relay.wire import send_json
from zcoder.relay import ClaimedMessage, Relay
from zcoder.relay.watching import GONE, IDLE, TIMEOUT

WAIT = 30.0  # a deadline for what must happen, never a sleep


def _notices(relay: Relay, count: int = 1) -> list[Any]:
    """Wait (with a deadline) until ``count`` notices arrived; all of them."""
    got: list[Any] = []
    import time

    deadline = time.monotonic() + WAIT
    while len(got) < count and time.monotonic() < deadline:
        got += relay.take_idle_notices()
    return got


def test_a_watch_on_a_busy_peer_fires_once_when_it_goes_idle(make_relay: RelayFactory) -> None:
    alpha, beta = make_relay("alpha"), make_relay("beta")
    assert beta.instance_id is not None
    beta.set_state("busy")
    result = alpha.watch(beta.instance_id)
    assert result.status == "accepted", result.text
    assert alpha.wait_idle(result, 0.3) == TIMEOUT  # busy: no notice
    beta.set_state("ready")
    assert alpha.wait_idle(result, WAIT) == IDLE
    ((notice, sent),) = alpha.take_idle_notices()
    assert notice.in_reply_to == result.message_id
    assert notice.sender_instance_id == beta.instance_id and sent.target_label == "beta"
    beta.set_state("busy")
    beta.set_state("ready")  # idle again: the watch fired already, nothing more comes
    assert alpha.take_idle_notices() == []
