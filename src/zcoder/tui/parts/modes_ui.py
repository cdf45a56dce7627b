"""The permission mode in the TUI: Shift+Tab and /mode switch it, the header shows it,
and the plan a plan-mode turn ends with is offered to run (tui/dialogs/plan.py).

The mode is the agent's ApprovalPolicy's (zcoder.tools.modes): only the user changes it,
here. A plan is offered after the user's own turns only, never after a relayed task's; an
accepted plan switches back to the mode before plan mode and runs as the next prompt.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Final

from zcoder.slash.declared import ModeCommands
from zcoder.tools.approval import ApprovalPolicy
from zcoder.tools.modes import Mode, parse_mode
from zcoder.tui.parts.services import Part

ACCEPTED_PLAN: Final = "The plan is accepted: carry it out now."
"""The prompt an accepted plan runs as (the plan itself is in the history already)."""
ELSEWHERE: Final = "The permission mode is the remote zcoder's (its --mode); not switched here."


@dataclass(eq=False)
class ModesUI(Part, ModeCommands):
    """Takes, besides its context (the services' agent), ``confirm_plan`` (the plan
    dialog, tui/parts/approvals.py) and ``queue_prompt`` (the screen's)."""

    _: KW_ONLY
    confirm_plan: Callable[[str, Mode], Awaitable[bool]]
    queue_prompt: Callable[[str], object]
    early: list[Mode] = field(default_factory=list)
    """The modes the user switched to before start-up made the agent, in order: switched
    through once it has (the last is its mode; an accepted plan goes back to the one
    before plan mode, as when switched after)."""

    def _approval(self) -> ApprovalPolicy | None:
        """The agent's policy; None before start-up made the agent, and over --connect,
        where the agent (the remote zcoder's) has none here."""
        approval = getattr(self.services.agent, "approval", None)
        return approval if isinstance(approval, ApprovalPolicy) else None

    def _starting(self) -> bool:
        """Start-up has not made the agent yet (a key pressed while zcoder starts)."""
        return self.services.agent is None

    def _chosen(self) -> Mode | None:
        """The mode the user chose: the agent's, or the one chosen before it was made."""
        approval = self._approval()
        if approval is not None:
            return approval.chosen_mode
        if self._starting():
            return self.early[-1] if self.early else self.services.config.mode
        return None

    def switch(self, mode: Mode) -> None:
        """The user chose ``mode``: the agent's next request follows it, the header too.
        Before start-up has made the agent, it is kept and given to it (``agent_made``)."""
        approval = self._approval()
        if approval is None and not self._starting():
            self.say.notice(ELSEWHERE)
            return
        if approval is None:
            self.early.append(mode)
        else:
            approval.switch_mode(mode)
        self.say.header(mode=mode.value)

    def agent_made(self) -> None:
        """Start-up made the agent: a mode chosen meanwhile is its mode from now on."""
        approval, chosen, self.early = self._approval(), self.early, []
        if approval is not None:
            for mode in chosen:
                approval.switch_mode(mode)

    def cycle(self) -> None:
        """Shift+Tab: ask → accept edits → plan → ask."""
        chosen = self._chosen()
        if chosen is None:
            self.say.notice(ELSEWHERE)
            return
        self.switch(chosen.next())

    def mode_command(self, argument: str, /) -> None:
        chosen = self._chosen()
        if chosen is None:
            self.say.notice(ELSEWHERE)
            return
        if not argument.strip():
            mode = chosen
            self.say.notice(
                f"Mode: {mode.label} ({mode.about}). Switch with /mode ask, /mode "
                "accept-edits, /mode plan, or Shift+Tab."
            )
            return
        try:
            mode = parse_mode(argument)
        except ValueError as exc:
            self.say.error(str(exc))
            return
        self.switch(mode)
        self.say.notice(f"Mode: {mode.label} ({mode.about}).")

    async def offer_plan(self, plan: str) -> None:
        """The user's turn ended with ``plan`` in plan mode: run it? Yes switches back to
        the mode before plan mode and queues the plan's run as the next prompt; no keeps
        planning."""
        approval = self._approval()
        if approval is None or approval.mode is not Mode.PLAN or not plan.strip():
            return
        back = approval.mode_before_plan
        if not await self.confirm_plan(plan, back):
            self.say.notice("Still planning: say what to change, or Shift+Tab to leave plan mode.")
            return
        if approval.mode is Mode.PLAN:  # not switched meanwhile by the user
            self.switch(back)
        self.queue_prompt(ACCEPTED_PLAN)
