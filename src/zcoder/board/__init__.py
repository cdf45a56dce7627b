"""The task board: one per repository, shared by every agent of the user working in it.

No UI, model or agent imports: the model's tools (zcoder.board.tools), ``zcoder tasks``
(zcoder.board.cli), the TUI and ``zcoder mcp serve`` are its clients.
"""

from zcoder.board.records import BoardError, Claimant, Note, State, Task, TaskRefused
from zcoder.board.store import Board, Claim, parse_task_id

__all__ = [
    "Board",
    "BoardError",
    "Claim",
    "Claimant",
    "Note",
    "State",
    "Task",
    "TaskRefused",
    "parse_task_id",
]
