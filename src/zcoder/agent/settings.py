"""The settings one agent runs a model with.

Its own module, below the turn loop (agent/core.py) and the parts that read the
settings (agent/context_keeper.py, agent/user_command.py, agent/model_request.py), so
that they all import it and none of them imports another to get it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from zcoder.agent.instructions import InstructionSet, load_instructions
from zcoder.base.images import DEFAULT_IMAGE_MAX_BYTES
from zcoder.config import DEFAULT_COMPACT_AT, Config
from zcoder.model.limits import DEFAULT_IDLE_SECONDS, DEFAULT_MAX_REPLY_CHARS
from zcoder.model.turn_queue import TurnQueue
from zcoder.model.types import ChatEvent
from zcoder.model.watch import watched
from zcoder.options import McpLimits
from zcoder.skills import SkillSet, catalog_text
from zcoder.tools.profiles import Profile

__all__ = ["RETRY_DELAY_SECONDS", "AgentSettings"]

RETRY_DELAY_SECONDS: Final = 0.5
"""The pause before the one retry of a request that failed before any response."""


@dataclass
class AgentSettings:
    model: str
    workspace: Path
    profile: Profile
    think: bool | None = None
    num_predict: int | None = 8192
    num_ctx: int | None = None
    """The context window in tokens, sent with every request (Ollama's options.num_ctx)."""
    keep_alive: str | int | None = None
    """How long Ollama keeps the model loaded after a request; None: Ollama's default."""
    compact_at: float | None = DEFAULT_COMPACT_AT
    """Compact before a request that would pass this share of the window; None: never."""
    max_tool_output: int = 32768
    instructions: str = ""
    """Instructions given as text (tests); ``instruction_set`` is what zcoder found."""
    instruction_set: InstructionSet = field(default_factory=InstructionSet)
    """The instruction files (zcoder.agent.instructions), fitted to the window when sent."""
    skills_catalog: str = ""
    """The Agent Skills the model may activate (zcoder.skills.catalog_text); "": none."""
    retry_delay: float = RETRY_DELAY_SECONDS
    idle_timeout: float | None = DEFAULT_IDLE_SECONDS
    """Seconds without new output before a reply is stopped (zcoder.model.watch)."""
    max_reply_chars: int | None = DEFAULT_MAX_REPLY_CHARS
    """Characters of one reply after which it is stopped (zcoder.model.watch)."""
    mcp_home: Path | None = None
    """Where the user's mcp.json (and the consent to project servers) is: MCP servers are
    offered only when set (zcoder.mcp); None: no MCP at all."""
    mcp_limits: McpLimits = field(default_factory=McpLimits)
    """The MCP servers' deadlines and the share of the window their schemas may take."""
    vision: bool | None = None
    """Send images (True), never (False), or as the server says (None)."""
    image_max_bytes: int = DEFAULT_IMAGE_MAX_BYTES
    subagents: int | None = None
    """How many subagents (the task tool) may run at once; None: as many as the server
    has slots (zcoder.agent.task_tool)."""
    turn_queue: TurnQueue | None = None
    """Where each request waits for its place at the server, the user's turns first
    (zcoder.model.turn_queue); None: requests go straight to the server."""

    def instructions_text(self) -> str:
        """The project instructions as the system prompt holds them, for this window."""
        return self.instructions or self.instruction_set.render(self.num_ctx)

    def watched(self, stream: AsyncIterator[ChatEvent]) -> AsyncGenerator[ChatEvent, None]:
        """``stream`` within these settings' idle deadline and reply cap: every request
        the agent makes (turns, and compaction's summary) is bounded so."""
        return watched(stream, idle_seconds=self.idle_timeout, max_chars=self.max_reply_chars)

    @classmethod
    def from_config(
        cls, config: Config, model: str, *, skills: SkillSet | None = None
    ) -> AgentSettings:
        """The settings zcoder runs ``model`` with: the app's and ``--prompt``'s, from the
        validated configuration, with the workspace's AGENTS.md chain read now and the
        catalog of ``skills`` (zcoder.skills.discover_skills), if given."""
        return cls(
            model=model,
            workspace=config.workspace,
            profile=config.profile,
            think=config.think,
            num_predict=config.max_output_tokens,
            keep_alive=config.keep_alive,
            compact_at=config.compact_at,
            max_tool_output=config.max_tool_output,
            instruction_set=load_instructions(config.workspace, config.home),
            skills_catalog=catalog_text(skills) if skills is not None else "",
            idle_timeout=config.idle_timeout,
            max_reply_chars=config.max_reply_chars,
            mcp_home=config.home,
            mcp_limits=config.mcp_limits,
            vision=config.vision,
            image_max_bytes=config.image_max_bytes,
            subagents=config.subagents,
            turn_queue=_local_queue(config),
        )


def _local_queue(config: Config) -> TurnQueue | None:
    """The turn queue for a server on this machine; None for one elsewhere, which serves
    other machines too, so this machine's order means nothing to it."""
    address = config.base_url if config.backend == "openai" else config.host
    host = urlsplit(address if "//" in address else f"//{address}").hostname or ""
    if host == "localhost" or host.startswith("127.") or host == "::1":
        return TurnQueue(config.home, places=config.server_places)
    return None
