"""Prompt overhead: the tokens zcoder sends with every request before the conversation.

Every chat request starts with the system prompt and the tool schemas. They are built here
exactly as a user turn builds them (``Agent.user_turn_request()``), for each profile with
the relay off and on (the relay adds list_agents, a line for send_agent_message in the
catalog of the tools offered on demand, and a paragraph), the task board's line in
that catalog, online (fetch_url's line in that
catalog, as assembly gives it unless --offline; task's, unless ZCODER_SUBAGENTS=off),
delegate_task's line when a helper agent is installed on this machine
(zcoder.tools.helpers; none: no line), with no AGENTS.md, and counted with zcoder's own
estimator (zcoder.model.tokens), the one the context meter uses before the server has
counted. No real tokenizer can be installed without downloading a model's vocabulary at
run time (tiktoken fetches its files; Qwen's tokenizer comes from the Hugging Face hub),
so the figures are estimates; docs/performance.md says how close.

The target: at most ``PROMPT_BUDGET_TOKENS`` for the largest case, so that a small window
(8192, the automatic floor) keeps most of its room for the conversation. A rarely used
tool is offered on demand (zcoder.tools.catalog): the catalog tool's line for it is
counted here, its schema only once the model loads it.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import tempfile
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, cast

from bench.relay_bench import Results, Table, Target
from zcoder.agent import Agent, AgentSettings, ChatClient, register_relay_tools
from zcoder.agent.relay_tools import SendConfirmer
from zcoder.agent.subagent_defs import AgentSet
from zcoder.agent.task_tool import make_task_tool
from zcoder.board import Claimant
from zcoder.board.service import BoardService
from zcoder.board.tools import BoardTools
from zcoder.model import ChatEvent
from zcoder.model.tokens import estimate_message_tokens, estimate_tokens
from zcoder.relay import Relay
from zcoder.tools import ApprovalPolicy, Approver, CommandPolicy, Profile, default_registry
from zcoder.tools.helpers.clis import DEFAULT_HELPER_TIMEOUT, HELPER_NAMES
from zcoder.tools.helpers.tool import register_helper_tool
from zcoder.tools.web.rules import WebRules
from zcoder.tools.web.tool import register_web_tool

PROMPT_BUDGET_TOKENS: Final = 2000
"""The most the system prompt and tool schemas may take together (issue 10)."""


@dataclass(frozen=True)
class Overhead:
    profile: str
    relay: bool
    system_chars: int
    system_tokens: int
    tools: int
    schema_chars: int
    schema_tokens: int

    @property
    def total(self) -> int:
        return self.system_tokens + self.schema_tokens

    @property
    def label(self) -> str:
        return f"{self.profile}, relay {'on' if self.relay else 'off'}"


class _NoClient:
    def chat(self, *_args: Any, **_kwargs: Any) -> AsyncIterator[ChatEvent]:
        raise AssertionError("the prompt overhead bench sends nothing")


_BENCH: Final = Claimant("bench", "bench")


class _StubRelay:
    available = True


def measure(profile: Profile, *, relay: bool) -> Overhead:
    """The first request of a user turn, as the agent builds it, with an empty history."""
    # The path appears in the system prompt: a fixed one keeps the count reproducible. Two
    # processes measuring at once (pytest's workers) take turns with it, so neither removes
    # the folder the other is measuring in.
    root = Path(tempfile.gettempdir()) / "zcoder-bench"
    with open(Path(tempfile.gettempdir()) / "zcoder-bench.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        workspace = root / "project"
        workspace.mkdir(parents=True, exist_ok=True)
        try:
            return _measure(profile, relay=relay, workspace=workspace)
        finally:
            shutil.rmtree(root, ignore_errors=True)


def _measure(profile: Profile, *, relay: bool, workspace: Path) -> Overhead:
    registry = default_registry()
    register_web_tool(registry, WebRules())  # online, the default: fetch_url's catalog line
    # delegate_task's catalog line, only where a helper agent is installed (none: nothing).
    register_helper_tool(registry, HELPER_NAMES, DEFAULT_HELPER_TIMEOUT)
    registry.register(make_task_tool(AgentSet()))  # subagents, on by default: task's line
    registry.add_source(BoardTools(BoardService(workspace, workspace, lambda: _BENCH)))
    if relay:
        register_relay_tools(registry, cast(Relay, _StubRelay()), cast(SendConfirmer, None))
    agent = Agent(
        client=cast(ChatClient, _NoClient()),
        registry=registry,
        settings=AgentSettings(model="bench", workspace=workspace, profile=profile),
        approval=ApprovalPolicy(CommandPolicy.ASK, profile),
        approver=cast(Approver, None),
        on_event=lambda _event: None,
        relay_available=lambda: relay,
    )
    messages, schemas = agent.user_turn_request()
    [system] = messages
    schema_text = json.dumps(schemas, ensure_ascii=False)
    return Overhead(
        profile=profile.value,
        relay=relay,
        system_chars=len(system["content"]),
        system_tokens=estimate_message_tokens(system),
        tools=len(schemas),
        schema_chars=len(schema_text),
        schema_tokens=estimate_tokens(schema_text),
    )


def measure_all() -> list[Overhead]:
    return [
        measure(profile, relay=relay)
        for profile in (Profile.CODING, Profile.SYSADMIN)
        for relay in (False, True)
    ]


def run(results: Results) -> list[Overhead]:
    """Add the table and the target row to ``results``."""
    rows = measure_all()
    table = Table(
        "Prompt overhead: system prompt and tool schemas, sent with every request",
        [
            "profile, relay",
            "system prompt",
            "tools",
            "tool schemas",
            "total (estimated tokens)",
            "share of an 8192 window",
        ],
    )
    for row in rows:
        table.rows.append(
            [
                row.label,
                f"{row.system_tokens:,} tokens ({row.system_chars:,} chars)",
                str(row.tools),
                f"{row.schema_tokens:,} tokens ({row.schema_chars:,} chars of JSON)",
                f"{row.total:,}",
                f"{row.total / 8192:.0%}",
            ]
        )
    table.notes.append(
        "Counted with zcoder.model.tokens (the context meter's estimator, which errs high); "
        "the schemas as the JSON sent in the request's `tools`, the system prompt with its "
        "message overhead. No AGENTS.md; project instructions add their own size."
    )
    results.tables.append(table)
    largest = max(rows, key=lambda row: row.total)
    results.targets.append(
        Target(
            f"prompt overhead, largest case ({largest.label})",
            f"≤ {PROMPT_BUDGET_TOKENS:,} tokens",
            f"{largest.total:,} tokens",
            largest.total <= PROMPT_BUDGET_TOKENS,
        )
    )
    return rows


def summary(rows: Sequence[Overhead]) -> str:
    return "\n".join(
        f"{row.label}: system {row.system_tokens} + {row.tools} tool schemas "
        f"{row.schema_tokens} = {row.total} tokens"
        for row in rows
    )
