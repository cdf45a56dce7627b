"""The file tools: list_files, read_file, read_file_range, write_file, replace_text."""

from __future__ import annotations

import contextlib
import os
from typing import Any

from zcoder.base.plural import counted
from zcoder.tools.base import (
    WORKSPACE_DIRECTORY,
    Offered,
    ToolContext,
    ToolResult,
    ToolSpec,
    arguments,
)
from zcoder.tools.confinement import (
    ConfinedPath,
    ConfinementError,
    atomic_write,
    open_read,
    read_bytes,
    read_lines,
    resolve_path,
    resolve_write_target,
)
from zcoder.tools.edits import (
    FileChange,
    describe_changes,
    gate_changes,
    load_before,
    record_changes,
)
from zcoder.tools.ignore import IgnoreMatcher, walk
from zcoder.tools.modes import Effects
from zcoder.tools.offload import StopSignal, in_thread, to_completion

__all__ = [
    "LIST_FILES",
    "MAX_EDIT_BYTES",
    "MAX_LIST_ENTRIES",
    "READ_FILE",
    "READ_FILE_RANGE",
    "REPLACE_TEXT",
    "WRITE_FILE",
    "decode_text",
    "list_directory",
]

MAX_LIST_ENTRIES = 1000
"""Upper bound for list_files' max_entries."""
MAX_EDIT_BYTES = 8 * 1024 * 1024
"""Largest file replace_text and apply_patch will load and rewrite."""
_BINARY_SNIFF_BYTES = 8192

_PATH = {"type": "string", "description": "file path in the workspace"}
"""The ``path`` argument of the tools that read or edit one file."""


def decode_text(data: bytes, display: str) -> str:
    """Decode file bytes as UTF-8 text, refusing binary data with a clear message."""
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        raise ConfinementError(f"{display} looks like a binary file; it was not read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfinementError(
            f"{display} is not UTF-8 text (invalid byte at offset {exc.start}); it was not read"
        ) from exc


def _path_error(exc: OSError, display: str) -> ToolResult:
    if isinstance(exc, FileNotFoundError):
        return ToolResult.error(f"{display} does not exist")
    if isinstance(exc, NotADirectoryError):
        return ToolResult.error(f"a parent of {display} is not a directory")
    if isinstance(exc, IsADirectoryError):
        return ToolResult.error(f"{display} is a directory")
    return ToolResult.error(f"{display}: {exc.strerror or exc}")


# --- list_files -----------------------------------------------------------------------


