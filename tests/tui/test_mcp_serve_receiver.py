"""A task another agent sends through ``zcoder mcp serve``, as an interactive zcoder gets it.

The MCP SDK's client drives ``zcoder mcp serve``; the receiver is the real app with a fake
model. It shows the message as ``via MCP from <client>``, runs it (or holds it, when its
user said so) and, once the turn has ended, its receipt reaches the waiting client.
"""

from __future__ import annotations

import os

import pytest

from tests.fixtures.fake_ollama import Turn
from tests.fixtures.mcp_serve import call, message_id_of, serving
from tests.tui.conftest import idle, transcript_text, wait_until
from tests.tui.support import relay_ready
from zcoder.relay import ClaimedMessage

pytestmark = pytest.mark.timeout(90)


async def test_a_task_from_an_mcp_client_runs_and_its_receipt_comes_back(
    fake, make_config, app_factory, env, short_dir
):
    caller = short_dir / "caller"
    caller.mkdir()
    app = app_factory(make_config())
    async with app.run_test(size=(160, 50)) as pilot:
        await relay_ready(pilot, app)
        fake.enqueue(Turn.text("Renamed users.name; the 3 focused tests pass."))
        async with serving({**os.environ, **env}, caller, client="codex") as session:
            text, error = await call(
                session, "send_agent_message", target="project", message="rename users.name"
            )
            assert not error, text
            await wait_until(pilot, lambda: len(fake.chat_bodies) == 1)
            await idle(pilot, app)
            shown = transcript_text(app)
            assert "via MCP from codex, pid" in shown and f"from {caller}" in shown
            assert "rename users.name" in str(fake.chat_bodies[0])
            receipt, error = await call(
                session, "wait_for_receipt", message_id=message_id_of(text), timeout_seconds=60
            )
        assert not error
        assert ": completed" in receipt
        assert "Renamed users.name; the 3 focused tests pass." in receipt


async def test_a_receiver_that_holds_keeps_an_mcp_task_for_its_user(
    make_config, app_factory, env, short_dir
):
    app = app_factory(make_config(env={"ZCODER_RELAY_INBOUND": "hold"}))
    async with app.run_test(size=(160, 50)) as pilot:
        await relay_ready(pilot, app)
        async with serving({**os.environ, **env}, short_dir, client="claude-code") as session:
            text, error = await call(
                session, "send_agent_message", target="project", message="delete the logs"
            )
            assert not error, text
            await wait_until(pilot, lambda: "is held for you" in transcript_text(app))
            assert app.relay is not None
            (held,) = [m for m in app.relay.held() if isinstance(m, ClaimedMessage)]
            label = f"via MCP from claude-code, pid {held.envelope.sender_pid}, from {short_dir}"
            assert f"A message {label} is held for you" in transcript_text(app)
            receipt, error = await call(
                session, "wait_for_receipt", message_id=message_id_of(text), timeout_seconds=0
            )
            assert not error and receipt.startswith("No receipt")
