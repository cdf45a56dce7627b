"""Escape during a long built-in search, in the real zcoder in a pty: the screen takes
typing while the search runs, Escape stops it, the call shows as interrupted and the
prompt works on.

ripgrep is kept off the program's PATH, so search runs its Python fallback (find_ripgrep
looks only on PATH). The tree is large but cheap: one file of many lines, hard-linked
thousands of times, which the fallback would need minutes to read.
"""

from __future__ import annotations

import os
import shutil

import pytest

from tests.e2e.harness import World
from tests.fixtures.fake_ollama import Turn, call
from zcoder.agent.prompts import INTERRUPTED
from zcoder.sessions import SessionStore

pytestmark = pytest.mark.timeout(120)

ESCAPE = "\x1b"
DIRECTORIES = 80
LINKS_PER_DIRECTORY = 100
LINES_PER_FILE = 20_000


def path_without_ripgrep() -> str:
    kept = [
        entry
        for entry in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
        if entry and not os.path.exists(os.path.join(entry, "rg"))
    ]
    path = os.pathsep.join(kept)
    assert shutil.which("rg", path=path) is None
    return path


def test_escape_stops_a_long_python_search_and_the_prompt_works_on(world: World) -> None:
    server = world.server(demo=False)
    workspace = world.workspace("alpha")
    original = world.root / "hay.txt"
    original.write_text("hay and more hay\n" * LINES_PER_FILE)
    for d in range(DIRECTORIES):
        directory = workspace / f"d{d:02}"
        directory.mkdir()
        for n in range(LINKS_PER_DIRECTORY):
            os.link(original, directory / f"f{n:03}.txt")
    server.enqueue(
        Turn.tool_calls(call("search", {"query": "needle"}, id="s1")),
        Turn.text("stopped searching, still here"),
    )
    a = world.start("alpha", server, PATH=path_without_ripgrep())
    mark = a.mark()
    a.submit("find the needle")
    a.wait_text("— running", since=mark)

    # The search runs in its own thread: the prompt takes typing meanwhile.
    a.send_key("typed during the search")
    a.wait_text("typed during the search", since=mark)
    assert not server.chat_bodies[1:]  # the search has not answered the model

    a.send_key(ESCAPE)
    a.wait_text("— interrupted", since=mark)
    a.wait_text("Stopped", since=mark)
    a.send_key("\r")  # the kept draft is sent, and answered
    a.wait_text("stopped searching, still here", since=mark)
    assert server.chat_bodies[-1]["messages"][-1]["content"] == "typed during the search"
    after = a.mark()
    a.send_key("typed after the stop")
    a.wait_text("typed after the stop", since=after)
    assert a.quit() == 0

    with SessionStore(world.home("alpha")) as store:
        [info] = store.list_sessions(a.workspace, "coding")
        data = store.load(info.id, a.workspace, "coding")
    [event] = [e for e in data.events if e.role == "tool"]
    assert (event.text, event.metadata["status"]) == (INTERRUPTED, "interrupted")
    results = [m["content"] for m in data.messages if m["role"] == "tool"]
    assert results == [INTERRUPTED]
