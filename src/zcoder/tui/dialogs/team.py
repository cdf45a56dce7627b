"""The team's questions (tui/parts/team_ui.py): start a worker, merge one, remove a
worktree with uncommitted changes. Each is a guarded dialog: ``y`` only once armed and
once everything (the task, the whole diff, the files) has been on screen; Escape, Enter
and ``n`` say no. None of them is skipped by ``--yes`` or an earlier ``a``."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence

from rich.text import Text
from textual.widgets import Static

from zcoder.base.plural import counted
from zcoder.base.sanitize import visible
from zcoder.team.git import MergePreview
from zcoder.team.roster import Worker
from zcoder.team.spawn import SpawnPlan
from zcoder.tui.dialogs.guarded import YesNoDialog
from zcoder.tui.widgets.diff_view import diff_text

__all__ = ["MergeScreen", "RemoveWorktreeScreen", "SpawnScreen"]


class SpawnScreen(YesNoDialog):
    """y/N before a worker is started: its name, branch, worktree, the lead's choices it
    starts with (``--mode``, ``--profile``…) and its whole task."""

    def __init__(
        self,
        plan: SpawnPlan,
        choices: Sequence[str],
        *,
        by_model: bool,
        give_back: Callable[[str], object] | None = None,
    ) -> None:
        super().__init__(give_back=give_back)
        self.plan = plan
        self.choices = choices
        self.by_model = by_model

    def title_text(self) -> Text:
        return Text(f"Start the worker {visible(self.plan.name)}?")

    def meta(self) -> list[Static]:
        p = self.plan
        lines = [
            f"branch {visible(p.branch)} from {visible(p.base)} · a new tmux window",
            f"worktree {visible(str(p.worktree))}",
            "Its task goes through the relay: its commands and edits are asked in its window.",
        ]
        if self.choices:  # the lead's own (its model goes without saying)
            lines.insert(2, f"as this zcoder: {visible(shlex.join(self.choices))}")
        widgets = [Static(Text("\n".join(lines)), classes="meta")]
        if self.by_model:
            widgets.append(Static(Text("The model asks to start it."), classes="warning"))
        return widgets

    def body(self) -> str:
        return self.plan.task

    def keys_text(self) -> str:
        return "[y] start it   [N]/Esc/Enter do not"


class MergeScreen(YesNoDialog):
    """y/N before a worker's branch is merged: its commits, its diff stat and whole diff."""

    def __init__(
        self,
        worker: Worker,
        preview: MergePreview,
        into: str,
        uncommitted: list[str],
        *,
        give_back: Callable[[str], object] | None = None,
    ) -> None:
        super().__init__(give_back=give_back)
        self.worker = worker
        self.preview = preview
        self.into = into
        self.uncommitted = uncommitted

    def title_text(self) -> Text:
        return Text(f"Merge {visible(self.preview.branch)} into {visible(self.into)}?")

    def meta(self) -> list[Static]:
        p = self.preview
        widgets = [
            Static(
                Text(f"{counted(p.commits, 'commit')} · merges cleanly (git merge-tree)"),
                classes="meta",
            )
        ]
        if self.uncommitted:
            widgets.append(
                Static(
                    Text(
                        f"{visible(self.worker.name)} has "
                        f"{counted(len(self.uncommitted), 'uncommitted change')} in its "
                        "worktree: not part of this merge"
                    ),
                    classes="warning",
                )
            )
        return widgets

    def body(self) -> str:
        return f"{self.preview.stat}\n\n{self.preview.diff}"

    def body_renderable(self) -> Text:
        return diff_text(self.body(), reveal_blanks=True)

    def keys_text(self) -> str:
        return "[y] merge   [N]/Esc/Enter do not"


class RemoveWorktreeScreen(YesNoDialog):
    """y/N before a worktree with uncommitted changes is removed (they are lost)."""

    def __init__(
        self, worker: Worker, files: list[str], *, give_back: Callable[[str], object] | None = None
    ) -> None:
        super().__init__(give_back=give_back)
        self.worker = worker
        self.files = files

    def title_text(self) -> Text:
        return Text(f"Remove {visible(self.worker.name)}'s worktree and its changes?")

    def meta(self) -> list[Static]:
        return [
            Static(
                Text(
                    f"{visible(self.worker.worktree)} has "
                    f"{counted(len(self.files), 'uncommitted change')}: they are lost. "
                    f"Its branch {visible(self.worker.branch)} stays."
                ),
                classes="warning",
            )
        ]

    def body(self) -> str:
        return "\n".join(self.files)

    def keys_text(self) -> str:
        return "[y] remove it   [N]/Esc/Enter keep it"
