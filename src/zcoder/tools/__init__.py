"""Tools the model can call, their confinement to the workspace, and command approval.

The agent loop builds a :class:`ToolContext` per turn, offers
``registry.schemas(ctx)`` to the model and runs each call with
``await registry.dispatch(name, args, ctx)``, which never raises except for cancellation.
"""

from typing import TYPE_CHECKING

from zcoder.base.lazy import face

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
    from zcoder.tools.modes import Effects, Mode, parse_mode
    from zcoder.tools.output import DEFAULT_MAX_TOOL_OUTPUT, bound_text, max_tool_output_from_env
    from zcoder.tools.profiles import Profile, TurnOrigin
    from zcoder.tools.registry import ToolRegistry

# The names above are the whole face: each is imported from its module when first
# used (zcoder.base.lazy), so a caller that needs one light name does not pay for the
# whole package at start-up.
__getattr__, __dir__, __all__ = face(__name__, __file__)
