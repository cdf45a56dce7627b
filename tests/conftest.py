"""Fixtures the test folders share, written once: pytest gives each test the one a
folder's conftest.py or the test's own module does not override.

- ``fake``, ``client``, ``openai_options``, ``openai_fake``, ``openai_client``: the fake
  model servers and real clients of them (tests/fixtures/model_clients.py);
- ``home``, ``workspace``: a private zcoder home and an empty project under tmp_path
  (tests/fixtures/workspace.py);
- ``world``: the end-to-end harness's private world (tests/e2e/harness.py);
- ``real_servers``: the real model's server of a kind, one a worker at a time
  (tests/fixtures/real_server.py), for tests/real and the backend contract suite.

Hypothesis runs without its per-example deadline everywhere: a deadline is a timed
assertion, and under CI's load a first example can take half a second (it failed
tests/relay/test_trust.py once so).

A suite started in the background (``cmd &`` in a script, ``nohup``) inherits SIGINT and
SIGHUP ignored, and every program it starts would too: the tests that press Ctrl+C or
hang up on zcoder would wait for nothing. Here they are given back their default (an
ignored signal stays ignored across exec; a caught one does not), in pytest and in each
of its workers.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest
from hypothesis import settings

from tests.e2e.harness import World
from tests.e2e.harness import world as make_world
from tests.fixtures import model_clients, real_server
from tests.fixtures.workspace import home, workspace

__all__ = ["home", "workspace"]

settings.register_profile("zcoder", deadline=None)
settings.load_profile("zcoder")

for _number in (signal.SIGINT, signal.SIGHUP):
    if signal.getsignal(_number) is signal.SIG_IGN:
        signal.signal(
            _number, signal.default_int_handler if _number == signal.SIGINT else signal.SIG_DFL
        )

fake = model_clients.fake
client = model_clients.client
openai_options = model_clients.openai_options
openai_fake = model_clients.openai_fake
openai_client = model_clients.openai_client
real_servers = real_server.real_servers


@pytest.fixture
def world() -> Iterator[World]:
    """Registry, workspaces, fake Ollamas and zcoder processes; all gone after the test."""
    with make_world() as w:
        yield w
