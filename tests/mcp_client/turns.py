"""Agents with MCP servers for the tests of real turns, and what their requests held."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent.support import MODEL, EventLog
from tests.fixtures.approver import ScriptedApprover
from zcoder.agent import Agent, AgentSettings
from zcoder.model import OllamaClient
from zcoder.sessions import SessionStore
from zcoder.tools import ApprovalPolicy, CommandPolicy, Profile, default_registry


def make_agent(
    client: OllamaClient,
    dirs: tuple[Path, Path],
    approver: ScriptedApprover,
    agents: list[Agent],
    *,
    policy: CommandPolicy = CommandPolicy.ASK,
    num_ctx: int | None = None,
) -> tuple[Agent, EventLog]:
    home, ws = dirs
    log = EventLog()
    store = SessionStore(home)
    info = store.reuse_or_create(ws, "coding", MODEL)
    agent = Agent(
        client=client,
        registry=default_registry(),
        settings=AgentSettings(
            model=MODEL,
            workspace=ws,
            profile=Profile.CODING,
            retry_delay=0,
            mcp_home=home,
            num_ctx=num_ctx,
        ),
        approval=ApprovalPolicy(policy, Profile.CODING),
        approver=approver,
        on_event=log,
        store=store,
        session_id=info.id,
    )
    agents.append(agent)
    return agent, log


def tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools", [])]


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]
