"""InboxUI alone: the relay's history, given a real session store and no app."""

from __future__ import annotations

from pathlib import Path

from textual.message import Message

from tests.tui.parts_support import part_context, services_for
from zcoder.relay import Envelope
from zcoder.sessions import SessionStore
from zcoder.tui.messages import ShowNotice
from zcoder.tui.parts.inbox_ui import InboxUI


def envelope(n: int) -> Envelope:
    return Envelope(
        message_id=f"4242-{n}",
        target_instance_id="me",
        sender_instance_id="4242-peer",
        sender_pid=4242,
        sender_project="api",
        sender_workspace="/src/api",
        body=f"task number {n}",
        created_at=1,
    )


def inbox(store: SessionStore | None, workspace: Path, posted: list[Message]) -> InboxUI:
    workspace.mkdir(exist_ok=True)
    services = services_for(workspace, workspace.parent / "home")
    services.store = store
    return InboxUI(part_context(services, posted))


def said(posted: list[Message]) -> list[tuple[bool, str]]:
    return [(m.error, m.text) for m in posted if isinstance(m, ShowNotice)]


def test_without_a_store_the_inbox_says_where_the_history_would_be(tmp_path: Path) -> None:
    posted: list[Message] = []
    box = inbox(None, tmp_path, posted)
    box.received(envelope(1), "queued")  # nowhere to write: costs the history only
    box.command("")
    assert said(posted) == [
        (True, "the relay history is kept in the session store, which is unavailable")
    ]


def test_received_messages_are_listed_newest_first_and_shown_whole(tmp_path: Path) -> None:
    posted: list[Message] = []
    with SessionStore(tmp_path / "home") as store:
        box = inbox(store, tmp_path / "ws", posted)
        box.command("")
        box.received(envelope(1), "queued")
        box.received(envelope(2), "queued")
        box.received(envelope(1), "done")
        box.command("")
        box.command("2")
        box.command("3")
    first, listing, whole, wrong = said(posted)
    assert first == (False, "No message was sent or received in this workspace yet.")
    heading, *rows = listing[1].splitlines()
    assert heading.startswith("Relayed messages of this workspace, newest first")
    assert len(rows) == 2
    assert any("task number 2" in row and "· queued ·" in row for row in rows)
    assert any("task number 1" in row and "· done ·" in row for row in rows)
    assert whole[1].startswith("Received from ") and "task number" in whole[1]
    assert wrong == (True, "usage: /inbox N, with N from /inbox (1 to 2)")
