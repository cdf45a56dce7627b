"""Fixtures for the end-to-end tests (the private ``world`` is tests/conftest.py's): a relay
in the test process, and beta with such a relay to send it tasks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

import pytest

from tests.e2e.harness import Instance, World
from tests.fixtures.fake_ollama import FakeOllama
from zcoder.relay import Relay, load_relay_settings

SenderFactory = Callable[[str], Relay]


@pytest.fixture
def sender_relay(world: World) -> Iterator[SenderFactory]:
    """A relay started in this test process: a legitimate, registered sender.

    The receiver checks that a sender has a live manifest in the registry and that the
    connecting process is the sender's pid; a Relay started here satisfies both. It is
    interactive (it holds a lock on its workspace), so the receiver knows it as an
    instance, by its name (zcoder.relay.standing), as it would a real zcoder.
    """
    started: list[Relay] = []

    def factory(name: str) -> Relay:
        env = world.env(name, None)
        relay = Relay(
            load_relay_settings(env), workspace=world.workspace(name), env=env, interactive=True
        )
        started.append(relay)
        status = relay.start()
        assert status.available, status.reason
        return relay

    yield factory
    for relay in started:
        relay.stop()


class RelayedBeta(NamedTuple):
    """beta (a real zcoder), its own fake Ollama, and gamma: a relay that sends it tasks."""

    instance: Instance
    server: FakeOllama
    sender: Relay


RelayedFactory = Callable[..., RelayedBeta]


@pytest.fixture
def relayed_beta(world: World, sender_relay: SenderFactory) -> RelayedFactory:
    """Starts beta, then a sender relay (``gamma`` unless named); ``demo`` has beta's fake
    Ollama answer with the demo brain once its scripted turns run out."""

    def start(*, demo: bool = False, sender: str = "gamma") -> RelayedBeta:
        server = world.server(demo=demo)
        return RelayedBeta(world.start("beta", server), server, sender_relay(sender))

    return start
