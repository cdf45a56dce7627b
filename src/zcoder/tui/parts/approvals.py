"""The agent's Approver and SendConfirmer in the TUI: each question is a guarded dialog.

A question the terminal is too small to show whole is refused (the command denied,
nothing sent); a consent that would be saved is not answered at all, so it is asked
again. Keys the dialog absorbed before it was armed go back to the prompt. An answer the
user gave counts as the user acting (relayed tasks may run again without them, up to the
limit); a dialog closed because the turn was stopped does not.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import Any

from textual.app import App

from zcoder.agent import ConfirmationUnavailable
from zcoder.agent.edits import UndoPlan
from zcoder.agent.rewind import RewindPoint
from zcoder.relay import Peer
from zcoder.tools import ApprovalDecision, CommandApprovalRequest, EditApprovalRequest, Mode
from zcoder.tui.dialogs.approval import ConfirmSendScreen, approval_screen
from zcoder.tui.dialogs.edit import UNDO_CANCEL, EditApprovalScreen, UndoScreen
from zcoder.tui.dialogs.guarded import MIN_DIALOG_HEIGHT, MIN_DIALOG_WIDTH, GuardedDialog
from zcoder.tui.dialogs.plan import PlanScreen
from zcoder.tui.dialogs.rewind import REWIND_CANCEL, RewindScreen
from zcoder.tui.parts.services import Part


@dataclass(eq=False)
class DialogApprovals(Part):
    """Asks on the ``app``'s screen; the header is told when a dialog opens and closes
    (``asking``: its badge, the terminal's title)."""

    _: KW_ONLY
    app: App[Any]
    error: Callable[[str], None]
    give_back: Callable[[str], object]
    user_acted: Callable[[], None]
    call_back: Callable[[str], None]  # the user, when the terminal has no focus

    def _fits(self) -> bool:
        size = self.app.size
        return size.width >= MIN_DIALOG_WIDTH and size.height >= MIN_DIALOG_HEIGHT

    async def approve_command(self, request: CommandApprovalRequest) -> ApprovalDecision:
        if not self._fits():
            if request.kept:  # a consent: nothing is answered, so nothing is saved
                self.error("The terminal is too small for the consent dialog; it will ask again.")
                raise ConfirmationUnavailable("the terminal is too small for the dialog")
            self.error("The terminal is too small for the approval dialog; the command was denied.")
            return ApprovalDecision.DENY
        answer = await self._ask(approval_screen(request, self.give_back))
        return answer if isinstance(answer, ApprovalDecision) else ApprovalDecision.DENY

    async def approve_edit(self, request: EditApprovalRequest) -> ApprovalDecision:
        if not self._fits():
            self.error("The terminal is too small for the edit dialog; nothing was written.")
            return ApprovalDecision.DENY
        answer = await self._ask(EditApprovalScreen(request, give_back=self.give_back))
        return answer if isinstance(answer, ApprovalDecision) else ApprovalDecision.DENY

    async def confirm_undo(self, plan: UndoPlan) -> str:
        """/undo's question; UNDO_CANCEL when the terminal is too small to ask it."""
        if not self._fits():
            self.error("The terminal is too small for the undo dialog; nothing was undone.")
            return UNDO_CANCEL
        answer = await self._ask(UndoScreen(plan, give_back=self.give_back))
        return answer if isinstance(answer, str) else UNDO_CANCEL

    async def confirm_plan(self, plan: str, back: Mode) -> bool:
        """Run the plan a plan-mode turn ended with? False (keep planning) when the
        terminal is too small to show it."""
        if not self._fits():
            self.error("The terminal is too small for the plan dialog; still planning.")
            return False
        return bool(await self._ask(PlanScreen(plan, back, give_back=self.give_back)))

    async def confirm_rewind(self, point: RewindPoint, plan: UndoPlan | None) -> str:
        """/rewind's preview; REWIND_CANCEL when the terminal is too small to show it."""
        if not self._fits():
            self.error("The terminal is too small for the rewind dialog; nothing was rewound.")
            return REWIND_CANCEL
        answer = await self._ask(RewindScreen(point, plan, give_back=self.give_back))
        return answer if isinstance(answer, str) else REWIND_CANCEL

    async def confirm_send(self, peer: Peer, message: str, *, steer: bool = False) -> bool:
        if not self._fits():
            self.error("The terminal is too small for the confirmation dialog; nothing was sent.")
            raise ConfirmationUnavailable("the terminal is too small for the dialog")
        screen = ConfirmSendScreen(peer, message, steer=steer, give_back=self.give_back)
        return bool(await self._ask(screen))

    async def confirm(self, screen: GuardedDialog[Any], too_small: str) -> bool:
        """A yes-or-no dialog's answer; False, and ``too_small`` said, when the terminal
        is too small to show it."""
        if not self._fits():
            self.error(f"{too_small}; nothing was done.")
            return False
        return bool(await self._ask(screen))

    async def _ask(self, screen: GuardedDialog[Any]) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        stopped = False

        def answered(value: Any) -> None:
            if not future.done():
                future.set_result(value)
            if not stopped:
                self.user_acted()

        self.app.push_screen(screen, callback=answered)
        self.say.header(asking=True)
        self.services.activity.asking(True)
        self.call_back("a question waits for your answer")
        try:
            return await future
        except asyncio.CancelledError:
            # The turn was stopped while the dialog was open: close it as a refusal.
            stopped = True
            if screen in self.app.screen_stack:
                screen.dismiss(screen.refusal)
            raise
        finally:
            self.say.header(asking=False)
            self.services.activity.asking(False)
