"""Small windows: a catalog of the MCP servers instead of all their tools' schemas.

Every tool's schema is sent with every request. A few MCP servers can offer dozens of
tools, thousands of tokens of schemas: on a model with a window of 8,192 tokens that is
the conversation's room gone before the first word. So when the schemas of the MCP tools
would take more than a share of the window (``ZCODER_MCP_TOOLS_SHARE``, 0.10 by default),
the model is sent one tool in their place, ``mcp_load_tools``, whose description is the
catalog: per server its name, its one line about itself and its tools' names. The model
loads a server's tools when the task needs them; they are offered from the next request
on, for the rest of the session.

The requests stay cheap for the server's cache (docs/models.md, "Requests the server's
cache can reuse"): the tools list only grows, at its end. A loaded server's tools are
added after every tool offered before; nothing offered is reordered. Without a window
(not known yet) or under the share, every tool is offered as before and this tool is not.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Final

from zcoder.base.plural import counted
from zcoder.mcp.connection import McpTool
from zcoder.model.tokens import estimate_tokens
from zcoder.options import McpLimits
from zcoder.tools.base import ToolContext, ToolHandler, ToolResult, ToolSpec

__all__ = ["LOAD_TOOL", "Catalog"]

LOAD_TOOL: Final = "mcp_load_tools"
MAX_NAMES_PER_SERVER: Final = 60
"""Tool names a server's catalog line lists; the rest are counted."""


def schema_tokens(specs: Sequence[ToolSpec]) -> int:
    """The estimate of what ``specs`` cost in a request, as the meter counts them."""
    if not specs:
        return 0
    return estimate_tokens(json.dumps([spec.schema() for spec in specs], ensure_ascii=False))


class Catalog:
    """Which servers' tools the model loaded, and the tool that loads them."""

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
        self.loaded: list[str] = []
        """Servers whose tools the model loaded, in the order it did."""
        self._servers: dict[str, list[McpTool]] = {}

    def needed(self, tokens: int) -> bool:
        """Whether schemas of ``tokens`` (``schema_tokens``) would pass the share of the
        window."""
        window = self.window()
        return bool(window) and tokens > self.share * (window or 0)

    def text(self, tools: Sequence[McpTool]) -> str:
        """The load tool's description: how to use it, then one line per server."""
        servers: dict[str, list[str]] = {}
        for tool in tools:
            servers.setdefault(tool.server, []).append(tool.name)
        lines = [
            "Load the tools of one MCP server, to call them from your next step on. "
            "Their schemas are not sent until loaded (to spare the context window). Servers:"
        ]
        for server, names in servers.items():
            shown = ", ".join(names[:MAX_NAMES_PER_SERVER])
            if len(names) > MAX_NAMES_PER_SERVER:
                shown += f", and {len(names) - MAX_NAMES_PER_SERVER} more"
            about = self.summary(server)
            lines.append(f"- {server}: {about + ' — ' if about else ''}tools: {shown}")
        return "\n".join(lines)

    def spec(self, tools: Sequence[McpTool]) -> ToolSpec:
        self._servers = {}
        for tool in tools:
            self._servers.setdefault(tool.server, []).append(tool)
        parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "server": {
                    "type": "string",
                    "description": "the server's name, as the list gives it",
                    "enum": list(self._servers),
                }
            },
            "required": ["server"],
        }
        handler: ToolHandler = self._load
        return ToolSpec(LOAD_TOOL, self.text(tools), parameters, handler)

    async def _load(self, arguments: dict[str, Any], _ctx: ToolContext) -> ToolResult:
        server = str(arguments.get("server", ""))
        tools = self._servers.get(server)
        if not tools:
            known = ", ".join(self._servers) or "none"
            return ToolResult.error(f"no MCP server {server!r} is ready; ready: {known}")
        names = ", ".join(tool.qualified for tool in tools)
        if server in self.loaded:
            return ToolResult(True, f"The tools of {server!r} are loaded already: {names}")
        self.loaded.append(server)
        return ToolResult(
            True,
            f"Loaded {counted(len(tools), 'tool')} of the MCP server "
            f"{server!r}; call them from your next step: {names}",
            {"server": server},
        )
