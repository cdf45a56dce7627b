"""The agent as every front end builds it: the TUI, ``--prompt`` and ``--acp``.

Each of them gives the agent the same things from the config: the default tools, the
relay's tools when it has a relay, fetch_url unless offline, what the workspace adds
(skills, custom commands, hooks; zcoder.frontend.extensions), the settings and the approval
policy. Built in one place, a tool or a setting added for one front end is there for all
of them; what differs (who answers approvals, where events and problems go, whether a
person can consent to hooks) is the caller's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from zcoder.agent import Agent, AgentSettings, ChatClient, EventSink, register_relay_tools
from zcoder.agent.task_tool import make_task_tool
from zcoder.board.records import Claimant
from zcoder.board.service import BoardService
from zcoder.board.tools import BoardTools
from zcoder.config import Config
from zcoder.frontend.extensions import Extensions, hook_consent_dialog, load_extensions
from zcoder.relay import listed_hosts
from zcoder.sessions import SessionStore
from zcoder.tools import ApprovalPolicy, Approver, default_registry
from zcoder.tools.helpers.tool import register_helper_tool
from zcoder.tools.web.tool import register_web_tool

if TYPE_CHECKING:
    from zcoder.agent.relay_tools import SendConfirmer
    from zcoder.relay import Relay


def agent_board(config: Config, relay: Relay | None) -> BoardService:
    """The repository's board as this agent uses it: claims under its relay name."""

    def claimant() -> Claimant:
        if relay is not None and relay.available and relay.instance_id:
            return Claimant(relay.name, relay.instance_id)
        return Claimant.this_process("zcoder")

    return BoardService(config.home, config.workspace, claimant)


def assemble_agent(
    config: Config,
    client: ChatClient,
    model: str,
    *,
    approver: Approver,
    on_event: EventSink,
    store: SessionStore | None,
    on_problem: Callable[[str], object],
    relay: tuple[Relay, SendConfirmer] | None = None,
    relay_available: Callable[[], bool] = lambda: False,
    session_id: str | None = None,
    hook_consent: bool = False,
    own_mcp: bool = True,
) -> tuple[Agent, Extensions]:
    """The agent for ``config`` and ``model``, and the extensions it was given.

    ``relay``: the relay whose tools the agent gets, and who confirms their sends.
    ``on_problem`` is told each problem found in the extensions.
    ``hook_consent``: a person is here, so the project's hooks not answered yet ask them
    once. ``own_mcp`` False: the agent starts none of the MCP servers of zcoder's own
    configuration (the caller attaches the servers it has, as ``--acp`` does an editor's).
    """
    registry = default_registry()
    if relay is not None:
        register_relay_tools(registry, *relay, hosts=listed_hosts(config.home))
    registry.add_source(BoardTools(agent_board(config, relay[0] if relay else None)))
    if not config.offline:  # --offline: no web tool at all, not even in the catalog
        register_web_tool(registry, config.web_rules)
    register_helper_tool(registry, config.helpers, config.helper_timeout)  # when installed
    extensions = load_extensions(registry, config.workspace, config.home)
    if config.subagents != 0:  # ZCODER_SUBAGENTS=off: no task tool, not even listed
        registry.register(make_task_tool(extensions.agents))
    for problem in extensions.problems:
        on_problem(problem)
    if hook_consent and extensions.hooks is not None:
        extensions.hooks.ask = hook_consent_dialog(approver, config)
    settings = AgentSettings.from_config(config, model, skills=extensions.skills)
    if not own_mcp:
        settings.mcp_home = None
    agent = Agent(
        client=client,
        registry=registry,
        settings=settings,
        approval=ApprovalPolicy(
            config.command_policy,
            config.profile,
            edits=config.edit_policy,
            relay_edits=config.relay_edit_policy,
            mode=config.mode,
        ),
        approver=approver,
        on_event=on_event,
        store=store,
        session_id=session_id,
        relay_available=relay_available,
        hooks=extensions.hooks,
    )
    return agent, extensions
