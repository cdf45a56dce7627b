"""Two ACP sessions hand each other a task through the relay: two ``zcoder --acp``
processes, each driven by the SDK's client side, in two workspaces, sharing ZCODER_HOME and
the relay's directory (as two editors on one machine would), each with its own fake model.

The sender's editor confirms the delivery (a permission request naming the exact target and
the whole message); the receiver's editor sees the task with its sender and is asked for its
command with the sender named, every time; the sender's editor gets the receipt. A command
the receiving editor refuses never runs. When the sessions end, no peer is left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.client.connection import ClientSideConnection
from acp.schema import PromptResponse, TextContentBlock, UserMessageChunk

from tests.acp.support import (
    NEVER,
    WAIT_SECONDS,
    RecordingClient,
    acp_zcoder,
    new_session,
    stderr_of,
)
from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.hooks.support import entry, write_settings
from tests.hooks.support import script as hook_script
from tests.test_oneshot import Env, sessions
from zcoder.relay import Relay, load_relay_settings
from zcoder.relay.settings import Inbound
from zcoder.relay.trust import TRUST, TrustBook

TASK = "Please run touch marker.txt in your workspace."


@pytest.fixture
def fake_b() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


@pytest.fixture
def env_b(env: Env, tmp_path: Path) -> Iterator[Env]:
    """A second workspace ("api"), with the first one's home and relay directory; that
    directory short, as socket paths must fit in about 100 bytes."""
    relay_dir = Path(tempfile.mkdtemp(prefix="zacp", dir="/tmp"))
    relay_dir.chmod(0o700)
    env.vars["ZCODER_RELAY_DIR"] = str(relay_dir)
    workspace = tmp_path / "api"
    workspace.mkdir()
    try:
        yield replace(env, workspace=workspace.resolve())
    finally:
        shutil.rmtree(relay_dir, ignore_errors=True)


def relay_files(env: Env) -> list[Path]:
    relay_dir = Path(env.vars["ZCODER_RELAY_DIR"])
    return sorted(p for p in relay_dir.rglob("a-*") if p.suffix in (".sock", ".json"))


def manifest_of(env: Env, workspace: Path) -> dict[str, object]:
    """The manifest of the peer in ``workspace`` ({}: none)."""
    for path in relay_files(env):
        if path.suffix == ".json":
            manifest = json.loads(path.read_text())
            if manifest["workspace"] == str(workspace):
                return dict(manifest)
    return {}


def activity_of(env: Env, workspace: Path) -> str | None:
    """The activity the manifest of the peer in ``workspace`` says (None: no manifest)."""
    manifest = manifest_of(env, workspace)
    return str(manifest.get("activity")) if manifest else None


async def until(condition: Callable[[], bool]) -> None:
    """Wait (bounded) for a condition on files that no client update announces."""

    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(poll(), WAIT_SECONDS)


def user_messages(client: RecordingClient) -> list[str]:
    return [
        u.content.text
        for u in client.updates
        if isinstance(u, UserMessageChunk) and isinstance(u.content, TextContentBlock)
    ]


@contextlib.asynccontextmanager
async def two_sessions(
    env: Env,
    fake: FakeOllama,
    sender: RecordingClient,
    env_b: Env,
    fake_b: FakeOllama,
    receiver: RecordingClient,
) -> AsyncIterator[tuple[ClientSideConnection, str]]:
    """The receiver ("api") published first, then the sender's session; yields the
    sender's connection and session id."""
    async with acp_zcoder(env_b, fake_b, receiver) as (conn_b, process_b):
        await new_session(conn_b, env_b)
        await until(lambda: len(relay_files(env)) == 2)  # api's socket and manifest
        async with acp_zcoder(env, fake, sender) as (conn_a, process_a):
            session_a = await new_session(conn_a, env)
            await until(lambda: len(relay_files(env)) == 4)
            yield conn_a, session_a
        assert await process_a.wait() == 0, stderr_of(env)
    assert await process_b.wait() == 0, stderr_of(env_b)


def script(fake: FakeOllama, fake_b: FakeOllama) -> None:
    fake.enqueue(
        Turn.tool_calls(
            call("send_agent_message", {"target_instance_id": "api", "message": TASK}, id="s1")
        ),
        Turn.text("I asked api."),
    )
    fake_b.enqueue(
        Turn.tool_calls(call("run_command", {"command": "touch marker.txt"}, id="r1")),
        Turn.text("Made the marker."),
    )


