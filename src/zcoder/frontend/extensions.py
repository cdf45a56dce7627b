"""The workspace's extensions an agent is built with, found in one place for every front end.

The TUI, ``--prompt`` and an editor's session (``--acp``) each build an Agent; each needs the
same extras read the same way: the Agent Skills (their tools join the registry, their
catalog the settings), the custom commands and the user's hooks. Reading them here keeps
the three alike, and is where a new kind of extension joins them. MCP servers join on
their own, from the settings (zcoder.mcp, when the agent is built).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from zcoder.agent.subagent_defs import AgentSet, discover_agents
from zcoder.commands import CommandSet, discover_commands
from zcoder.config import Config
from zcoder.hooks import HookConsent, HookEngine, engine_for
from zcoder.hooks.consent import dialog_asker
from zcoder.hooks.engine import Asker
from zcoder.skills import SkillSet, discover_skills, install_skills
from zcoder.tools.approval import Approver
from zcoder.tools.registry import ToolRegistry


@dataclass(frozen=True)
class Extensions:
    skills: SkillSet  # for AgentSettings.from_config(..., skills=)
    hooks: HookEngine | None  # for Agent(hooks=)
    problems: tuple[str, ...]  # what could not be read, for the user to see
    commands: CommandSet = field(default_factory=CommandSet)  # custom commands (/NAME)
    agents: AgentSet = field(default_factory=AgentSet)  # user-defined subagents


def load_extensions(registry: ToolRegistry, workspace: Path, home: Path | None) -> Extensions:
    """Find the workspace's skills (their tools registered in ``registry``), custom
    commands, hooks and subagents."""
    skills = install_skills(registry, discover_skills(workspace))
    hooks, problems = engine_for(home, workspace)
    commands = discover_commands(workspace, home) if home is not None else CommandSet()
    said = [f"hooks: {problem}" for problem in problems]
    said += [
        f"skills: {problem.path}: {problem.reason}"
        for problem in skills.problems
        if problem.said_at_start
    ]
    agents = discover_agents(workspace, home)
    said += [f"subagents: {problem}" for problem in agents.problems]
    return Extensions(skills, hooks, tuple(said), commands, agents)


def hook_consent_dialog(approver: Approver, config: Config) -> Asker:
    """For a front end with a person at it: the dialog that asks, once, about the project's
    hooks not answered yet (zcoder.hooks.consent)."""
    return dialog_asker(approver, HookConsent(config.home, config.workspace), config.profile)
