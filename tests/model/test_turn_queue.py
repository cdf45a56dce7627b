"""The machine-wide queue for a model server's places (zcoder.model.turn_queue), with real
processes: each request is a process of its own (tests/fixtures/queue_client.py) that
takes its place, says so in a log and holds it until told. Who waits is read from the
queue's ticket files; who got the place, from the log. No timed assertions: each step
waits for a condition with a deadline."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import wait_until
from zcoder.model.turn_queue import TurnQueue

SERVER = "http://127.0.0.1:9/v1"


class Requests:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.log = home / "order.log"
        self.log.touch()
        self.started: list[subprocess.Popen[bytes]] = []

    def start(
        self, kind: str, name: str, *, places: int = 1, aging: float = 600
    ) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.fixtures.queue_client",
                str(self.home),
                SERVER,
                str(places),
                kind,
                str(aging),
                str(self.log),
                name,
            ],
            stdin=subprocess.PIPE,
        )
        self.started.append(process)
        return process

    def order(self) -> list[str]:
        return self.log.read_text().split()

    def waiting(self) -> int:
        directory = TurnQueue(self.home).directory(SERVER)
        if not directory.is_dir():
            return 0
        return sum(1 for name in os.listdir(directory) if name.endswith(".t"))

    def served(self, name: str) -> None:
        wait_until(lambda: name in self.order(), timeout=60, what=f"{name} to get its place")

    def queued(self, count: int) -> None:
        wait_until(lambda: self.waiting() == count, timeout=60, what=f"{count} waiting")

    def release(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(60) == 0

    def close(self) -> None:
        for process in self.started:
            if process.poll() is None:
                process.kill()
            process.wait(60)
            if process.stdin is not None:
                process.stdin.close()


@pytest.fixture
def requests(tmp_path: Path) -> Iterator[Requests]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    made = Requests(home)
    try:
        yield made
    finally:
        made.close()


def test_the_users_turn_goes_before_relayed_turns_waiting_for_the_same_server(
    requests: Requests,
) -> None:
    holder = requests.start("background", "holder")
    requests.served("holder")
    first = requests.start("background", "relayed-1")
    requests.queued(1)
    second = requests.start("background", "relayed-2")
    requests.queued(2)
    user = requests.start("user", "user")
    requests.queued(3)

    requests.release(holder)
    requests.served("user")
    assert requests.order() == ["holder", "user"]  # before both relayed ones, which asked first
    requests.release(user)
    requests.served("relayed-1")
    requests.release(first)
    requests.served("relayed-2")
    requests.release(second)
    assert requests.order() == ["holder", "user", "relayed-1", "relayed-2"]
    assert requests.waiting() == 0


def test_a_relayed_turn_that_waited_its_time_goes_before_a_newer_user_turn(
    requests: Requests,
) -> None:
    # Aging of 0 s: the relayed turn has already waited long enough when the user's asks.
    holder = requests.start("user", "holder", aging=0)
    requests.served("holder")
    relayed = requests.start("background", "relayed", aging=0)
    requests.queued(1)
    user = requests.start("user", "user", aging=0)
    requests.queued(2)
    requests.release(holder)
    requests.served("relayed")
    assert requests.order() == ["holder", "relayed"]  # not starved by the newer user turn
    requests.release(relayed)
    requests.served("user")
    requests.release(user)


def test_a_waiter_killed_in_the_queue_does_not_hold_it_up(requests: Requests) -> None:
    holder = requests.start("user", "holder")
    requests.served("holder")
    killed = requests.start("user", "killed")
    requests.queued(1)
    after = requests.start("user", "after")
    requests.queued(2)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait(60)
    requests.release(holder)
    requests.served("after")
    assert requests.order() == ["holder", "after"]
    requests.release(after)
    assert requests.waiting() == 0  # the dead waiter's ticket was removed


def test_relayed_turns_leave_the_last_place_free_for_the_user(requests: Requests) -> None:
    relayed = requests.start("background", "relayed-1", places=2)
    requests.served("relayed-1")
    waiting = requests.start("background", "relayed-2", places=2)
    requests.queued(1)  # one place is free, but it is the user's
    user = requests.start("user", "user", places=2)
    requests.served("user")  # at once, while relayed-1 still streams
    assert requests.order() == ["relayed-1", "user"]
    assert requests.waiting() == 1
    requests.release(relayed)
    requests.served("relayed-2")
    requests.release(waiting)
    requests.release(user)


def test_nobody_waiting_is_one_lock_and_no_ticket(tmp_path: Path) -> None:
    queue = TurnQueue(tmp_path, places=1)

    async def twice() -> list[str]:
        seen: list[str] = []
        for _ in range(2):
            async with queue.place(SERVER, background=True):
                seen.extend(sorted(os.listdir(queue.directory(SERVER))))
        return seen

    assert asyncio.run(twice()) == ["place-0", "place-0"]


@pytest.mark.parametrize(
    ("backend", "address", "queued"),
    [
        ("openai", "http://127.0.0.1:8080/v1", True),
        ("openai", "http://localhost:1234/v1", True),
        ("ollama", "127.0.0.1:11434", True),
        ("openai", "http://gpu-box:8000/v1", False),
        ("ollama", "http://10.1.2.3:11434", False),
    ],
)
def test_only_a_server_on_this_machine_gets_the_queue(
    tmp_path: Path, backend: str, address: str, queued: bool
) -> None:
    from dataclasses import replace

    from zcoder.agent.settings import AgentSettings
    from zcoder.config import load_config

    env = {"ZCODER_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    config = load_config(env, workspace=str(tmp_path))
    config = replace(config, backend=backend, base_url=address, host=address)
    settings = AgentSettings.from_config(config, "m")
    assert (settings.turn_queue is not None) is queued
