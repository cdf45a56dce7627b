"""In an editor: /instructions lists the instruction files, /init drafts AGENTS.md and asks
(a permission request) before writing it, and ``@path`` in a prompt attaches the file as
in the terminal, while an embedded resource's text is never scanned for mentions."""

from __future__ import annotations

import pytest
from acp import text_block
from acp.schema import EmbeddedResourceContentBlock, TextResourceContents

from tests.acp.support import RecordingClient, acp_zcoder, new_session
from tests.acp.test_commands import ask
from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.test_oneshot import Env, sessions

DRAFT = "# Agents\n\nRun `make test`.\n"


async def test_instructions_lists_the_files_made_visible_and_asks_no_model(
    env: Env, fake: FakeOllama
) -> None:
    (env.workspace / "CLAUDE.md").write_text("claude rules @missing\x1b[2J.md\n")
    client = RecordingClient()
    async with acp_zcoder(env, fake, client) as (conn, _):
        session_id = await new_session(conn, env)
        assert await ask(conn, session_id, "/instructions") == "end_turn"
    reply = client.reply()
    assert f"1. {env.workspace.resolve() / 'CLAUDE.md'} (29 bytes) · no AGENTS.md here" in reply
    assert "missing\\e[2J.md: there is no such file" in reply and "\x1b" not in reply
    assert fake.chat_bodies == []


@pytest.mark.parametrize(
    ("answer", "said"),
    [("allow_once", "Wrote AGENTS.md (3 lines)"), ("reject_once", "AGENTS.md was not written")],
)
async def test_init_drafts_asks_and_writes_only_when_allowed(
    env: Env, fake: FakeOllama, answer: str, said: str
) -> None:
    fake.enqueue(Turn.text(f"Draft:\n```markdown\n{DRAFT}```"))
    client = RecordingClient(answer=answer)
    async with acp_zcoder(env, fake, client) as (conn, _):
        session_id = await new_session(conn, env)
        assert await ask(conn, session_id, "/init") == "end_turn"
    (asked,) = client.asked
    assert asked.tool_call.title == "/init wants to change AGENTS.md"
    target = env.workspace / "AGENTS.md"
    assert (target.read_text() if target.exists() else None) == (
        DRAFT if answer == "allow_once" else None
    )
    assert said in client.reply()


async def test_an_at_path_in_an_editors_prompt_attaches_the_file(
    env: Env, fake: FakeOllama
) -> None:
    (env.workspace / "notes.txt").write_text("NOTE-CONTENT\n")
    fake.enqueue(Turn.text("Read it."))
    client = RecordingClient()
    embedded = EmbeddedResourceContentBlock(
        type="resource",
        resource=TextResourceContents(uri="file:///x/a.py", text="@decorated\ndef f(): ...\n"),
    )
    async with acp_zcoder(env, fake, client) as (conn, _):
        session_id = await new_session(conn, env)
        await conn.prompt(
            session_id=session_id, prompt=[text_block("what is in @notes.txt?"), embedded]
        )
    sent = fake.chat_bodies[0]["messages"][-1]["content"]
    assert '<file path="notes.txt">\nNOTE-CONTENT\n</file>' in sent
    assert "decorated was not attached" not in str(client.updates)
    assert "📎 notes.txt (13 bytes, 1 line)" in str(client.updates)
    (data,) = sessions(env)
    assert data.user_ledger[0].startswith("what is in @notes.txt?")
    assert "NOTE-CONTENT" not in data.user_ledger[0]
