"""``zcoder --acp`` and a command the guard refuses (coding profile), as a prompt-injected
model would send it after the editor's user chose "Allow always": it is asked again, with
the guard's reason and without "Allow always" among the options; choosing that option
anyway, or cancelling, refuses it. Under ``--yes`` too. The agent's $HOME is a private
directory holding a canary.
"""

from __future__ import annotations

import asyncio

import pytest
from acp import text_block

from tests.acp.support import WAIT_SECONDS, RecordingClient, acp_zcoder, new_session
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.test_oneshot import Env
from tests.test_oneshot_guard import WIPE_HOME, canary


@pytest.mark.parametrize(
    ("answer", "flags"),
    [("allow_always", ()), ("cancelled", ("--yes",)), ("allow_always", ("--yes",))],
)
async def test_the_wipe_is_asked_without_allow_always_and_not_run(
    env: Env, fake: FakeOllama, answer: str, flags: tuple[str, ...]
) -> None:
    kept = canary(env)
    fake.enqueue(
        Turn.tool_calls(call("run_command", {"command": "echo harmless"}, id="c1")),
        Turn.tool_calls(call("run_command", {"command": WIPE_HOME}, id="c2")),
        Turn.text("Cleaned."),
    )
    client = RecordingClient(answer)
    async with acp_zcoder(env, fake, client, *flags) as (conn, _):
        session_id = await new_session(conn, env)
        await asyncio.wait_for(
            conn.prompt(session_id=session_id, prompt=[text_block("tidy up")]), WAIT_SECONDS
        )

    assert kept.read_text() == "four years of work\n"
    asked = {a.tool_call.tool_call_id: a for a in client.asked}
    if "--yes" in flags:
        assert list(asked) == ["c2"]  # echo harmless ran unasked
    else:
        assert list(asked) == ["c1", "c2"]  # c1's "Allow always" did not cover c2
    wipe = asked["c2"]
    assert [o.option_id for o in wipe.options] == ["allow_once", "reject_once"]
    shown = wipe.tool_call.content[0].content.text  # type: ignore[index]
    assert "refused by the safety guard: recursive rm on '~'" in shown
    assert wipe.tool_call.raw_input["refused"] is True  # type: ignore[index]
    result = fake.chat_bodies[2]["messages"][-1]["content"]
    assert "refused by the safety guard" in result
    assert client.tool_states("c2")[-1] == "failed"
