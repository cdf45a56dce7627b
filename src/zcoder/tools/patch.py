"""apply_patch: apply a unified diff to the workspace, all or nothing.

The whole patch is parsed, every path confined and every hunk applied in memory before
anything is written.  Hunks are located by their context (exactly, then ignoring trailing
whitespace), preferring the position nearest the line number in the hunk header, so a
patch with slightly wrong line numbers or counts still applies when its text is right.
If a write fails half-way, the files already written are restored.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from typing import Any

from zcoder.base.errors import ZcoderError
from zcoder.tools.base import Offered, ToolContext, ToolResult, ToolSpec, arguments
from zcoder.tools.confinement import (
    ConfinedPath,
    ConfinementError,
    atomic_write,
    read_bytes,
    remove_file,
    resolve_write_target,
)
from zcoder.tools.edits import FileChange, describe_changes, gate_changes, record_changes
from zcoder.tools.files import MAX_EDIT_BYTES, decode_text
from zcoder.tools.offload import StopSignal, in_thread, to_completion

__all__ = ["APPLY_PATCH", "PatchError", "parse_patch"]

_HUNK_HEADER = re.compile(r"^@@+ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@+")


class PatchError(ZcoderError, ValueError):
    """The patch is malformed or does not apply; the message is for the model."""


@dataclass
class _Line:
    tag: str  # " ", "-" or "+"
    text: str
    no_eol: bool = False


@dataclass
class Hunk:
    old_start: int | None
    lines: list[_Line] = field(default_factory=list)

    @property
    def old(self) -> list[str]:
        return [line.text for line in self.lines if line.tag != "+"]

    @property
    def new(self) -> list[str]:
        return [line.text for line in self.lines if line.tag != "-"]

    def new_ends_without_eol(self) -> bool:
        side = [line for line in self.lines if line.tag != "-"]
        return bool(side) and side[-1].no_eol


@dataclass
class FilePatch:
    old_path: str | None  # None for /dev/null (a new file)
    new_path: str | None  # None for /dev/null (a deletion)
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.new_path or self.old_path or "?"


def _header_path(text: str, prefix: str) -> str | None:
    path = text.split("\t", 1)[0].strip()
    if len(path) >= 2 and path.startswith('"') and path.endswith('"'):
        path = path[1:-1]
    if path == "/dev/null":
        return None
    if path.startswith(prefix):
        path = path[len(prefix) :]
    if not path:
        raise PatchError(f"file header {text!r} has no path")
    return path


def parse_patch(patch: str) -> list[FilePatch]:
    """Parse a unified diff (several files, new files, deletions; git headers tolerated)."""
    lines = [line.rstrip("\r") for line in patch.split("\n")]
    files: list[FilePatch] = []
    current: FilePatch | None = None
    index = 0
    count = len(lines)

    def is_file_header(at: int) -> bool:
        return lines[at].startswith("--- ") and at + 1 < count and lines[at + 1].startswith("+++ ")

    while index < count:
        line = lines[index]
        if is_file_header(index):
            current = FilePatch(
                _header_path(line[4:], "a/"), _header_path(lines[index + 1][4:], "b/")
            )
            if current.old_path is None and current.new_path is None:
                raise PatchError("a file header has /dev/null on both sides")
            files.append(current)
            index += 2
            continue
        if line.startswith("@@"):
            if current is None:
                raise PatchError("a hunk (@@) comes before any ---/+++ file header")
            match = _HUNK_HEADER.match(line)
            old_start = int(match.group(1)) if match else None
            old_left = (int(match.group(2) or 1)) if match else None
            new_left = (int(match.group(4) or 1)) if match else None
            hunk = Hunk(old_start)
            index += 1
            while index < count:
                body = lines[index]
                counted_out = (
                    old_left is not None and new_left is not None and old_left <= 0 >= new_left
                )
                if body.startswith("\\"):
                    if hunk.lines:
                        hunk.lines[-1].no_eol = True
                    index += 1
                    continue
                if counted_out or body.startswith(("@@", "diff ")) or is_file_header(index):
                    break
                if body == "":
                    tag, text = " ", ""
                elif body[0] in " +-":
                    tag, text = body[0], body[1:]
                else:
                    break
                hunk.lines.append(_Line(tag, text))
                if old_left is not None and new_left is not None:
                    old_left -= tag != "+"
                    new_left -= tag != "-"
                index += 1
            # Blank lines at the very end of a patch are not context.
            while match is None and hunk.lines and hunk.lines[-1] == _Line(" ", ""):
                hunk.lines.pop()
            if not any(line.tag != " " for line in hunk.lines):
                raise PatchError(f"a hunk for {current.label} changes nothing")
            current.hunks.append(hunk)
            continue
        index += 1
    if not files:
        raise PatchError(
            "no file changes found; give a unified diff with '--- a/path' and '+++ b/path' "
            "headers followed by '@@ -l,n +l,n @@' hunks"
        )
    for file_patch in files:
        if not file_patch.hunks and file_patch.new_path is not None:
            raise PatchError(f"the patch for {file_patch.label} has no hunks")
    return files


@dataclass
class _Content:
    lines: list[str]
    eol_at_end: bool
    newline: str

    @classmethod
    def from_text(cls, text: str) -> _Content:
        newline = "\r\n" if "\r\n" in text else "\n"
        if text == "":
            return cls([], True, newline)
        parts = text.split("\n")
        eol = parts[-1] == ""
        if eol:
            parts.pop()
        if newline == "\r\n":
            parts = [part.removesuffix("\r") for part in parts]
        return cls(parts, eol, newline)

    def to_text(self) -> str:
        if not self.lines:
            return ""
        return self.newline.join(self.lines) + (self.newline if self.eol_at_end else "")


def _find(lines: list[str], block: list[str], expected: int, floor: int) -> int | None:
    for normalise in (False, True):
        wanted = [line.rstrip() for line in block] if normalise else block
        candidates = []
        for pos in range(floor, len(lines) - len(block) + 1):
            window = lines[pos : pos + len(block)]
            if normalise:
                window = [line.rstrip() for line in window]
            if window == wanted:
                candidates.append(pos)
        if candidates:
            return min(candidates, key=lambda pos: abs(pos - expected))
    return None


def _apply_hunks(
    content: _Content, file_patch: FilePatch, stop: StopSignal | None = None
) -> _Content:
    lines = list(content.lines)
    eol = content.eol_at_end
    offset = 0
    floor = 0
    for number, hunk in enumerate(file_patch.hunks, start=1):
        if stop is not None:
            stop.check()
        old, new = hunk.old, hunk.new
        expected = max((hunk.old_start or 1) - 1 + offset, 0)
        if not old:
            after = hunk.old_start if hunk.old_start is not None else len(lines)
            pos: int | None = min(max(after + offset, floor), len(lines))
        else:
            pos = _find(lines, old, expected, floor)
        if pos is None:
            where = f" near line {hunk.old_start}" if hunk.old_start else ""
            preview = old[0] if old else ""
            raise PatchError(
                f"hunk {number} of {file_patch.label} does not apply: its context/removed "
                f"lines were not found{where} (first expected line: {preview!r}); "
                "read the file again and regenerate the patch"
            )
        reaches_end = pos + len(old) == len(lines)
        lines[pos : pos + len(old)] = new
        if reaches_end:
            eol = not hunk.new_ends_without_eol()
        offset += len(new) - len(old)
        floor = pos + len(new)
    return _Content(lines, eol, content.newline)


@dataclass
class _Change:
    target: ConfinedPath
    before: bytes | None  # None: did not exist
    after: bytes | None  # None: delete


def _load(target: ConfinedPath, stop: StopSignal | None = None) -> bytes | None:
    try:
        return read_bytes(target, MAX_EDIT_BYTES, stop)
    except FileNotFoundError:
        return None


def plan_patch(ctx: ToolContext, patch: str) -> list[_Change]:
    """Parse, confine and apply the patch in memory; raise on the first problem.

    Every file read and every hunk is a stop check point (``ctx.stop``)."""
    files = parse_patch(patch)
    state: dict[str, tuple[ConfinedPath, bytes | None, bytes | None]] = {}

    def current(raw: str) -> tuple[ConfinedPath, bytes | None]:
        target = resolve_write_target(ctx.workspace, raw)
        key = target.display
        if key not in state:
            original = _load(target, ctx.stop)
            state[key] = (target, original, original)
        return target, state[key][2]

    for file_patch in files:
        ctx.stop.check()
        # Confine both sides before anything else happens to either.
        for raw in (file_patch.old_path, file_patch.new_path):
            if raw is not None:
                current(raw)
        if file_patch.old_path is None:
            assert file_patch.new_path is not None
            target, existing = current(file_patch.new_path)
            if existing is not None:
                raise PatchError(
                    f"{target.display} already exists, but the patch creates it (--- /dev/null)"
                )
            base = _Content([], True, "\n")
        else:
            target, existing = current(file_patch.old_path)
            if existing is None:
                raise PatchError(f"{file_patch.old_path} does not exist")
            base = _Content.from_text(decode_text(existing, target.display))
        result = (
            _apply_hunks(base, file_patch, ctx.stop)
            if file_patch.hunks
            else _Content([], True, "\n")
        )
        if file_patch.new_path is None:
            if result.lines:
                raise PatchError(
                    f"the patch deletes {target.display} but does not remove all of its lines"
                )
            state[target.display] = (target, state[target.display][1], None)
            continue
        new_target, _ = current(file_patch.new_path)
        if file_patch.old_path is not None and new_target.display != target.display:
            state[target.display] = (target, state[target.display][1], None)  # a rename
        data = result.to_text().encode("utf-8")
        state[new_target.display] = (new_target, state[new_target.display][1], data)
    return [
        _Change(target, before, after)
        for target, before, after in state.values()
        if before != after
    ]


def _commit(changes: list[_Change]) -> None:
    done: list[_Change] = []
    try:
        for change in sorted(changes, key=lambda change: change.after is None):
            if change.after is None:
                remove_file(change.target)
            else:
                atomic_write(change.target, change.after)
            done.append(change)
    except BaseException:
        for change in reversed(done):
            with contextlib.suppress(OSError, ConfinementError):
                if change.before is None:
                    remove_file(change.target)
                else:
                    atomic_write(change.target, change.before)
        raise


def _summary(change: _Change) -> str:
    if change.after is None:
        return f"deleted {change.target.display}"
    if change.before is None:
        return f"created {change.target.display}"
    return f"modified {change.target.display}"


async def _apply_patch(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    def plan() -> tuple[list[_Change], list[FileChange], tuple[str, dict[str, Any]]]:
        changes = plan_patch(ctx, args["patch"])
        planned = [FileChange(change.target, change.before, change.after) for change in changes]
        return changes, planned, describe_changes(planned)

    def commit() -> None:
        _commit(changes)
        record_changes(ctx, "apply_patch", planned)

    try:
        # Cancellable until the writes start; they then all happen (tools/offload.py).
        changes, planned, (stats, shown) = await in_thread(ctx.stop, plan, name="apply_patch")
    except (PatchError, ConfinementError) as exc:
        return ToolResult.error(f"{exc}; nothing was changed")
    except OSError as exc:
        return ToolResult.error(f"{exc.filename or ''}: {exc.strerror or exc}; nothing was changed")
    if not changes:
        return ToolResult(True, "The patch changes nothing.", {"files": []})
    refusal = await gate_changes(ctx, "apply_patch", planned)
    if refusal:
        return ToolResult.error(refusal, files=[change.path for change in planned], refused=True)
    try:
        await to_completion(ctx.stop, commit, name="apply_patch")
    except (ConfinementError, OSError) as exc:
        return ToolResult.error(f"writing the patch failed ({exc}); changes were rolled back")
    summaries = [_summary(change) for change in changes]
    return ToolResult(
        True,
        "Applied patch: " + ", ".join(summaries) + stats,
        {"files": [change.target.display for change in changes], **shown},
    )


APPLY_PATCH = ToolSpec(
    name="apply_patch",
    description=(
        "Apply a unified diff. Git diff form: new files from /dev/null, deletions to "
        "/dev/null, a few context lines per hunk; all hunks apply or nothing changes."
    ),
    parameters=arguments(
        {"patch": {"type": "string", "description": "The unified diff text"}}, required=["patch"]
    ),
    handler=_apply_patch,
    offered=Offered.ON_DEMAND,  # rarely needed: loaded from the catalog
)
