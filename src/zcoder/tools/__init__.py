"""Tools the model can call, their confinement to the workspace, and command approval.

The agent loop builds a :class:`ToolContext` per turn, offers
``registry.schemas(ctx)`` to the model and runs each call with
``await registry.dispatch(name, args, ctx)``, which never raises except for cancellation.
"""

from typing import TYPE_CHECKING

from zcoder.base.lazy import lazy_exports

if TYPE_CHECKING:
    from zcoder.tools.approval import (
        ApprovalConfigError,
        ApprovalDecision,
        ApprovalPolicy,
        Approver,
        CommandApprovalRequest,
        CommandAuthorization,
        CommandPolicy,
        EditApprovalRequest,
        EditPolicy,
    )
    from zcoder.tools.base import EditGate, ToolContext, ToolResult, ToolSpec
    from zcoder.tools.change import FileChange
    from zcoder.tools.confinement import ConfinementError
    from zcoder.tools.defaults import BUILTIN_TOOLS, default_registry
    from zcoder.tools.finish import FINISH_TOOL_NAME, FinishStatus
    from zcoder.tools.guard import GuardVerdict, Verdict, check_command, classify_command
    from zcoder.tools.output import DEFAULT_MAX_TOOL_OUTPUT, bound_text, max_tool_output_from_env
    from zcoder.tools.profiles import Profile, TurnOrigin
    from zcoder.tools.registry import ToolRegistry

# Each name is imported from its module when first used (PEP 562), so a caller that
# needs one light name does not pay for the whole package at start-up.
__getattr__ = lazy_exports(
    __name__,
    {
        "ApprovalConfigError": "approval",
        "ApprovalDecision": "approval",
        "ApprovalPolicy": "approval",
        "Approver": "approval",
        "CommandApprovalRequest": "approval",
        "CommandAuthorization": "approval",
        "CommandPolicy": "approval",
        "EditApprovalRequest": "approval",
        "EditPolicy": "approval",
        "ToolContext": "base",
        "ToolResult": "base",
        "ToolSpec": "base",
        "ConfinementError": "confinement",
        "BUILTIN_TOOLS": "defaults",
        "default_registry": "defaults",
        "EditGate": "base",
        "FileChange": "change",
        "FINISH_TOOL_NAME": "finish",
        "FinishStatus": "finish",
        "GuardVerdict": "guard",
        "Verdict": "guard",
        "check_command": "guard",
        "classify_command": "guard",
        "DEFAULT_MAX_TOOL_OUTPUT": "output",
        "bound_text": "output",
        "max_tool_output_from_env": "output",
        "Profile": "profiles",
        "TurnOrigin": "profiles",
        "ToolRegistry": "registry",
    },
)

__all__ = [
    "BUILTIN_TOOLS",
    "DEFAULT_MAX_TOOL_OUTPUT",
    "FINISH_TOOL_NAME",
    "ApprovalConfigError",
    "ApprovalDecision",
    "ApprovalPolicy",
    "Approver",
    "CommandApprovalRequest",
    "CommandAuthorization",
    "CommandPolicy",
    "ConfinementError",
    "EditApprovalRequest",
    "EditGate",
    "EditPolicy",
    "FileChange",
    "FinishStatus",
    "GuardVerdict",
    "Profile",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "TurnOrigin",
    "Verdict",
    "bound_text",
    "check_command",
    "classify_command",
    "default_registry",
    "max_tool_output_from_env",
]
