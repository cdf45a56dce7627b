"""Agents with MCP servers for the tests of real turns, and what their requests held."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.agent.support import MODEL, EventLog
from tests.fixtures.approver import ScriptedApprover
from tests.fixtures.fake_ollama import FakeOllama
from zcoder.agent import Agent, AgentSettings
from zcoder.model import OllamaClient
from zcoder.options import McpLimits
from zcoder.sessions import SessionStore
from zcoder.tools import ApprovalPolicy, CommandPolicy, Profile, default_registry


@dataclass
class World:
    """What a test of real turns works in: the fake Ollama and a client of it, the zcoder
    home (the user's mcp.json is there) and the workspace, and the agents it made."""

    fake: FakeOllama
    client: OllamaClient
    home: Path
    ws: Path
    made: list[Agent] = field(default_factory=list)

    def agent(
        self,
        approver: ScriptedApprover,
        *,
        policy: CommandPolicy = CommandPolicy.ASK,
        num_ctx: int | None = None,
        limits: McpLimits | None = None,
    ) -> tuple[Agent, EventLog]:
        """An agent of the coding profile with this home's MCP servers."""
        log = EventLog()
        store = SessionStore(self.home)
        info = store.reuse_or_create(self.ws, "coding", MODEL)
        agent = Agent(
            client=self.client,
            registry=default_registry(),
            settings=AgentSettings(
                model=MODEL,
                workspace=self.ws,
                profile=Profile.CODING,
                retry_delay=0,
                mcp_home=self.home,
                num_ctx=num_ctx,
                mcp_limits=limits or McpLimits(),
            ),
            approval=ApprovalPolicy(policy, Profile.CODING),
            approver=approver,
            on_event=log,
            store=store,
            session_id=info.id,
        )
        self.made.append(agent)
        return agent, log


def tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools", [])]


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]
