"""A model server that is down is said to be down once, with what to do, and briefly after
that (issue 27 item 17: Ollama down printed the same three-line error three times: at
start-up, in the retry's notice and as the turn's error). The real program in tmux,
against a loopback port nothing listens on."""

from __future__ import annotations

import socket

import pytest

from tests.e2e.harness import World
from tests.e2e.tmux import TMUX, start_in_tmux

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

ADVICE = "start it with `ollama serve`"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_server_down_is_said_once_in_full_then_briefly(world: World) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    zc = start_in_tmux(world, "proj", None, size=(200, 40), OLLAMA_HOST=url)
    zc.wait_text(ADVICE)  # the warm-up at start-up found it down
    zc.submit_and_wait("hi", "(still; see above)")
    screen = zc.screen_text
    assert screen.count(ADVICE) == 1
    assert f"Ollama is not reachable at {url} — retrying once" in screen
    assert f"error: Ollama is not reachable at {url} (still; see above)" in screen
