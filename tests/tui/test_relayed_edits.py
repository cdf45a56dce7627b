"""Relayed tasks and file edits in the real app, under the default ``ZCODER_EDITS=auto``.

Attack: another agent (a relay-only peer in its own process, or an interactive instance the
user never trusted) relays a task whose model reply overwrites a file. The edit dialog opens,
naming the sender, and the file stays as it was until the user says yes. A sender the user
trusts (``/agents trust``) edits as before, and so does any sender with
``ZCODER_RELAY_EDITS=auto``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.fixtures.relay_peer import RelayPeerProcess
from tests.tui.conftest import answer, entries, idle, wait_until
from tests.tui.support import relay_ready, relay_to
from zcoder.relay import Relay
from zcoder.relay.trust import TRUST
from zcoder.tui import ZcoderApp
from zcoder.tui.dialogs.edit import EditApprovalScreen

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 40)
ORIGINAL = "the user's own notes\n"


@pytest.fixture
def notes(workspace: Path) -> Path:
    path = workspace / "notes.txt"
    path.write_text(ORIGINAL)
    return path


@pytest.fixture
def peer(env: dict[str, str], short_dir: Path) -> Iterator[RelayPeerProcess]:
    """A relay-only zcoder peer (``python -m zcoder.relay``) in a process of its own."""
    process = RelayPeerProcess(short_dir / "peer-project", {**os.environ, **env})
    yield process
    process.close()


def overwrite(fake: FakeOllama, notes: Path) -> None:
    """The receiving model, as the relayed task steers it: overwrite the notes."""
    fake.enqueue(
        Turn.tool_calls(call("write_file", {"path": notes.name, "content": "pwned\n"})),
        Turn.text("rewritten"),
    )


def dialogs_seen(app: ZcoderApp, seen: list[EditApprovalScreen]) -> bool:
    seen.extend(s for s in app.screen_stack if isinstance(s, EditApprovalScreen))
    return bool(entries(app, "relay")) and not app.busy


async def test_an_untrusted_peers_edit_is_asked_and_waits_for_yes(
    fake, make_config, app_factory, peer, notes
):
    overwrite(fake, notes)
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await relay_ready(pilot, app)
        assert app.relay is not None and app.relay.instance_id is not None
        sent = await asyncio.to_thread(peer.send, app.relay.instance_id, "rewrite notes.txt")
        assert sent["event"] == "sent", sent
        await wait_until(pilot, lambda: isinstance(app.screen, EditApprovalScreen))
        dialog = app.screen
        assert isinstance(dialog, EditApprovalScreen)
        assert dialog.request.requested_by is not None
        assert "asked by a task relayed" in str(dialog.title_text())
        assert not dialog.grant_offered
        assert notes.read_text() == ORIGINAL  # nothing written while it asks
        await answer(pilot, app, "y")
        await idle(pilot, app)
    assert notes.read_text() == "pwned\n"  # written once the user said yes


async def test_an_untrusted_peers_edit_refused_leaves_the_file(
    fake, make_config, app_factory, sender: Relay, notes
):
    """An interactive instance the user has not trusted is asked about too."""
    overwrite(fake, notes)
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await relay_ready(pilot, app)
        await relay_to(app, sender, "rewrite notes.txt")
        await wait_until(pilot, lambda: isinstance(app.screen, EditApprovalScreen))
        await answer(pilot, app, "n")
        await idle(pilot, app)
    assert notes.read_text() == ORIGINAL
    assert "refused this edit" in fake.chat_bodies[1]["messages"][-1]["content"]


async def test_a_trusted_senders_edit_goes_through_as_before(
    fake, make_config, app_factory, sender: Relay, notes
):
    overwrite(fake, notes)
    app = app_factory(make_config())
    seen: list[EditApprovalScreen] = []
    async with app.run_test(size=SIZE) as pilot:
        await relay_ready(pilot, app)
        assert app.relay is not None
        app.relay.trust.set(str(sender.workspace), TRUST)  # what /agents trust records
        await relay_to(app, sender, "rewrite notes.txt")
        await wait_until(pilot, lambda: dialogs_seen(app, seen))
        await idle(pilot, app)
    assert seen == []
    assert notes.read_text() == "pwned\n"


async def test_relay_edits_auto_lets_any_sender_edit(fake, make_config, app_factory, peer, notes):
    overwrite(fake, notes)
    app = app_factory(make_config(env={"ZCODER_RELAY_EDITS": "auto"}))
    seen: list[EditApprovalScreen] = []
    async with app.run_test(size=SIZE) as pilot:
        await relay_ready(pilot, app)
        assert app.relay is not None and app.relay.instance_id is not None
        sent = await asyncio.to_thread(peer.send, app.relay.instance_id, "rewrite notes.txt")
        assert sent["event"] == "sent", sent
        await wait_until(pilot, lambda: dialogs_seen(app, seen))
        await idle(pilot, app)
    assert seen == []
    assert notes.read_text() == "pwned\n"
