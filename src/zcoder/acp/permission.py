"""The one client method zcoder's ACP agent side calls itself: ``session/request_permission``.

Both ends of zcoder's ACP speak it: the agent side asks (acp/approvals.py, acp/session.py
take any client that has it, so tests can answer without the SDK's connection) and the
client side of ``zcoder --connect`` answers (remote/connection.py's ``Handler``). One
protocol keeps the two signatures the same.
"""

from __future__ import annotations

from typing import Any, Protocol

from acp.schema import PermissionOption, RequestPermissionResponse, ToolCallUpdate


class PermissionAsker(Protocol):
    """The part of the SDK's client interface that asks the user for a permission."""

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse: ...
