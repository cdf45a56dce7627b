"""Tools offered on demand, in real turns through the fake Ollama (which records every
request): the model loads one from the catalog, or calls one the catalog lists, and it
joins the end of the tools list, which otherwise stays byte for byte what it was, for
the rest of the session: after compaction, and when the session is resumed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.agent.support import Harness, resumed_agent
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from zcoder.agent import Outcome
from zcoder.model import OllamaClient
from zcoder.sessions import SessionStore
from zcoder.tools.catalog import LOAD_TOOL

PATCH = """\
--- a/alpha.txt
+++ b/alpha.txt
@@ -1 +1 @@
-alpha
+omega
"""


def names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body["tools"]]


def begins_with(after: dict[str, Any], before: dict[str, Any]) -> bool:
    """``after``'s tools list begins with all of ``before``'s, byte for byte."""
    return json.dumps(after["tools"][: len(before["tools"])]) == json.dumps(before["tools"])


async def load_and_patch(harness: Harness) -> list[dict[str, Any]]:
    """A turn in which the model loads apply_patch, then patches alpha.txt."""
    harness.server.enqueue(
        Turn.tool_calls(call(LOAD_TOOL, {"name": "apply_patch"})),
        Turn.tool_calls(call("apply_patch", {"patch": PATCH})),
        Turn.text("patched"),
    )
    finished = await harness.agent.run_user_turn("change alpha to omega")
    assert finished.outcome is Outcome.COMPLETE, finished.error
    return harness.bodies()


async def test_a_loaded_tool_joins_the_end_and_each_request_begins_with_the_last(
    harness: Harness,
) -> None:
    first, second, third = await load_and_patch(harness)
    assert "apply_patch" not in names(first) and names(first)[-1] == LOAD_TOOL
    assert begins_with(second, first)
    assert names(second)[len(names(first)) :] == ["apply_patch"]
    assert third["tools"] == second["tools"]
    assert (harness.workspace / "alpha.txt").read_text() == "omega\n"
    # The next turn keeps it: loaded for the session.
    harness.server.enqueue(Turn.text("still here"))
    await harness.agent.run_user_turn("and now?")
    assert harness.bodies()[-1]["tools"] == second["tools"]


async def test_a_call_to_a_listed_tool_runs_it_and_it_joins_the_end(harness: Harness) -> None:
    harness.server.enqueue(
        Turn.tool_calls(
            call("read_file_range", {"path": "beta.py", "start_line": 1, "end_line": 1})
        ),
        Turn.text("read"),
    )
    await harness.agent.run_user_turn("first line of beta.py?")
    first, second = harness.bodies()
    assert second["messages"][-1]["role"] == "tool"
    assert "print('beta')" in second["messages"][-1]["content"]
    assert begins_with(second, first)
    assert names(second)[len(names(first)) :] == ["read_file_range"]


async def test_compaction_keeps_what_was_loaded(harness: Harness) -> None:
    loaded = (await load_and_patch(harness))[-1]
    for text in ("second", "third"):
        harness.server.enqueue(Turn.text(f"answer to {text}" + " with details" * 200))
        await harness.agent.run_user_turn(f"{text} request")
    harness.server.enqueue(Turn.text("Goals: omega. Files: alpha.txt."))
    result = await harness.agent.compact()
    assert result.compacted
    assert LOAD_TOOL not in json.dumps(harness.agent.messages)  # the load was summarised
    harness.server.enqueue(Turn.text("after compaction"))
    await harness.agent.run_user_turn("fourth request")
    assert harness.bodies()[-1]["tools"] == loaded["tools"]


async def test_a_resumed_session_offers_what_it_loaded(
    harness: Harness, fake: FakeOllama, store: SessionStore, workspace: Path, client: OllamaClient
) -> None:
    loaded = (await load_and_patch(harness))[-1]
    data = harness.load()
    again = resumed_agent(client, store, workspace, data)
    fake.enqueue(Turn.text("resumed"))
    await again.run_user_turn("go on")
    assert fake.chat_bodies[-1]["tools"] == loaded["tools"]