async def _list_files(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return await in_thread(ctx.stop, lambda: _list_files_now(args, ctx), name="list_files")


def _list_files_now(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    raw_path: str = args["path"]
    max_entries: int = args["max_entries"]
    try:
        target = resolve_path(ctx.workspace, raw_path)
    except ConfinementError as exc:
        return ToolResult.error(str(exc))
    if not os.path.lexists(target.absolute):
        return ToolResult.error(f"{raw_path} does not exist")
    if not target.absolute.is_dir():
        return ToolResult(True, target.display, {"path": target.display, "entries": 1})
    lines, truncated = list_directory(target, max_entries, ctx.stop)
    if not lines:
        return ToolResult(True, f"{target.display}: empty directory", {"path": target.display})
    if truncated:
        lines.append(
            f"… more entries not shown (limit {max_entries}); list a subdirectory "
            "or raise max_entries"
        )
    return ToolResult(
        True,
        "\n".join(lines),
        {"path": target.display, "entries": len(lines) - truncated, "truncated": truncated},
    )


def list_directory(
    target: ConfinedPath, max_entries: int, stop: StopSignal | None = None
) -> tuple[list[str], bool]:
    """The entries under the directory ``target``, breadth first then sorted (directories
    end with '/'; a symlink shows where it points, never followed), and whether there were
    more than ``max_entries``. list_files and a prompt's ``@directory`` show this."""
    lines: list[str] = []
    truncated = False
    start = "/".join(target.parts)
    for entry in walk(target.workspace, start, IgnoreMatcher(target.workspace), stop):
        if len(lines) == max_entries:
            truncated = True
            break
        if entry.is_symlink:
            try:
                link = os.readlink(target.workspace / entry.path)
            except OSError:
                link = "?"
            lines.append(f"{entry.path} -> {link}")
        else:
            lines.append(entry.path + ("/" if entry.is_dir else ""))
    lines.sort()
    return lines, truncated


LIST_FILES = ToolSpec(
    name="list_files",
    description=(
        "List files under a workspace directory, breadth first (directories end with '/'); "
        "skips .git, node_modules, build output and what .gitignore excludes."
    ),
    parameters=arguments(
        {
            "path": WORKSPACE_DIRECTORY,
            "max_entries": {
                "type": "integer",
                "default": 100,
                "minimum": 1,
                "maximum": MAX_LIST_ENTRIES,
            },
        }
    ),
    handler=_list_files,
    effects=Effects.READS,
)


# --- read_file ------------------------------------------------------------------------


async def _read_file(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return await in_thread(ctx.stop, lambda: _read_file_now(args, ctx), name="read_file")


def _read_file_now(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    raw_path: str = args["path"]
    try:
        target = resolve_path(ctx.workspace, raw_path)
        data = read_bytes(target, ctx.max_output, ctx.stop)
        text = decode_text(data, target.display)
    except ConfinementError as exc:
        return ToolResult.error(str(exc))
    except OSError as exc:
        if isinstance(exc, FileNotFoundError) and ctx.freshness is not None:
            with contextlib.suppress(ConfinementError):  # looked again: it is gone
                ctx.freshness.saw(resolve_path(ctx.workspace, raw_path).display, None)
        return _path_error(exc, raw_path)
    if ctx.freshness is not None:
        ctx.freshness.saw(target.display, data)
    return ToolResult(
        True, text, {"path": target.display, "bytes": len(text.encode()), "lines": _lines(text)}
    )


def _lines(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


READ_FILE = ToolSpec(
    name="read_file",
    description=(
        "Read a whole small text file; a large one is refused: use read_file_range or search."
    ),
    parameters=arguments({"path": _PATH}, required=["path"]),
    handler=_read_file,
    effects=Effects.READS,
)


# --- read_file_range ------------------------------------------------------------------


async def _read_file_range(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return await in_thread(
        ctx.stop, lambda: _read_file_range_now(args, ctx), name="read_file_range"
    )


def _read_file_range_now(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    raw_path: str = args["path"]
    start: int = args["start_line"]
    end: int = args["end_line"]
    if end < start:
        return ToolResult.error(f"end_line ({end}) is before start_line ({start})")
    try:
        target = resolve_path(ctx.workspace, raw_path)
        with open_read(target) as handle:
            if b"\x00" in handle.read(_BINARY_SNIFF_BYTES):
                raise ConfinementError(
                    f"{target.display} looks like a binary file; it was not read"
                )
            handle.seek(0)
            selected: list[str] = []
            total = 0
            for number, raw_line in enumerate(read_lines(handle, ctx.stop), start=1):
                total = number
                if number < start:
                    continue
                if number > end:
                    break
                line = raw_line.decode("utf-8", errors="replace").rstrip("\n").rstrip("\r")
                selected.append(f"{number:>6}\t{line}")
    except ConfinementError as exc:
        return ToolResult.error(str(exc))
    except OSError as exc:
        return _path_error(exc, raw_path)
    if not selected:
        return ToolResult.error(
            f"{target.display} has {counted(total, 'line')}; start_line {start} is past the end"
        )
    if ctx.freshness is not None:
        ctx.freshness.saw_file(target)
    last = start + len(selected) - 1
    return ToolResult(
        True,
        "\n".join(selected),
        {"path": target.display, "start_line": start, "end_line": last},
    )


READ_FILE_RANGE = ToolSpec(
    name="read_file_range",
    description=(
        "Read numbered lines of a file of any size. start_line..end_line: 1-based, inclusive."
    ),
    parameters=arguments(
        {
            "path": _PATH,
            "start_line": {"type": "integer", "minimum": 1, "description": "First line"},
            "end_line": {"type": "integer", "minimum": 1, "description": "Last line"},
        },
        required=["path", "start_line", "end_line"],
    ),
    handler=_read_file_range,
    effects=Effects.READS,
    offered=Offered.ON_DEMAND,  # rarely needed: loaded from the catalog
)


# --- write_file -----------------------------------------------------------------------


def write_text(target: ConfinedPath, text: str) -> bool:
    """Write ``text`` as UTF-8 atomically; True if a file was replaced."""
    return atomic_write(target, text.encode("utf-8"))


async def _write_file(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    raw_path: str = args["path"]
    content: str = args["content"]
    data = content.encode("utf-8")

    def plan() -> tuple[FileChange, tuple[str, dict[str, Any]]]:
        target = resolve_write_target(ctx.workspace, raw_path)
        before, note = load_before(target, ctx.stop)
        change = FileChange(target, before, data, note)
        return change, describe_changes([change])

    def commit() -> bool:
        existed = write_text(change.target, content)
        record_changes(ctx, "write_file", [change])
        return existed

    try:
        # Cancellable until the write starts; the write itself is whole (tools/offload.py).
        change, (stats, shown) = await in_thread(ctx.stop, plan, name="write_file")
        target = change.target
        refusal = await gate_changes(ctx, "write_file", [change])
        if refusal:
            return ToolResult.error(refusal, path=target.display, refused=True)
        existed = await to_completion(ctx.stop, commit, name="write_file")
    except ConfinementError as exc:
        return ToolResult.error(str(exc))
    except OSError as exc:
        return _path_error(exc, raw_path)
    verb = "Replaced" if existed else "Created"
    return ToolResult(
        True,
        f"{verb} {target.display} ({counted(len(data), 'byte')}, "
        f"{counted(_lines(content), 'line')}){stats}",
        {"path": target.display, "bytes": len(data), "created": not existed, **shown},
    )


WRITE_FILE = ToolSpec(
    name="write_file",
    description=(
        "Create a file or replace all of it (parent directories are created); for small "
        "edits prefer replace_text or apply_patch."
    ),
    parameters=arguments(
        {
            "path": _PATH,
            "content": {"type": "string", "description": "The complete new file content"},
        },
        required=["path", "content"],
    ),
    handler=_write_file,
)


# --- replace_text ---------------------------------------------------------------------


async def _replace_text(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    raw_path: str = args["path"]
    old_text: str = args["old_text"]
    new_text: str = args["new_text"]
    if old_text == "":
        return ToolResult.error("old_text is empty; give the exact text to replace")

    def plan() -> ToolResult | tuple[FileChange, int, tuple[str, dict[str, Any]]]:
        target = resolve_write_target(ctx.workspace, raw_path)
        text = decode_text(read_bytes(target, MAX_EDIT_BYTES, ctx.stop), target.display)
        count = text.count(old_text)
        if count != 1:
            if count == 0:
                return ToolResult.error(
                    f"old_text was not found in {target.display}; it must match exactly, "
                    "including whitespace and indentation (read the file first)",
                    occurrences=0,
                )
            return ToolResult.error(
                f"old_text occurs {count} times in {target.display}; it must occur exactly "
                "once — include more surrounding lines to make it unique",
                occurrences=count,
            )
        after = text.replace(old_text, new_text, 1)
        change = FileChange(target, text.encode("utf-8"), after.encode("utf-8"))
        line = text[: text.index(old_text)].count("\n") + 1
        return change, line, describe_changes([change])

    def commit() -> None:
        assert change.after is not None
        atomic_write(change.target, change.after)
        record_changes(ctx, "replace_text", [change])

    try:
        # Cancellable until the write starts; the write itself is whole (tools/offload.py).
        planned = await in_thread(ctx.stop, plan, name="replace_text")
        if isinstance(planned, ToolResult):
            return planned
        change, line, (stats, shown) = planned
        target = change.target
        refusal = await gate_changes(ctx, "replace_text", [change])
        if refusal:
            return ToolResult.error(refusal, path=target.display, refused=True)
        await to_completion(ctx.stop, commit, name="replace_text")
    except ConfinementError as exc:
        return ToolResult.error(str(exc))
    except OSError as exc:
        return _path_error(exc, raw_path)
    return ToolResult(
        True,
        f"Replaced 1 occurrence in {target.display} at line {line}{stats}",
        {"path": target.display, "line": line, **shown},
    )


REPLACE_TEXT = ToolSpec(
    name="replace_text",
    description=(
        "Replace the one literal occurrence of old_text with new_text in a file; changes "
        "nothing if old_text occurs zero or several times."
    ),
    parameters=arguments(
        {
            "path": _PATH,
            "old_text": {"type": "string", "description": "Exact text to find (literal)"},
            "new_text": {"type": "string", "description": "Replacement text"},
        },
        required=["path", "old_text", "new_text"],
    ),
    handler=_replace_text,
)