@contextlib.asynccontextmanager
async def hand_over(
    env: Env,
    fake: FakeOllama,
    env_b: Env,
    fake_b: FakeOllama,
    *,
    send: str = "allow_once",
    receive: str = "allow_once",
) -> AsyncIterator[tuple[RecordingClient, RecordingClient, PromptResponse]]:
    """The scripted hand-over, both sessions open: the sender's user asks for a marker,
    its model sends api the task. The sender's editor answers its permission requests with
    ``send``, the receiver's with ``receive``; yields both clients and the answered prompt."""
    script(fake, fake_b)
    sender, receiver = RecordingClient(send), RecordingClient(receive)
    async with two_sessions(env, fake, sender, env_b, fake_b, receiver) as (conn, session_id):
        done = await asyncio.wait_for(
            conn.prompt(session_id=session_id, prompt=[text_block("ask api to make a marker")]),
            WAIT_SECONDS,
        )
        yield sender, receiver, done


async def test_two_acp_sessions_hand_over_a_task_and_its_receipt(
    env: Env, fake: FakeOllama, env_b: Env, fake_b: FakeOllama
) -> None:
    async with hand_over(env, fake, env_b, fake_b) as (sender, receiver, done):
        assert done.stop_reason == "end_turn"
        await sender.wait_for(lambda: "receipt: api completed" in sender.reply())

    # The sender's editor confirmed the exact target and the whole message.
    (confirm,) = sender.asked
    shown = confirm.tool_call.content[0].content.text  # type: ignore[index]
    assert shown.startswith("Send this message to api (pid ")
    assert shown.endswith(f"\n\n```\n{TASK}\n```")
    assert [o.option_id for o in confirm.options] == ["allow_once", "reject_once"]
    # The receiver's editor saw the task, who sent it, and was asked with the sender named.
    (relayed,) = user_messages(receiver)
    assert relayed.startswith("**Task relayed from ws (pid ")
    assert relayed.endswith(TASK)
    (asked,) = receiver.asked
    question = asked.tool_call.content[0].content.text  # type: ignore[index]
    assert question.splitlines()[0].startswith("Asked by a task relayed from ws (pid ")
    assert "$ touch marker.txt" in question
    assert [o.option_id for o in asked.options] == ["allow_once", "reject_once"]
    assert (env_b.workspace / "marker.txt").exists()
    assert "Made the marker." in receiver.reply()
    # The receipt reached the sender's model too, and both sessions were saved.
    assert "Made the marker." in sender.reply()
    # Told first that the receiving model started on it (progress), then how it ended.
    saved_a = [e for data in sessions(env) for e in data.events if e.role == "receipt"]
    assert [e.metadata.get("progress") or e.metadata["outcome"] for e in saved_a] == [
        "started",
        "completed",
    ]
    # Both peers were withdrawn.
    assert relay_files(env) == []


async def test_a_relayed_command_the_receiving_editor_refuses_never_runs(
    env: Env, fake: FakeOllama, env_b: Env, fake_b: FakeOllama
) -> None:
    async with hand_over(env, fake, env_b, fake_b, receive="reject_once") as (sender, receiver, _):
        await sender.wait_for(lambda: "receipt: api" in sender.reply())

    (asked,) = receiver.asked
    assert "Asked by a task relayed from ws" in asked.tool_call.content[0].content.text  # type: ignore[index]
    assert not (env_b.workspace / "marker.txt").exists()
    assert receiver.tool_states("r1")[-1] == "failed"
    assert relay_files(env) == []


async def test_a_send_the_editor_does_not_confirm_is_not_delivered(
    env: Env, fake: FakeOllama, env_b: Env, fake_b: FakeOllama
) -> None:
    async with hand_over(env, fake, env_b, fake_b, send="reject_once") as (sender, receiver, _):
        pass  # the sender's editor refused the send; the sessions end
    assert sender.tool_states("s1")[-1] == "failed"
    assert "declined" in sender.tool_text("s1")
    assert user_messages(receiver) == []
    assert fake_b.chat_bodies == []
    assert not (env_b.workspace / "marker.txt").exists()


