"""The board as agents use it: the model's tools and ``zcoder mcp serve`` answer with this.

One object per process: it opens the repository's board on first use and holds the claims
this process makes, so they live exactly as long as the process (zcoder, or the MCP
server a client started). Answers are text for a model: every field a person or another
agent wrote is made visible and defused (zcoder.base.sanitize). Refusals are TaskRefused,
a broken board BoardError; both carry the words to answer with. Thread-safe: tools call
it from worker threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from zcoder.base.sanitize import body_for_model, field_for_model
from zcoder.board import render
from zcoder.board.records import Claimant, State, TaskRefused
from zcoder.board.store import Board, parse_task_id

# What each of the four tools does, for the model here and for MCP clients alike.
ABOUT_LIST: Final = "List the repository's shared task board; with id, one task in full."
ABOUT_ADD: Final = "Add a task to the shared board; after: ids that must be done first."
ABOUT_CLAIM: Final = "Claim a task (without id: the next claimable one) so no other agent takes it."
ABOUT_UPDATE: Final = (
    "Settle a task you claimed (done, failed, or open to give it back), or add a note."
)
EMPTY: Final = "The task board is empty; task_add adds a task."
HELD: Final = (
    "It is yours while this process runs: settle it with task_update (state done, failed, "
    "or open to give it back), adding a note of what you did."
)


class BoardService:
    def __init__(self, home: Path, workspace: Path, claimant: Callable[[], Claimant]) -> None:
        self.home = home
        self.workspace = workspace
        self.claimant = claimant
        self._board: Board | None = None
        self._lock = threading.Lock()

    def board(self) -> Board:
        with self._lock:
            if self._board is None:
                self._board = Board.for_workspace(self.home, self.workspace)
            return self._board

    def close(self) -> None:
        """Give back this process's claims and close the board (idempotent)."""
        with self._lock:
            board, self._board = self._board, None
        if board is not None:
            board.close()

    # -- the four tools ------------------------------------------------------------------

    def list_text(self, task_id: object = None) -> str:
        board = self.board()
        if task_id is not None:
            return render.details(
                board.task(parse_task_id(task_id)), field_for_model, body_for_model
            )
        text = render.listing(board.tasks(), field_for_model, empty=EMPTY)
        mine = [f"#{claim.task_id}" for claim in board.held_claims()]
        return text + (f"\nYours: {', '.join(mine)}" if mine else "")

    def add_text(self, title: str, description: str = "", after: Sequence[object] = ()) -> str:
        task = self.board().add(title, description, after, author=self.claimant().name)
        return f"Added {render.line(task, field_for_model)}"

    def claim_text(self, task_id: object = None) -> str:
        board = self.board()
        if task_id is None:
            claim = board.claim_next(self.claimant())
            if claim is None:
                raise TaskRefused("no task is claimable now (all done, claimed or waiting)")
        else:
            claim = board.claim(parse_task_id(task_id), self.claimant())
        task = render.details(claim.task, field_for_model, body_for_model)
        return f"Claimed {task}\n{HELD}"

    def update_text(self, task_id: object, state: str | None = None, note: str = "") -> str:
        board = self.board()
        number = parse_task_id(task_id)
        who = self.claimant().name
        if state is None:
            if not note:
                raise TaskRefused("give a state (done, failed, open), a note, or both")
            return f"Noted on {render.line(board.note(number, note, author=who), field_for_model)}"
        try:
            wanted = State(state)
        except ValueError:
            wanted = State.CLAIMED
        if wanted is State.CLAIMED:
            raise TaskRefused("state must be done, failed or open")
        claim = board.claim_of(number)
        if claim is None:
            board.task(number)  # an unknown id is said as such
            raise TaskRefused(f"you do not hold task #{number}: task_claim it first")
        task = claim.settle(wanted, note, who)
        return f"Now {render.line(task, field_for_model)}"
