"""search: find text in workspace files, with ripgrep when installed, else in Python.

Both back ends give the same shape, one match per line: ``path:line:text`` with the path
relative to the workspace, sorted by path, long lines cut at a fixed width.  Both skip the
same fixed directories, hidden-file rules aside honour .gitignore (ripgrep with
``--no-require-git`` so it does so outside git repositories too), skip binary files and
never follow symlinks.  ``glob`` uses .gitignore syntax in both (``*.py``, ``src/**``,
``!*.md``).  The regular expression dialects differ slightly (Rust regex vs Python re);
``literal=true`` avoids the difference.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
import shutil
from collections.abc import Callable
from typing import Any

from zcoder.base.errors import ZcoderError
from zcoder.tools.base import ToolContext, ToolResult, ToolSpec, arguments
from zcoder.tools.confinement import (
    ConfinedPath,
    ConfinementError,
    open_read,
    read_lines,
    resolve_path,
)
from zcoder.tools.ignore import SKIPPED_DIRS, IgnoreMatcher, compile_gitignore_pattern, walk
from zcoder.tools.modes import Effects
from zcoder.tools.offload import in_thread

__all__ = ["MAX_LINE_CHARS", "MAX_SEARCH_RESULTS", "SEARCH", "find_ripgrep", "search_workspace"]

MAX_SEARCH_RESULTS = 1000
"""Upper bound for max_results."""
MAX_LINE_CHARS = 300
"""Matched lines longer than this are cut (minified files would flood the output)."""
_BINARY_SNIFF_BYTES = 8192
_RG_TIMEOUT_SECONDS = 60.0
_RG_LINE_LIMIT = 4 * 1024 * 1024
"""The longest line of ripgrep's JSON read: one match with its whole line, which in a
minified file can be megabytes. Past it, the search is done in Python instead."""


def find_ripgrep() -> str | None:
    """The ripgrep executable, if installed."""
    return shutil.which("rg")


def _format(path: str, number: int, text: str) -> str:
    text = text.rstrip("\n").rstrip("\r")
    if len(text) > MAX_LINE_CHARS:
        text = text[:MAX_LINE_CHARS] + " …"
    return f"{path}:{number}:{text}"


class SearchError(ZcoderError):
    """A bad query (for example an invalid regular expression)."""


class _LineTooLong(Exception):
    """ripgrep reported a match whose line is longer than _RG_LINE_LIMIT."""


def _search_python(
    ctx: ToolContext,
    target: ConfinedPath,
    pattern: re.Pattern[str],
    glob: str | None,
    max_results: int,
) -> tuple[list[str], bool]:
    """The built-in search, run in a thread of its own (in_thread): every entry of the
    walk, every file and every megabyte read are stop check points (tools/offload.py)."""
    stop = ctx.stop
    results: list[str] = []
    start = "/".join(target.parts)
    accept = _glob_filter(glob)
    if target.absolute.is_file():
        files = [start]
    else:
        files = [
            entry.path
            for entry in walk(ctx.workspace, start, IgnoreMatcher(ctx.workspace), stop)
            if not entry.is_dir
            and not entry.is_symlink
            and accept(entry.path[len(start) + 1 :] if start else entry.path)
        ]
        files.sort()
    for rel in files:
        stop.check()
        path = ConfinedPath(ctx.workspace, ctx.workspace / rel, tuple(rel.split("/")))
        try:
            with open_read(path) as handle:
                if b"\x00" in handle.read(_BINARY_SNIFF_BYTES):
                    continue
                handle.seek(0)
                for number, raw in enumerate(read_lines(handle, stop), start=1):
                    line = raw.decode("utf-8", errors="replace")
                    if pattern.search(line.rstrip("\n")):
                        if len(results) == max_results:
                            return results, True
                        results.append(_format(rel, number, line))
        except (OSError, ConfinementError):
            continue
    return results, False


def _glob_filter(glob: str | None) -> Callable[[str], bool]:
    if not glob:
        return lambda rel: True
    compiled = compile_gitignore_pattern(glob)
    if compiled is None:
        return lambda rel: True
    regex, negate, _ = compiled
    return lambda rel: bool(regex.match(rel)) != negate


async def _search_ripgrep(
    rg: str,
    ctx: ToolContext,
    *,
    target: ConfinedPath,
    query: str,
    literal: bool,
    glob: str | None,
    max_results: int,
) -> tuple[list[str], bool]:
    """Matches in path order (as ``rg --sort path`` gives them), the first ``max_results``.

    ``--sort path`` makes ripgrep walk the tree on one thread, so it is only asked for when
    needed: a first run on all threads collects the matches and they are sorted here;
    when there are more than ``max_results``, which ones are first depends on the order
    the threads found them, so a second run walks in path order and stops at the cap
    (usually quick: it ends as soon as the cap is reached; at worst, a query just over
    the cap with matches spread through the tree, both runs read most of it).
    """
    argv = [rg, "--json", "--hidden", "--no-require-git", "--no-follow"]
    if literal:
        argv.append("--fixed-strings")
    for name in sorted(SKIPPED_DIRS):
        argv += ["--glob", f"!{name}/"]
    if glob:
        # Same meaning as the fallback's filter: include matches, "!glob" excludes.
        argv += ["--glob", glob]
    pattern = ["-e", query, "--", target.display]
    matches, truncated = await _run_ripgrep([*argv, *pattern], ctx, max_results)
    if truncated:
        matches, truncated = await _run_ripgrep(
            [*argv, "--sort", "path", *pattern], ctx, max_results
        )
    else:
        matches.sort(key=_path_order)
    return [_format(path, number, text) for path, number, text in matches], truncated


def _path_order(match: tuple[str, int, str]) -> tuple[tuple[str, ...], int]:
    """ripgrep's --sort path order: component by component ("a/x" before "a-b/x")."""
    return tuple(match[0].split("/")), match[1]


