"""Small windows: the MCP servers' tools offered on demand instead of all their schemas.

Every tool's schema is sent with every request. A few MCP servers can offer dozens of
tools, thousands of tokens of schemas: on a model with a window of 8,192 tokens that is
the conversation's room gone before the first word. So when the schemas of the MCP tools
would take more than a share of the window (``ZCODER_MCP_TOOLS_SHARE``, 0.10 by default),
they are offered on demand, like every tool declared so (zcoder.tools.catalog): the
catalog tool, ``load_tools``, lists each server as one entry (its name, its one line about
itself and its tools' names), and the model loads a server's tools when the task needs
them; they are offered from the next request on, for the rest of the session, at the end
of the list. Without a window (not known yet) or under the share, every tool is offered
as before and no server is listed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

from zcoder.mcp.connection import McpTool
from zcoder.model.tokens import estimate_tokens
from zcoder.options import McpLimits
from zcoder.tools.base import ToolSpec
from zcoder.tools.catalog import Shelf

__all__ = ["McpCatalog", "schema_tokens"]


def schema_tokens(specs: Sequence[ToolSpec]) -> int:
    """The estimate of what ``specs`` cost in a request, as the meter counts them."""
    if not specs:
        return 0
    return estimate_tokens(json.dumps([spec.schema() for spec in specs], ensure_ascii=False))


class McpCatalog:
    """Whether the MCP tools are offered on demand, and their catalog entries."""

    def __init__(
        self,
        window: Callable[[], int | None],
        summary: Callable[[str], str],
        *,
        share: float | None = None,
    ) -> None:
        self.window = window
        self.summary = summary
        self.share = share if share is not None else McpLimits().tools_share

    def needed(self, tokens: int) -> bool:
        """Whether schemas of ``tokens`` (``schema_tokens``) would pass the share of the
        window."""
        window = self.window()
        return bool(window) and tokens > self.share * (window or 0)

    def shelves(self, tools: Sequence[McpTool], specs: Mapping[str, ToolSpec]) -> list[Shelf]:
        """One catalog entry per server: its tools (``specs``, by qualified name)."""
        servers: dict[str, list[McpTool]] = {}
        for tool in tools:
            servers.setdefault(tool.server, []).append(tool)
        return [
            Shelf(
                server,
                self.summary(server),
                tuple(specs[tool.qualified] for tool in listed),
                tuple(tool.name for tool in listed),
            )
            for server, listed in servers.items()
        ]
