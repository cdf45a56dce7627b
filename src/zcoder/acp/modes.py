"""zcoder's permission modes (zcoder.tools.modes) as ACP session modes: the editor's mode
menu lists them, and its choice switches the session's agent (``session/set_mode``).

Only the editor's user switches them, as in the TUI: no tool does, and a relayed task
never does. A plan-mode turn ends with the plan as its reply; the user runs it by
switching the mode and prompting (an editor has no dialog of zcoder's own).
"""

from __future__ import annotations

from acp import RequestError
from acp.schema import SessionMode, SessionModeState

from zcoder.tools import ApprovalPolicy
from zcoder.tools.modes import Mode, parse_mode

__all__ = ["session_modes", "set_session_mode"]


def session_modes(approval: ApprovalPolicy) -> SessionModeState:
    """The modes an editor lists, and the session's current one."""
    return SessionModeState(
        current_mode_id=approval.mode.value,
        available_modes=[
            SessionMode(id=mode.value, name=mode.label.capitalize(), description=mode.about)
            for mode in Mode
        ],
    )


def set_session_mode(approval: ApprovalPolicy, mode_id: str) -> None:
    """The editor's user chose ``mode_id``; an unknown one is refused, nothing changes."""
    try:
        mode = parse_mode(mode_id)
    except ValueError as exc:
        raise RequestError.invalid_params({"modeId": str(exc)}) from None
    approval.switch_mode(mode)
