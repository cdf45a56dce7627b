"""/rewind's two dialogs: the list of the user's earlier prompts, then the preview.

The list (``RewindPicker``) is a plain pick, newest first: Enter chooses, Escape cancels.
The preview (``RewindScreen``) is a ``GuardedDialog`` (tui/dialogs/guarded.py): what the
conversation loses, then each file that would go back with its diff stat (/diff shows the diffs);
armed after a pause, the whole preview seen before a key answers, Escape cancels. As
Claude Code's: the conversation and the files (b), the conversation only (c), the files
only (f). A file changed since the agent's edit (by the user, an editor, a command) is
kept as it is, and says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Final

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static

from zcoder.agent.edits import UndoPlan
from zcoder.agent.rewind import RewindPoint
from zcoder.base.plural import counted
from zcoder.tui.dialogs.guarded import GuardedDialog
from zcoder.tui.dialogs.model_picker import DIALOG_CSS
from zcoder.tui.widgets.shared import screen_safe

REWIND_CANCEL: Final = "cancel"
REWIND_BOTH: Final = "both"
REWIND_CONVERSATION: Final = "conversation"
REWIND_FILES: Final = "files"


class RewindPicker(ModalScreen[RewindPoint | None]):
    """The user's earlier prompts of this session, newest first."""

    DEFAULT_CSS = DIALOG_CSS.replace("ModelPicker", "RewindPicker")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, points: list[RewindPoint]) -> None:
        super().__init__()
        self.points = points

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(
                Text("Rewind to before which prompt? (Esc cancels)"),
                classes="title",
            )
            yield OptionList(*(Text(screen_safe(self._line(p))) for p in self.points))

    @staticmethod
    def _line(point: RewindPoint) -> str:
        back = "the last" if point.prompts_after == 1 else f"{point.prompts_after} back"
        older = "" if point.message is not None else " (files only)"
        return f"{point.short}  · {back}{older}"

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.points[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)


class RewindScreen(GuardedDialog[str]):
    """What a rewind to ``point`` does: to the conversation, and to each file (``plan``,
    None when no turn after it changed files): its diff stat, or why it is kept."""

    def __init__(
        self,
        point: RewindPoint,
        plan: UndoPlan | None,
        *,
        give_back: Callable[[str], object] | None = None,
    ) -> None:
        super().__init__(REWIND_CANCEL, give_back=give_back)
        self.point = point
        self.plan = plan

    @property
    def answers(self) -> dict[str, str]:
        """The keys offered, and what each does."""
        talk, files = self.point.message is not None, self.plan is not None
        offered = {}
        if talk and files:
            offered["b"] = REWIND_BOTH
        if talk:
            offered["c"] = REWIND_CONVERSATION
        if files:
            offered["f"] = REWIND_FILES
        return offered

    def title_text(self) -> Text:
        return Text(f"Rewind to before “{screen_safe(self.point.short)}”?")

    def meta(self) -> list[Static]:
        return [Static(Text(self.point.describe()), classes="meta")]

    def body(self) -> str:
        if self.plan is None:
            return (
                "No file was changed by the agent after this prompt "
                "(edits by run_command are not tracked)."
            )
        lines = [f"Files back as before it ({counted(len(self.plan.steps), 'file')}):"]
        for step in self.plan.steps:
            if step.problem:
                lines.append(step.describe())
            elif step.changed_since:
                lines.append(f"{step.path}: changed since the agent's edit, kept as it is")
            else:
                lines.append(f"{step.path}  {step.diff.stats}  ({step.action})")
        return "\n".join(lines)

    ESC_HINT = "Esc cancels: nothing is rewound"

    def keys_text(self) -> str:
        words = {
            REWIND_BOTH: "conversation and files",
            REWIND_CONVERSATION: "conversation only",
            REWIND_FILES: "files only",
        }
        offered = [f"[{key}] {words[answer]}" for key, answer in self.answers.items()]
        return "   ".join([*offered, "[n]/Esc cancel"])

    def answer_for(self, key: str) -> str | None:
        if key == "n":
            return REWIND_CANCEL
        return self.answers.get(key)
