"""Helpers of the agent tests: a scripted approver, an event log and an agent factory.

Everything is real except the model: the fake Ollama over HTTP, a SessionStore in a tmp
home, the built-in tools in a tmp workspace.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tests.fixtures.approver import ScriptedApprover
from tests.fixtures.fake_ollama import FakeOllama
from zcoder.agent import Agent, AgentEvent, AgentSettings
from zcoder.model import OllamaClient
from zcoder.sessions import SessionStore
from zcoder.tools import (
    ApprovalPolicy,
    CommandPolicy,
    EditPolicy,
    Profile,
    default_registry,
)

MODEL = "qwen3-coder"
E = TypeVar("E")


@dataclass
class EventLog:
    events: list[AgentEvent] = field(default_factory=list)

    def __call__(self, event: AgentEvent) -> None:
        self.events.append(event)

    def of(self, kind: type[E]) -> list[E]:
        return [event for event in self.events if isinstance(event, kind)]


@dataclass
class Harness:
    agent: Agent
    server: FakeOllama
    store: SessionStore
    session_id: str
    workspace: Path
    approver: ScriptedApprover
    log: EventLog
    client: OllamaClient

    def load(self) -> Any:
        return self.store.load(self.session_id, self.workspace, self.agent.settings.profile.value)

    def bodies(self) -> list[dict[str, Any]]:
        return list(self.server.chat_bodies)


def make_harness(
    server: FakeOllama,
    store: SessionStore,
    workspace: Path,
    client: OllamaClient,
    *,
    approver: ScriptedApprover | None = None,
    policy: CommandPolicy = CommandPolicy.ASK,
    profile: Profile = Profile.CODING,
    edits: EditPolicy = EditPolicy.AUTO,
) -> Harness:
    info = store.reuse_or_create(workspace, profile.value, MODEL)
    log = EventLog()
    approver = approver or ScriptedApprover()
    agent = Agent(
        client=client,
        registry=default_registry(),
        settings=AgentSettings(model=MODEL, workspace=workspace, profile=profile, retry_delay=0),
        approval=ApprovalPolicy(policy, profile, edits=edits),
        approver=approver,
        on_event=log,
        store=store,
        session_id=info.id,
    )
    return Harness(agent, server, store, info.id, workspace, approver, log, client)


async def wait_until(predicate: Any, timeout: float = 5.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def tool_call_ids(messages: list[dict[str, Any]]) -> list[str]:
    return [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls", [])]


def tool_result_ids(messages: list[dict[str, Any]]) -> list[str]:
    return [m["tool_call_id"] for m in messages if m["role"] == "tool"]
