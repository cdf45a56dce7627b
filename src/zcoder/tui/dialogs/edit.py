"""The dialogs about file edits: approving one (ZCODER_EDITS=ask) and confirming /undo.

Both are ``GuardedDialog``s (tui/dialogs/guarded.py): armed after a pause, the whole diff must
have been on screen before ``y`` answers, Escape refuses. The content is the coloured
diff of exactly what would be written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from rich.text import Text
from textual.widgets import Static

from zcoder.agent.edits import UndoPlan
from zcoder.base.plural import counted
from zcoder.tools import EditApprovalRequest
from zcoder.tui.dialogs.approval import DecisionDialog, DecisionKeys
from zcoder.tui.dialogs.guarded import GuardedDialog
from zcoder.tui.widgets.diff_view import diff_text
from zcoder.tui.widgets.shared import screen_safe

UNDO_CANCEL: Final = "cancel"
UNDO_KEEP_CHANGED: Final = "undo"
UNDO_OVERWRITE: Final = "overwrite"


def _paths(paths: tuple[str, ...] | list[str]) -> str:
    shown = ", ".join(screen_safe(p) for p in paths[:5])
    return shown + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


class EditApprovalScreen(DecisionDialog[EditApprovalRequest]):
    """y writes this edit, a the rest of this turn's edits (when offered), n/Esc refuses."""

    KEYS = DecisionKeys(
        yes="write",
        once="write",
        grant="allow this turn's edits",
        this_one="write this one edit",
        no="refuse",
    )

    @property
    def grant_offered(self) -> bool:
        return self.request.allow_turn

    def title_text(self) -> Text:
        count = len(self.request.paths)
        return self.titled(
            f"Write this change to {count} files?" if count > 1 else "Write this change?"
        )

    def meta(self) -> list[Static]:
        r = self.request
        return [Static(Text(f"{screen_safe(r.tool)} · {_paths(r.paths)}"), classes="meta")]

    def body(self) -> str:
        return self.request.diff

    def body_renderable(self) -> Text:
        return diff_text(self.request.diff, reveal_blanks=True)


class UndoScreen(GuardedDialog[str]):
    """What /undo will do, file by file, and the diff of it; y undoes, o also overwrites
    the files changed since the agent's edit, n/Esc cancels."""

    def __init__(self, plan: UndoPlan, *, give_back: Callable[[str], object] | None = None):
        super().__init__(UNDO_CANCEL, give_back=give_back)
        self.plan = plan

    def title_text(self) -> Text:
        return Text(f"Undo the file changes of {screen_safe(self.plan.name)}?")

    def meta(self) -> list[Static]:
        widgets = [
            Static(
                Text(
                    f"{counted(len(self.plan.steps), 'file')}: "
                    + _paths([s.path for s in self.plan.steps])
                ),
                classes="meta",
            )
        ]
        conflicts = self.plan.conflicts
        if conflicts:
            widgets.append(
                Static(
                    Text(
                        f"{_paths([s.path for s in conflicts])} changed since the agent's edit: "
                        + (
                            "y keeps them, o overwrites them"
                            if len(conflicts) > 1
                            else "y keeps it, o overwrites it"
                        )
                    ),
                    classes="warning",
                )
            )
        return widgets

    def body(self) -> str:
        return self.plan.text()

    def body_renderable(self) -> Text:
        return diff_text(self.plan.text(), reveal_blanks=True)

    def keys_text(self) -> str:
        if self.plan.conflicts:
            return "[y] undo, keep changed files   [o] undo, overwrite them too   [n]/Esc cancel"
        return "[y] undo   [n]/Esc cancel"

    def answer_for(self, key: str) -> str | None:
        if key == "y":
            return UNDO_KEEP_CHANGED
        if key == "o" and self.plan.conflicts:
            return UNDO_OVERWRITE
        if key == "n":
            return UNDO_CANCEL
        return None
