"""The task board: one per repository, shared by every agent of the user working in it.

No UI, model or agent imports: the model's tools (zcoder.board.tools), ``zcoder tasks``
(zcoder.board.cli), the TUI and ``zcoder mcp serve`` are its clients.
"""

from typing import TYPE_CHECKING

from zcoder.base.lazy import face

if TYPE_CHECKING:
    from zcoder.board.commands import answer, parse_tasks_argument
    from zcoder.board.records import BoardError, Claimant, Note, State, Task, TaskRefused
    from zcoder.board.store import Board, Claim, parse_task_id

__getattr__, __dir__, __all__ = face(__name__, __file__)
