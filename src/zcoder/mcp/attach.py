"""The MCP servers' tools joined to an agent's registry: at once, or when a file first
names a server (LateMcp); the SDK is imported only when a server starts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from zcoder.mcp.config import config_stamp, load_mcp_config

if TYPE_CHECKING:
    from zcoder.mcp.manager import McpManager
    from zcoder.mcp.tools import McpToolSource
    from zcoder.options import McpLimits
    from zcoder.tools.base import ToolContext, ToolSpec
    from zcoder.tools.catalog import Shelf
    from zcoder.tools.registry import ToolRegistry

__all__ = ["LateMcp", "attach_mcp", "attach_or_wait"]


def attach_mcp(
    registry: ToolRegistry,
    workspace: Path,
    home: Path | None,
    window: Callable[[], int | None] = lambda: None,
    limits: McpLimits | None = None,
) -> McpManager | None:
    """Offer the configured MCP servers' tools through ``registry``; None when there are
    none, and then nothing changes: the SDK is not imported, no thread starts, no tool and
    no token is added to any request. ``window``: the model's context window, when known
    (a small one gets a catalog of the servers instead of every schema); ``limits``: the
    deadlines and that share (Config.mcp_limits)."""
    config = load_mcp_config(workspace, home)
    if not config.servers and not config.problems:
        return None
    from zcoder.mcp.manager import McpManager
    from zcoder.mcp.tools import McpToolSource

    manager = McpManager(workspace, home, config=config, limits=limits)
    registry.add_source(McpToolSource(manager, window))
    return manager


class LateMcp:
    """The MCP servers of a session that began with none configured, taken when a file
    first names one (``zcoder mcp add`` in another terminal): at the start of a turn, or
    when ``/mcp`` looks. Until then it only compares the files' stamps, so a session
    without servers still imports no SDK, starts no thread and offers no tool.
    A registry's tool source (zcoder.tools.registry.ToolSource)."""

    def __init__(
        self,
        registry: ToolRegistry,
        workspace: Path,
        home: Path | None,
        window: Callable[[], int | None],
        attached: Callable[[McpManager], None],
        *,
        limits: McpLimits | None = None,
    ) -> None:
        self.workspace, self.home, self.window = workspace, home, window
        self.limits = limits
        self.attached = attached
        self._stamp = config_stamp(workspace, home)
        self._source: McpToolSource | None = None
        registry.add_source(self)

    def attach_if_configured(self) -> McpManager | None:
        """The manager, made now if a file names a server (or has a problem) since."""
        if self._source is not None:
            return self._source.manager
        stamp = config_stamp(self.workspace, self.home)
        if stamp == self._stamp:
            return None
        self._stamp = stamp
        config = load_mcp_config(self.workspace, self.home)
        if not config.servers and not config.problems:
            return None
        from zcoder.mcp.manager import McpManager
        from zcoder.mcp.tools import McpToolSource

        manager = McpManager(self.workspace, self.home, config=config, limits=self.limits)
        self._source = McpToolSource(manager, self.window)
        self.attached(manager)
        return manager

    def specs(self) -> Sequence[ToolSpec]:
        return self._source.specs() if self._source is not None else []

    def shelves(self) -> Sequence[Shelf]:
        return self._source.shelves() if self._source is not None else []

    async def prepare(self, ctx: ToolContext) -> list[str]:
        self.attach_if_configured()
        return await self._source.prepare(ctx) if self._source is not None else []


def attach_or_wait(
    registry: ToolRegistry,
    workspace: Path,
    home: Path,
    window: Callable[[], int | None],
    attached: Callable[[McpManager], None],
    *,
    limits: McpLimits | None = None,
) -> tuple[McpManager | None, LateMcp | None]:
    """The configured servers' manager now (attach_mcp), or, with none configured, a
    LateMcp that calls ``attached`` with the manager once a file names one."""
    manager = attach_mcp(registry, workspace, home, window, limits)
    if manager is not None:
        return manager, None
    return None, LateMcp(registry, workspace, home, window, attached, limits=limits)
