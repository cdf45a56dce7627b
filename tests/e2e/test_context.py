"""The context meter and /context, on a real terminal: the program in a pseudo-terminal."""

from __future__ import annotations

import re

import pytest

from tests.e2e.harness import World
from tests.fixtures.fake_ollama import Turn

pytestmark = pytest.mark.timeout(60)


def test_the_header_meter_shows_the_servers_count_after_a_reply(world: World) -> None:
    server = world.server(demo=False)
    server.enqueue(Turn.text("counted", prompt_eval_count=1500, eval_count=40))
    a = world.start("alpha", server)
    a.wait_text(re.compile(r"ctx ~\d"))  # an estimate before the first reply

    mark = a.mark()
    a.submit("count me")
    a.wait_text("counted", since=mark)
    a.wait_text(re.compile(r"ctx 1\.5k/\d+k \d+%"), since=mark)

    mark = a.mark()
    a.submit("/context")
    a.wait_text("tool schemas", since=mark)
    a.wait_text("The server counted 1,540 tokens", since=mark)
