"""Helpers of the agent tests: an event log, agent factories and a harness around them.

Everything is real except the model: the fake Ollama over HTTP, a SessionStore in a tmp
home, the built-in tools in a tmp workspace.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.fixtures.approver import ScriptedApprover
from tests.fixtures.fake_ollama import FakeOllama
from zcoder.agent import Agent, AgentEvent, AgentSettings, Outcome
from zcoder.model import OllamaClient
from zcoder.model.protocol import ChatClient
from zcoder.sessions import SessionData, SessionStore
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
    approval = ApprovalPolicy(policy, profile, edits=edits)
    agent = new_agent(
        client, store, workspace, approval, session_id=info.id, on_event=log, approver=approver
    )
    return Harness(agent, server, store, info.id, workspace, approver, log, client)


def new_agent(
    client: ChatClient,
    store: SessionStore,
    workspace: Path,
    approval: ApprovalPolicy | None = None,
    *,
    session_id: str | None = None,
    on_event: Callable[[AgentEvent], None] | None = None,
    approver: ScriptedApprover | None = None,
) -> Agent:
    """An agent of ``MODEL`` on any model client, with the built-in tools in ``workspace``,
    saving to ``store``, and no delay before a retry; commands are asked about in the coding
    profile unless ``approval`` says otherwise."""
    approval = approval or ApprovalPolicy(CommandPolicy.ASK, Profile.CODING)
    profile = approval.profile
    return Agent(
        client=client,
        registry=default_registry(),
        settings=AgentSettings(model=MODEL, workspace=workspace, profile=profile, retry_delay=0),
        approval=approval,
        approver=approver or ScriptedApprover(),
        on_event=on_event or EventLog(),
        store=store,
        session_id=session_id,
    )


def make_agent(
    client: ChatClient, store: SessionStore, workspace: Path
) -> tuple[Agent, EventLog, str]:
    """A new agent on a fresh session of ``store``, as the tests of other clients than the
    fake Ollama's (the OpenAI-compatible ones) use it, with its event log and session id."""
    info = store.reuse_or_create(workspace, "coding", MODEL)
    log = EventLog()
    agent = new_agent(client, store, workspace, session_id=info.id, on_event=log)
    agent.use_session(info.id, [], [])
    return agent, log, info.id


def on_vllm(window: int) -> pytest.MarkDecorator:
    """Runs a test against a fake vLLM server (the ``openai_fake`` fixture) with a window of
    ``window`` tokens that refuses a request whose prompt and output limit do not fit it."""
    options = {"flavor": "vllm", "context_length": window, "enforce_window": True}
    return pytest.mark.parametrize("openai_options", [options], ids=["vllm"])


def agent_in_a_window(
    client: ChatClient, store: SessionStore, workspace: Path, window: int
) -> Agent:
    """A new agent (make_agent) that knows the server's window is ``window`` tokens and asks
    for as much output as ZCODER_MAX_OUTPUT_TOKENS's default, 8192 tokens."""
    agent, _log, _ = make_agent(client, store, workspace)
    agent.settings.num_ctx = window
    agent.settings.num_predict = 8192
    return agent


def resumed_agent(
    client: ChatClient,
    store: SessionStore,
    workspace: Path,
    data: SessionData,
    *,
    policy: CommandPolicy = CommandPolicy.ASK,
) -> Agent:
    """A new agent, as in a second process, that goes on with the saved session ``data``."""
    approval = ApprovalPolicy(policy, Profile.CODING)
    agent = new_agent(client, store, workspace, approval, session_id=data.info.id)
    agent.use_session(data.info.id, data.messages, data.user_ledger)
    return agent


async def one_tool_round(
    harness: Harness, prompt: str, response: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Runs a turn on ``prompt`` that completes with ``response`` after one tool round;
    returns its two requests, the first of which sent the system prompt and ``prompt`` alone."""
    finished = await harness.agent.run_user_turn(prompt)

    assert finished.outcome is Outcome.COMPLETE
    assert finished.response == response
    first, second = harness.bodies()
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    return first, second


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