async def test_a_receiver_whose_editor_vanishes_mid_task_runs_nothing_and_says_cancelled(
    env: Env, fake: FakeOllama, env_b: Env, fake_b: FakeOllama
) -> None:
    script(fake, fake_b)
    sender, receiver = RecordingClient("allow_once"), RecordingClient(NEVER)
    async with contextlib.AsyncExitStack() as receiving:
        conn_b, process_b = await receiving.enter_async_context(acp_zcoder(env_b, fake_b, receiver))
        await new_session(conn_b, env_b)
        await until(lambda: len(relay_files(env)) == 2)
        async with acp_zcoder(env, fake, sender) as (conn, _):
            session_id = await new_session(conn, env)
            await asyncio.wait_for(
                conn.prompt(session_id=session_id, prompt=[text_block("ask api")]), WAIT_SECONDS
            )
            await receiver.wait_for(lambda: bool(receiver.asked))
            # Peers see what the receiving session does: its editor's question is open.
            await until(lambda: activity_of(env, env_b.workspace) == "waiting for approval")
            await receiving.aclose()  # the receiver's editor goes away, its question open
            assert process_b.returncode == 0, stderr_of(env_b)
            await sender.wait_for(lambda: "receipt: api cancelled" in sender.reply())
            assert len(relay_files(env)) == 2  # only the sender is left

    assert not (env_b.workspace / "marker.txt").exists()
    assert relay_files(env) == []


async def test_past_the_auto_turn_limit_relayed_tasks_wait_for_the_users_prompt(
    env: Env, fake: FakeOllama, env_b: Env, fake_b: FakeOllama
) -> None:
    env.vars["ZCODER_RELAY_MAX_AUTO_TURNS"] = "1"  # both share it; only api receives
    fake.enqueue(
        Turn.tool_calls(
            call("send_agent_message", {"target_instance_id": "api", "message": "task one"}),
            call("send_agent_message", {"target_instance_id": "api", "message": "task two"}),
        ),
        Turn.text("I asked api twice."),
    )
    fake_b.enqueue(
        Turn.text("first task done"), Turn.text("the prompt answered"), Turn.text("second done")
    )
    sender, receiver = RecordingClient("allow_once"), RecordingClient("allow_once")
    async with acp_zcoder(env_b, fake_b, receiver) as (conn_b, _):
        session_b = await new_session(conn_b, env_b)
        await until(lambda: len(relay_files(env)) == 2)
        async with acp_zcoder(env, fake, sender) as (conn, _):
            session_id = await new_session(conn, env)
            await asyncio.wait_for(
                conn.prompt(session_id=session_id, prompt=[text_block("ask api")]), WAIT_SECONDS
            )
            await receiver.wait_for(lambda: "1 relayed task ran without you" in receiver.reply())
            assert len(fake_b.chat_bodies) == 1  # the second waits for the user
            # ...and peers see it wait in api's queue (zcoder agents --watch's QUEUE).
            await until(lambda: manifest_of(env, env_b.workspace).get("queued") == 1)
            done = await asyncio.wait_for(
                conn_b.prompt(session_id=session_b, prompt=[text_block("hello")]), WAIT_SECONDS
            )
            assert done.stop_reason == "end_turn"
            await receiver.wait_for(lambda: "second done" in receiver.reply())
            await sender.wait_for(lambda: sender.reply().count("receipt: api completed") == 2)
            await until(lambda: manifest_of(env, env_b.workspace).get("queued") == 0)
            receipt = "completed from api"  # the sender's last receipt, for peers to see
            await until(lambda: manifest_of(env, env.workspace).get("last_receipt") == receipt)

    last_user = [
        next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
        for body in fake_b.chat_bodies
    ]
    assert "task one" in last_user[0]
    assert last_user[1] == "hello"
    assert "task two" in last_user[2]
    assert len(sender.asked) == 2  # each delivery confirmed


async def test_a_relayed_task_a_relay_message_hook_refuses_never_runs(
    env: Env, fake: FakeOllama, env_b: Env, fake_b: FakeOllama
) -> None:
    # A user-scope hook (no consent asked): both share the home, only api receives.
    refuse = hook_script(
        env.home.parent, "refuse", "print('not from ws', file=sys.stderr); sys.exit(2)"
    )
    write_settings(env.home / "settings.json", {"RelayMessage": entry(refuse)})
    async with hand_over(env, fake, env_b, fake_b) as (sender, receiver, _):
        await sender.wait_for(lambda: "receipt: api refused" in sender.reply())
        await receiver.wait_for(lambda: "was refused by a hook: not from ws" in receiver.reply())

    assert "a hook of the receiving user refused it: not from ws" in sender.reply()
    assert not (env_b.workspace / "marker.txt").exists()
    assert fake_b.chat_bodies == []  # the task never reached the receiver's model
    assert user_messages(receiver) == []
    assert receiver.asked == []
    assert relay_files(env) == []


