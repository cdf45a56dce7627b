"""A relayed turn waits for its place at the server while the user's request of another
zcoder holds it (zcoder.model.turn_queue), then goes: the real Agent and the fake
OpenAI-compatible server, the other zcoder a process of its own
(tests/fixtures/queue_client.py)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from tests.agent.support import make_agent
from tests.fixtures.envelopes import relayed
from tests.fixtures.fake_ollama import Turn
from tests.fixtures.fake_openai import FakeOpenAI
from zcoder.agent import Outcome
from zcoder.model import OpenAIClient
from zcoder.model.turn_queue import TurnQueue
from zcoder.sessions import SessionStore


async def _until(check: object, what: str, timeout: float = 60) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():  # type: ignore[operator]
        if loop.time() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def test_a_relayed_turn_waits_while_the_users_request_holds_the_server(
    openai_fake: FakeOpenAI,
    openai_client: OpenAIClient,
    store: SessionStore,
    workspace: Path,
    tmp_path: Path,
) -> None:
    home = tmp_path / "queue-home"
    home.mkdir(mode=0o700)
    log = tmp_path / "order.log"
    log.touch()
    user = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fixtures.queue_client",
            str(home),
            openai_client.host,
            "1",
            "user",
            "600",
            str(log),
            "user",
        ],
        stdin=subprocess.PIPE,
    )
    try:
        await _until(lambda: log.read_text().split() == ["user"], "the user's request")
        openai_fake.enqueue(Turn.text("Done as asked."))
        agent, _events, _ = make_agent(openai_client, store, workspace)
        agent.settings.turn_queue = TurnQueue(home, places=1)
        turn = asyncio.create_task(agent.run_relay_turn(relayed("Run the tests.")))
        queue_dir = agent.settings.turn_queue.directory(openai_client.host)
        await _until(
            lambda: any(n.startswith("b-") for n in _names(queue_dir)), "the relayed ticket"
        )
        assert openai_fake.chat_bodies == []  # nothing sent while the user's request runs
        assert user.stdin is not None
        user.stdin.close()
        finished = await asyncio.wait_for(turn, 60)
        assert finished.outcome is Outcome.COMPLETE
        assert len(openai_fake.chat_bodies) == 1
    finally:
        if user.poll() is None:
            user.kill()
        user.wait(60)


def _names(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir()] if directory.is_dir() else []
