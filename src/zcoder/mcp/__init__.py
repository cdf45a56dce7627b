"""zcoder's MCP client: the servers users already configure for other agents, as tools.

``config`` reads ``.mcp.json`` and ``$ZCODER_HOME/mcp.json``; ``consent`` keeps the user's
yes or no to each project server; ``manager`` runs the servers on a loop of their own;
``tools`` offers their tools through the registry with run_command's approval; ``cli`` is
``zcoder mcp``. The SDK is imported only when a server starts, so a session without MCP
servers pays nothing for this package.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zcoder.mcp.manager import McpManager
    from zcoder.tools.registry import ToolRegistry

__all__ = ["attach_mcp"]


def attach_mcp(
    registry: ToolRegistry,
    workspace: Path,
    home: Path | None,
    window: Callable[[], int | None] = lambda: None,
) -> McpManager | None:
    """Offer the configured MCP servers' tools through ``registry``; None when there are
    none, and then nothing changes: the SDK is not imported, no thread starts, no tool and
    no token is added to any request. ``window``: the model's context window, when known
    (a small one gets a catalog of the servers instead of every schema)."""
    from zcoder.mcp.config import load_mcp_config

    config = load_mcp_config(workspace, home)
    if not config.servers and not config.problems:
        return None
    from zcoder.mcp.manager import McpManager
    from zcoder.mcp.tools import McpToolSource

    manager = McpManager(workspace, home, config=config)
    registry.add_source(McpToolSource(manager, window))
    return manager
