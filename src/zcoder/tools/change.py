"""One file's planned change (its content before and after a tool's write).

Its own module, below tools/base.py (whose ``EditGate`` takes changes) and
tools/edits.py (which makes them), so that the two import in one direction only.
"""

from __future__ import annotations

from dataclasses import dataclass

from zcoder.tools.confinement import ConfinedPath
from zcoder.tools.diffs import FileDiff, file_diff

__all__ = ["FileChange"]


@dataclass(frozen=True)
class FileChange:
    """One file's content before and after a tool's write (None: the file is absent).

    ``before_note`` is set when the file existed but its previous content was not read
    (too large to keep): that change can be shown and made, but not undone.
    """

    target: ConfinedPath
    before: bytes | None
    after: bytes | None
    before_note: str = ""

    @property
    def path(self) -> str:
        return self.target.display

    def diff(self) -> FileDiff:
        return file_diff(self.path, self.before, self.after, before_note=self.before_note)