async def _run_ripgrep(
    argv: list[str], ctx: ToolContext, max_results: int
) -> tuple[list[tuple[str, int, str]], bool]:
    """Run rg; its first ``max_results`` matches (path, line number, line) and whether
    there were more (rg is ended at the first one past the cap)."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=ctx.workspace,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        limit=_RG_LINE_LIMIT,
    )
    results: list[tuple[str, int, str]] = []
    truncated = False
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(_RG_TIMEOUT_SECONDS):
            while True:
                try:
                    raw = await proc.stdout.readline()
                except ValueError:  # a line longer than the reader's limit
                    raise _LineTooLong from None
                if not raw:
                    break
                try:
                    event = json.loads(raw)
                except ValueError:
                    continue
                if event.get("type") != "match":
                    continue
                data = event["data"]
                if len(results) == max_results:
                    truncated = True
                    break
                results.append(
                    (
                        _rg_text(data["path"]).removeprefix("./"),
                        int(data["line_number"]),
                        _rg_text(data["lines"]),
                    )
                )
        if truncated:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        # Read both pipes to their end before waiting: a process whose output was left
        # unread (past the cap, more than the reader buffers) never counts as finished,
        # and waiting for it would hang.
        _, stderr = await proc.communicate()
        code = proc.returncode
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await asyncio.shield(proc.communicate())
    if code == 2 and not results and not truncated:
        message = stderr.decode("utf-8", errors="replace").strip().splitlines()
        raise SearchError(f"ripgrep: {' '.join(message[-3:]) or 'search failed'}")
    return results, truncated


def _rg_text(value: dict[str, Any]) -> str:
    if "text" in value:
        return str(value["text"])
    return base64.b64decode(value.get("bytes", "")).decode("utf-8", errors="replace")


async def search_workspace(
    ctx: ToolContext,
    query: str,
    path: str = ".",
    *,
    literal: bool = False,
    glob: str | None = None,
    max_results: int = 100,
    ripgrep: str | None = None,
) -> ToolResult:
    """Run a search; ``ripgrep`` is the rg executable to use, or None for the fallback."""
    if query == "":
        return ToolResult.error("query is empty")
    try:
        target = await in_thread(ctx.stop, lambda: _existing(ctx, path), name="search")
    except ConfinementError as exc:
        return ToolResult.error(str(exc))
    if target is None:
        return ToolResult.error(f"{path} does not exist")
    try:
        results: list[str] | None = None
        if ripgrep is not None:
            with contextlib.suppress(_LineTooLong):  # then in Python, which reads any line
                results, truncated = await _search_ripgrep(
                    ripgrep,
                    ctx,
                    target=target,
                    query=query,
                    literal=literal,
                    glob=glob,
                    max_results=max_results,
                )
                engine = "ripgrep"
        if results is None:
            try:
                pattern = re.compile(re.escape(query) if literal else query)
            except re.error as exc:
                raise SearchError(
                    f"invalid regular expression: {exc}; pass literal=true to search for "
                    "the text as is"
                ) from exc
            found = await in_thread(
                ctx.stop,
                lambda: _search_python(ctx, target, pattern, glob, max_results),
                name="search",
            )
            results, truncated = found
            engine = "python"
    except SearchError as exc:
        return ToolResult.error(str(exc))
    except TimeoutError:
        return ToolResult.error("the search took too long; narrow the path or the query")
    metadata = {"engine": engine, "matches": len(results), "truncated": truncated}
    if not results:
        return ToolResult(True, "No matches.", metadata)
    if truncated:
        results.append(f"… stopped after {max_results} matches; narrow the search")
    return ToolResult(True, "\n".join(results), metadata)


def _existing(ctx: ToolContext, path: str) -> ConfinedPath | None:
    """The confined search path; None when nothing is there."""
    target = resolve_path(ctx.workspace, path)
    return target if target.absolute.exists() else None


async def _search(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return await search_workspace(
        ctx,
        args["query"],
        args["path"],
        literal=args["literal"],
        glob=args.get("glob") or None,
        max_results=args["max_results"],
        ripgrep=find_ripgrep(),
    )


SEARCH = ToolSpec(
    name="search",
    description=(
        "Search workspace files for a regular expression (literal=true: plain text); returns "
        "'path:line:text' lines."
    ),
    parameters=arguments(
        {
            "query": {"type": "string", "description": "Regular expression, or text if literal"},
            "path": {"type": "string", "description": "Where to search", "default": "."},
            "literal": {
                "type": "boolean",
                "description": "Treat query as plain text",
                "default": False,
            },
            "glob": {
                "type": "string",
                "description": "Only files matching this glob, e.g. '*.py' or 'src/**'",
            },
            "max_results": {
                "type": "integer",
                "default": 100,
                "minimum": 1,
                "maximum": MAX_SEARCH_RESULTS,
            },
        },
        required=["query"],
    ),
    handler=_search,
    effects=Effects.READS,
)