async def test_a_relayed_task_a_relay_message_hook_holds_is_announced_and_not_run(
    env: Env, fake: FakeOllama, env_b: Env, fake_b: FakeOllama
) -> None:
    hold = hook_script(
        env.home.parent,
        "hold",
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'RelayMessage',"
        " 'permissionDecision': 'ask', 'permissionDecisionReason': 'ask me first'}}))",
    )
    write_settings(env.home / "settings.json", {"RelayMessage": entry(hold)})
    async with hand_over(env, fake, env_b, fake_b) as (_, receiver, _):
        await receiver.wait_for(lambda: "is held for you: ask me first" in receiver.reply())

    assert not (env_b.workspace / "marker.txt").exists()
    assert fake_b.chat_bodies == []
    assert receiver.reply().count("is held for you") == 1  # announced once
    assert relay_files(env) == []


async def test_a_relayed_edit_is_asked_in_the_receiving_editor_and_a_no_keeps_the_file(
    env: Env, fake: FakeOllama, env_b: Env, fake_b: FakeOllama
) -> None:
    """ZCODER_EDITS=auto (the default), a sender nobody trusted: the edit asks
    (ZCODER_RELAY_EDITS), the editor says no, the file is as it was."""
    notes = env_b.workspace / "notes.txt"
    notes.write_text("the user's own notes\n")
    fake.enqueue(
        Turn.tool_calls(
            call("send_agent_message", {"target_instance_id": "api", "message": TASK}, id="s1")
        ),
        Turn.text("I asked api."),
    )
    fake_b.enqueue(
        Turn.tool_calls(call("write_file", {"path": "notes.txt", "content": "pwned\n"}, id="w1")),
        Turn.text("Rewrote them."),
    )
    sender, receiver = RecordingClient("allow_once"), RecordingClient("reject_once")
    async with two_sessions(env, fake, sender, env_b, fake_b, receiver) as (conn, session_id):
        await asyncio.wait_for(
            conn.prompt(session_id=session_id, prompt=[text_block("ask api")]), WAIT_SECONDS
        )
        await sender.wait_for(lambda: "receipt: api" in sender.reply())

    (asked,) = receiver.asked
    assert asked.tool_call.kind == "edit"
    assert str(asked.tool_call.title).startswith("Asked by a task relayed from ws")
    assert [o.option_id for o in asked.options] == ["allow_once", "reject_once"]
    assert notes.read_text() == "the user's own notes\n"


class SteeringClient(RecordingClient):
    """Allows once, but only after ``meanwhile`` ran (in a thread): something a peer does
    while the session's turn waits for its user."""

    def __init__(self, meanwhile: Callable[[], None]) -> None:
        super().__init__("allow_once")
        self.meanwhile = meanwhile

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.to_thread(self.meanwhile)
        return await super().request_permission(*args, **kwargs)


async def test_a_trusted_peers_steer_reaches_an_editor_sessions_running_turn(
    env: Env, fake: FakeOllama, env_b: Env
) -> None:
    """Issue 29 in an editor's session: a trusted instance's steer, sent while the turn
    waits on a permission, lands after that command's result; its sender is told
    `steered`, then the receipt of the turn it landed in."""
    peer = Relay(
        load_relay_settings(env.vars),
        workspace=env_b.workspace,
        env={**os.environ, **env.vars},
        interactive=True,
    )
    peer.start()
    TrustBook(Path(env.vars["ZCODER_HOME"]), Inbound.ACCEPT).set(str(env_b.workspace), TRUST)
    sent: list[Any] = []

    def steer() -> None:
        (session,) = [p for p in peer.discover().peers if p.workspace == str(env.workspace)]
        sent.append(peer.send(session.instance_id, "then list the files", delivery="steer"))

    fake.enqueue(
        Turn.tool_calls(call("run_command", {"command": "echo hi"}, id="c1")),
        Turn.text("Did both."),
    )
    client = SteeringClient(steer)
    try:
        async with acp_zcoder(env, fake, client) as (conn, process):
            session_id = await new_session(conn, env)
            await asyncio.wait_for(
                conn.prompt(session_id=session_id, prompt=[text_block("say hi")]), WAIT_SECONDS
            )
            (result,) = sent
            assert result.delivery == "steer", result.text
            last = fake.chat_bodies[1]["messages"][-1]
            assert "<agent_relay>" in last["content"] and "then list the files" in last["content"]
            news: list[str] = []

            def told() -> bool:
                news.extend(p.stage for p, _ in peer.take_progress())
                news.extend(r.outcome for r, _ in peer.take_receipts())
                return len(news) == 2

            await until(told)
            assert news == ["steered", "completed"]
        assert await process.wait() == 0, stderr_of(env)
    finally:
        peer.stop()
