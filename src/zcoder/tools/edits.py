"""What the file-changing tools share: the planned change, the gate it passes, its diff.

write_file, replace_text and apply_patch first work out each file's content before and
after (a ``FileChange``), then ask the turn's ``EditGate`` (``ToolContext.edits``): in
``ZCODER_EDITS=ask`` mode it asks the user, showing the diff; it also keeps the snapshot
``/undo`` restores. Only then do they write, and tell the gate it was done. Without a
gate (tests of a bare tool) they write as before.

The model's result stays short (``+3 −1``); the diff itself goes into the result's
metadata, for the transcript only.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Final

from zcoder.tools.base import EditGate, ToolContext
from zcoder.tools.change import FileChange
from zcoder.tools.confinement import ConfinedPath, ConfinementError, open_read, read_limited
from zcoder.tools.diffs import compact_lines, human_size
from zcoder.tools.freshness import stale_message
from zcoder.tools.offload import StopSignal, in_thread

__all__ = [
    "DIFF_PREVIEW_LINES",
    "SNAPSHOT_MAX_BYTES",
    "EditGate",
    "FileChange",
    "describe_changes",
    "gate_changes",
    "load_before",
    "record_changes",
]

SNAPSHOT_MAX_BYTES: Final = 8 * 1024 * 1024
"""The largest previous content kept for /undo (as large as replace_text may edit)."""
DIFF_PREVIEW_LINES: Final = 24
"""Diff lines a tool entry of the transcript shows; /diff shows all of them."""


def load_before(target: ConfinedPath, stop: StopSignal | None = None) -> tuple[bytes | None, str]:
    """A file's content before a write: (None, "") when absent; (None, why) when it is too
    large to keep. Raises ConfinementError for what is not a regular file, ToolStopped
    when ``stop`` is set during the read."""
    try:
        handle = open_read(target)  # a FIFO, socket or device is refused, never waited on
    except FileNotFoundError:
        return None, ""
    with handle:
        size = os.fstat(handle.fileno()).st_size
        if size > SNAPSHOT_MAX_BYTES:
            return None, (
                f"{human_size(size)}, over the {human_size(SNAPSHOT_MAX_BYTES)} snapshot limit"
            )
        data = read_limited(handle, SNAPSHOT_MAX_BYTES + 1, stop)
    if len(data) > SNAPSHOT_MAX_BYTES:
        return None, f"over the {human_size(SNAPSHOT_MAX_BYTES)} snapshot limit"
    return data, ""


async def gate_changes(ctx: ToolContext, tool: str, changes: Sequence[FileChange]) -> str:
    """Ask the turn's gate; "" means go ahead (also when there is no gate)."""
    book = ctx.freshness
    if book is not None:
        stale = await in_thread(
            ctx.stop,
            lambda: [c.path for c in changes if book.stale(c.path, c.target, c.before)],
            name="freshness",
        )
        if stale:
            return stale_message(stale)
    if ctx.edits is None or not changes:
        return ""
    try:
        return await ctx.edits.review(tool, changes, ctx)
    except ConfinementError as exc:
        return str(exc)


def record_changes(ctx: ToolContext, tool: str, changes: Sequence[FileChange]) -> None:
    if ctx.freshness is not None:
        for change in changes:
            ctx.freshness.saw(change.path, change.after)
    if ctx.edits is not None and changes:
        ctx.edits.committed(tool, changes, ctx)


def describe_changes(changes: Sequence[FileChange]) -> tuple[str, dict[str, Any]]:
    """For the model, `` (+3 −1 lines)``; for the transcript, metadata with the capped diff
    and the line counts. The diff is worked out once for both."""
    diffs = [change.diff() for change in changes]
    added = sum(diff.added for diff in diffs)
    removed = sum(diff.removed for diff in diffs)
    metadata = {
        "diff": "\n".join(compact_lines(diffs, DIFF_PREVIEW_LINES)),
        "added": added,
        "removed": removed,
    }
    counted = not any(diff.note for diff in diffs)
    return (f" (+{added} −{removed} lines)" if counted else ""), metadata
