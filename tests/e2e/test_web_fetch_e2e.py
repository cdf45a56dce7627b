"""fetch_url as a user meets it: the real zcoder in tmux at 60x15, the fake model calling
fetch_url on a loopback web server the settings allow (ZCODER_WEB_ALLOW=127.0.0.1). The
dialog shows the URL and offers ``a`` for that host only; ``a`` (the raw key) fetches the
page and the next page of that host without asking; the model gets the page as a
``<web_page>`` record; ``n`` fetches nothing. Keys are the bytes a terminal sends."""

from __future__ import annotations

import json

import pytest

from tests.e2e.harness import DIALOG_ARMED, World, wait_until
from tests.e2e.tmux import TmuxInstance, start_in_tmux, to_hex
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.fixtures.web_server import INJECTION, WebServer, web_server

__all__ = ["web_server"]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

FETCH = "Fetch this web page?"


def _tool_results(body: dict[str, object]) -> list[str]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [str(m.get("content")) for m in messages if m.get("role") == "tool"]


def _asked(world: World, server: FakeOllama) -> TmuxInstance:
    """zcoder at 60x15 with 127.0.0.1 allowed, a prompt sent, the fetch dialog armed."""
    zc = start_in_tmux(world, "alpha", server, size=(60, 15), ZCODER_WEB_ALLOW="127.0.0.1")
    zc.type_text("read the docs")
    zc.wait_text("read the docs")
    zc.send_hex("0d")
    zc.wait_text(FETCH)
    zc.wait_text(DIALOG_ARMED)
    return zc


def test_a_fetches_the_page_and_that_hosts_next_page_without_asking(
    world: World, web_server: WebServer
) -> None:
    page, text = web_server.url("/page"), web_server.url("/text")
    server = world.server(demo=False)
    server.enqueue(
        Turn.tool_calls(call("fetch_url", {"url": page})),
        Turn.tool_calls(call("fetch_url", {"url": text})),
        Turn.text("read both pages"),
    )
    zc = _asked(world, server)
    screen = zc.screen_text
    assert "/page" in screen and "127.0.0.1" in screen
    assert "[a] allow 127.0.0.1 for this run" in " ".join(screen.split())
    zc.send_hex(to_hex("a"))
    zc.wait_text("read both pages")
    assert web_server.paths() == ["/page", "/text"]  # the second was not asked
    bodies = server.chat_bodies
    assert len(bodies) == 3
    [first] = _tool_results(bodies[1])
    assert first.startswith("<web_page>") and INJECTION in first
    assert "plain words" in _tool_results(bodies[2])[1]
    screen = zc.screen_text
    assert FETCH not in screen
    # The transcript shows the second call's result: the record, as the model got it.
    assert "Status: 200 · text/plain" in screen and "plain words" in screen
    assert "</web_page>" in screen


def test_n_fetches_nothing(world: World, web_server: WebServer) -> None:
    server = world.server(demo=False)
    server.enqueue(
        Turn.tool_calls(call("fetch_url", {"url": web_server.url("/page")})),
        Turn.text("the user said no"),
    )
    zc = _asked(world, server)
    zc.send_hex(to_hex("n"))
    zc.wait_text("the user said no")
    wait_until(lambda: len(server.chat_bodies) == 2, what="the refusal sent back")
    [result] = _tool_results(server.chat_bodies[1])
    assert "denied" in result and "<web_page>" not in result
    assert web_server.requests == []
    assert json.dumps(server.chat_bodies[0]).count("fetch_url") >= 1  # the catalog lists it
