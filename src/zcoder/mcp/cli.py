"""``zcoder mcp``: add, list, get, remove and test MCP servers from the shell.

The syntax is Claude Code's (``claude mcp add NAME -- COMMAND ARGS…``, ``--transport http
NAME URL``, ``-e KEY=VALUE``, ``-H 'Header: value'``, ``--scope``), so what users type
for one agent works here. ``--scope user`` (the default) writes ``$ZCODER_HOME/mcp.json``,
private to the user; ``--scope project`` writes ``.mcp.json`` in the workspace, to share
with the repository, and counts as the user's consent to that entry in this workspace (the
user wrote it). ``list`` starts each server it may start, to say whether it works, as
``claude mcp list`` does; ``test`` starts one and lists its tools. Every failure is a line
on standard error and an exit status, never a traceback. What a configuration file or a
server wrote is shown made visible (zcoder.base.sanitize): a carriage return or an escape
sequence in a server's command cannot hide part of it from the person deciding to allow it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from zcoder.base.plural import counted
from zcoder.base.sanitize import json_text, screen_safe, visible
from zcoder.mcp.config import (
    McpConfig,
    McpConfigError,
    ServerEntry,
    check_server_name,
    load_mcp_config,
    remove_server,
    save_server,
    shadow_notes,
    variables_note,
)
from zcoder.mcp.consent import Consent, ConsentBook
from zcoder.mcp.manager import McpManager, ServerStatus
from zcoder.options import McpLimits
from zcoder.sessions import default_home

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zcoder mcp",
        description="Configure MCP servers: their tools become zcoder's (mcp__SERVER__TOOL).",
    )
    parser.add_argument("-w", "--workspace", help="the project (default: here)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add = commands.add_parser(
        "add",
        help="add a server: NAME -- COMMAND [ARGS…], or --transport http NAME URL",
        usage="zcoder mcp add [options] NAME -- COMMAND [ARGS...]\n"
        "       zcoder mcp add --transport http [options] NAME URL",
    )
    add.add_argument("--transport", "-t", choices=["stdio", "http"], default="stdio")
    add.add_argument("--scope", "-s", choices=["user", "project"], default="user")
    add.add_argument("-e", "--env", action="append", default=[], metavar="KEY=VALUE")
    add.add_argument("-H", "--header", action="append", default=[], metavar="'NAME: VALUE'")
    add.add_argument("name")
    add.add_argument("target", nargs=argparse.REMAINDER, help="COMMAND [ARGS…] or URL")
    commands.add_parser("list", help="every configured server and whether it works")
    get = commands.add_parser("get", help="one server's entry and state")
    get.add_argument("name")
    remove = commands.add_parser("remove", help="remove a server")
    remove.add_argument("name")
    remove.add_argument("--scope", "-s", choices=["user", "project"])
    test = commands.add_parser("test", help="start one server and list its tools")
    test.add_argument("name")
    commands.add_parser(
        "reset-project-choices",
        help="forget every yes and no given to this project's .mcp.json servers",
    )
    return parser


def _fail(message: str, status: int = EXIT_FAILED) -> int:
    print(f"zcoder mcp: {screen_safe(message)}", file=sys.stderr)
    return status


def _pairs(items: list[str], separator: str, what: str) -> dict[str, str]:
    out = {}
    for item in items:
        key, found, value = item.partition(separator)
        if not found or not key.strip():
            raise McpConfigError(f"{what} {item!r} is not {what.upper()}{separator}VALUE")
        out[key.strip()] = value.strip() if separator == ":" else value
    return out


def _headers_after_url(target: list[str], headers: list[str]) -> list[str]:
    """``-H`` options written after NAME URL (argparse leaves them in the URL's place)."""
    rest, words = [], iter(target)
    for word in words:
        if word in ("-H", "--header"):
            headers.append(next(words, ""))
        elif word.startswith("--header="):
            headers.append(word.partition("=")[2])
        else:
            rest.append(word)
    return rest


def _add(args: argparse.Namespace, workspace: Path, home: Path) -> int:
    target = list(args.target)
    if target[:1] == ["--"]:
        target = target[1:]
    if not target:
        return _fail("add needs a command (NAME -- COMMAND [ARGS…]) or a URL", EXIT_USAGE)
    raw: dict[str, Any]
    if args.transport == "http":
        target = _headers_after_url(target, args.header)
        if len(target) != 1 or args.env:
            return _fail("an http server takes one URL (and -H headers)", EXIT_USAGE)
        raw = {"type": "http", "url": target[0]}
        if args.header:
            raw["headers"] = _pairs(args.header, ":", "header")
    else:
        if args.header:
            return _fail("-H headers go with --transport http", EXIT_USAGE)
        raw = {"type": "stdio", "command": target[0], "args": target[1:]}
        if args.env:
            raw["env"] = _pairs(args.env, "=", "env")
    entry = save_server(args.name, raw, scope=args.scope, workspace=workspace, home=home)
    if args.scope == "project":
        ConsentBook(home).record(workspace, entry, Consent.GRANTED)
    print(
        f"Added {entry.transport} MCP server {entry.name!r} to {visible(str(entry.source))}: "
        f"{visible(entry.describe())}"
    )
    return EXIT_OK


def _remove(args: argparse.Namespace, workspace: Path, home: Path) -> int:
    scopes: list[Literal["project", "user"]] = [args.scope] if args.scope else ["project", "user"]
    for scope in scopes:
        if remove_server(args.name, scope=scope, workspace=workspace, home=home):
            print(f"Removed MCP server {args.name!r} ({scope})")
            return EXIT_OK
    return _fail(f"no MCP server named {args.name!r} in {' or '.join(scopes)} configuration")


def _state_line(status: ServerStatus) -> str:
    if status.state == "ready":
        count = len(status.tools)
        return f"✓ ready, {counted(count, 'tool')}"
    if status.state in ("failed", "refused", "needs consent"):
        return f"✗ {status.state}: {visible(status.reason)}"
    return status.state


async def _checked(workspace: Path, home: Path, names: list[str] | None) -> list[ServerStatus]:
    manager = McpManager(workspace, home, limits=McpLimits.from_env(os.environ))
    try:
        startable = [e for e in manager.startable() if names is None or e.name in names]
        if startable:
            manager.start(startable)
            await manager.wait_started(manager.start_timeout + 5)
        return [s for s in manager.statuses() if names is None or s.entry.name in names]
    finally:
        manager.close()


def _tell_shadowed(config: McpConfig) -> None:
    """Each user server a project server replaces, on standard error (never silently)."""
    for note in shadow_notes(config):
        print(f"note: {visible(note)}", file=sys.stderr)


def _tell_before_consent(entry: ServerEntry, config: McpConfig) -> None:
    """What the entry as written does not show: the variables of the environment it would
    be given (by name), and the user's own server it would replace."""
    note = variables_note(entry, os.environ)
    if note:
        print(visible(note[0].upper() + note[1:]))
    mine = config.shadowed.get(entry.name)
    if mine is not None:
        print(f"It replaces your own server of that name: {visible(mine.describe())}")


def _list(workspace: Path, home: Path) -> int:
    config = load_mcp_config(workspace, home)
    _tell_shadowed(config)
    for problem in config.problems:
        print(f"problem: {screen_safe(problem)}", file=sys.stderr)
    if not config.servers and config.problems:
        # Entries are there but none can be used: never "none configured" (issue 27 item 15).
        print("No MCP server can be used: the configuration has the problems above.")
        return EXIT_FAILED
    if not config.servers:
        print("No MCP servers configured (zcoder mcp add NAME -- COMMAND [ARGS…]).")
        return EXIT_OK
    for status in asyncio.run(_checked(workspace, home, None)):
        entry = status.entry
        print(f"{entry.name} ({entry.scope}): {visible(entry.describe())} - {_state_line(status)}")
    return EXIT_FAILED if config.problems else EXIT_OK


def _get(args: argparse.Namespace, workspace: Path, home: Path) -> int:
    config = load_mcp_config(workspace, home)
    entry = config.servers.get(args.name)
    if entry is None:
        return _fail(f"no MCP server named {args.name!r}")
    consent = ConsentBook(home).status(workspace, entry)
    print(f"{entry.name}:")
    print(f"  scope: {entry.scope} ({visible(str(entry.source))})")
    print(f"  type: {entry.transport}")
    print(f"  consent: {consent.value}")
    print("  entry: " + json_text(entry.raw, indent=2).replace("\n", "\n  "))
    return EXIT_OK


def _test(args: argparse.Namespace, workspace: Path, home: Path) -> int:
    config = load_mcp_config(workspace, home)
    entry = config.servers.get(args.name)
    if entry is None:
        return _fail(f"no MCP server named {args.name!r}")
    book = ConsentBook(home)
    if book.status(workspace, entry) is Consent.UNASKED:
        if not sys.stdin.isatty():
            return _fail(
                f"{args.name!r} comes from {entry.source}; allow it first (answer in zcoder, "
                "or run this command in a terminal)"
            )
        _tell_before_consent(entry, config)
        whole = json_text(entry.raw, indent=2)
        answer = input(
            f"{visible(str(entry.source))} asks to run this MCP server:\n{whole}\n"
            "Allow it here? [y/N] "
        )
        granted = answer.strip().lower() in ("y", "yes")
        book.record(workspace, entry, Consent.GRANTED if granted else Consent.REFUSED)
    (status,) = asyncio.run(_checked(workspace, home, [args.name]))
    print(f"{entry.name}: {visible(entry.describe())} - {_state_line(status)}")
    for tool in status.tools:
        how = "read-only" if tool.read_only else "asks"
        # Its first line, cut at line feeds only: a carriage return is shown, not obeyed.
        summary = tool.description.strip().split("\n", 1)[0]
        print(f"  {visible(tool.qualified)} ({how}) {visible(summary[:100])}")
    return EXIT_OK if status.state == "ready" else EXIT_FAILED


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    home = default_home(os.environ)
    workspace = Path(args.workspace or os.getcwd()).resolve()
    if args.command in ("get", "test", "remove") and check_server_name(args.name):
        return _fail(f"{args.name!r}: {check_server_name(args.name)}", EXIT_USAGE)
    try:
        if args.command == "add":
            return _add(args, workspace, home)
        if args.command == "remove":
            return _remove(args, workspace, home)
        if args.command == "list":
            return _list(workspace, home)
        if args.command == "get":
            return _get(args, workspace, home)
        if args.command == "test":
            return _test(args, workspace, home)
        count = ConsentBook(home).forget_workspace(workspace)
        where = visible(str(workspace))
        print(f"Forgot {counted(count, 'answer')} about {where}'s servers")
        return EXIT_OK
    except McpConfigError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        return 130
