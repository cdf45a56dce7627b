"""``zcoder tasks``: the repository's task board from a shell or a script.

``list``, ``add``, ``done`` and ``watch`` read and write the board of the repository
holding the current directory (``-w`` for another); ``claim ID|--next -- COMMAND`` holds a
claim while COMMAND runs (zcoder.board.run). ``--json`` prints JSON for scripts. What
people and agents wrote (titles, descriptions, notes, names) is shown made visible on a
terminal (zcoder.base.sanitize): an escape sequence in a title cannot act there.
Failures are a line on standard error and an exit status, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from zcoder.base.errors import EXIT_FAILED, EXIT_OK, EXIT_READER_GONE, EXIT_USAGE
from zcoder.base.sanitize import json_text, screen_safe, visible, visible_lines
from zcoder.board import render
from zcoder.board.records import BoardError, Claimant, State, Task, TaskRefused
from zcoder.board.run import run_claimed
from zcoder.board.store import Board, parse_task_id
from zcoder.sessions import default_home

__all__ = ["main"]

WATCH_POLL_S: Final = 0.25
"""How often ``watch`` looks for a change (a data_version read and a probe per claim)."""
DEFAULT_NAME: Final = "zcoder-tasks"
NOTHING_TO_CLAIM: Final = 3
"""``claim --next`` exit status when no task is claimable."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zcoder tasks",
        description="The task board of this repository, shared by every agent working in it "
        '(and its worktrees). See docs/relay.md, "Task board".',
    )
    # Before the command or after it (zcoder tasks --json list, zcoder tasks list --json):
    # the command's own copy only overrides the parser's when it was given.
    shared = argparse.ArgumentParser(add_help=False)
    shared.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    shared.add_argument(
        "-w",
        "--workspace",
        default=argparse.SUPPRESS,
        help="a directory of the repository (default: here)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("-w", "--workspace", help="a directory of the repository (default: here)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("list", parents=[shared], help="every task and where it stands")
    commands.add_parser(
        "watch", parents=[shared], help="print the board again at every change (Ctrl+C ends)"
    )
    add = commands.add_parser("add", parents=[shared], help="add a task")
    add.add_argument("title")
    add.add_argument("-d", "--description", default="", help="what to do, in full")
    add.add_argument(
        "--after",
        type=_task_id,
        action="append",
        default=[],
        metavar="ID",
        help="a task that must be done first (repeatable)",
    )
    add.add_argument("--name", default=DEFAULT_NAME, help="who adds it")
    done = commands.add_parser(
        "done", parents=[shared], help="mark a task done (or --failed, or --reopen)"
    )
    done.add_argument("id", type=_task_id)
    which = done.add_mutually_exclusive_group()
    which.add_argument("--failed", action="store_true", help="mark it failed")
    which.add_argument("--reopen", action="store_true", help="make it open again")
    done.add_argument("--note", default="", help="a note to add")
    done.add_argument("--name", default=DEFAULT_NAME, help="who says so")
    claim = commands.add_parser(
        "claim",
        parents=[shared],
        help="claim a task while COMMAND runs: done when it exits 0, open again otherwise",
        usage="zcoder tasks claim [-h] [--name NAME] (ID | --next) -- COMMAND [ARG ...]",
    )
    claim.add_argument("id", nargs="?", type=_task_id)
    claim.add_argument("--next", action="store_true", help="the oldest claimable task")
    claim.add_argument("--name", default=DEFAULT_NAME, help="the claimant's name")
    return parser


def _task_id(text: str) -> int:
    try:
        return parse_task_id(text)
    except TaskRefused as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _print_tasks(board: Board, as_json: bool) -> None:
    tasks = board.tasks()
    if as_json:
        print(json_text([render.as_json(task) for task in tasks]), flush=True)
    else:
        print(render.listing(tasks, visible), flush=True)


def _print_task(task: Task, as_json: bool, said: str) -> None:
    if as_json:
        print(json_text(render.as_json(task)))
    else:
        print(f"{said}: {render.line(task, visible)}")


def _watch(board: Board, as_json: bool) -> int:
    mark = None
    try:
        while True:
            now = board.change_mark()
            if now != mark:
                mark = now
                if not as_json:
                    print(f"-- {time.strftime('%H:%M:%S')} --")
                _print_tasks(board, as_json)
            time.sleep(WATCH_POLL_S)
    except KeyboardInterrupt:
        return EXIT_OK


def _claim(board: Board, args: argparse.Namespace, command: list[str]) -> int:
    if not command or (args.id is None) == (not args.next):
        print(
            "zcoder tasks claim: give a task ID or --next, then -- and the command to run",
            file=sys.stderr,
        )
        return EXIT_USAGE
    claimant = Claimant.this_process(args.name)
    if args.next:
        claim = board.claim_next(claimant)
        if claim is None:
            print("zcoder tasks: no task is claimable now", file=sys.stderr)
            return NOTHING_TO_CLAIM
    else:
        claim = board.claim(args.id, claimant)
    print(f"zcoder tasks: claimed {render.line(claim.task, visible)}", file=sys.stderr, flush=True)
    try:
        status = run_claimed(claim, command, os.environ, args.name)
    except OSError as exc:
        print(f"zcoder tasks: cannot run {visible(command[0])}: {exc.strerror}", file=sys.stderr)
        return 127
    task = board.task(claim.task_id)
    print(f"zcoder tasks: {render.line(task, visible)}", file=sys.stderr)
    return status


def main(argv: Sequence[str]) -> int:
    arguments = list(argv)
    # Everything after the first -- is the command claim runs, whatever it looks like.
    split = arguments.index("--") if "--" in arguments else len(arguments)
    arguments, command = arguments[:split], arguments[split + 1 :]
    args = build_parser().parse_args(arguments)
    if command and args.command != "claim":
        build_parser().error("only claim takes -- COMMAND")
    home = default_home(os.environ)
    workspace = Path(args.workspace or os.getcwd())
    try:
        board = Board.for_workspace(home, workspace)
    except BoardError as exc:
        print(f"zcoder tasks: {screen_safe(str(exc))}", file=sys.stderr)
        return EXIT_FAILED
    try:
        if args.command == "list":
            _print_tasks(board, args.json)
        elif args.command == "add":
            task = board.add(args.title, args.description, args.after, author=args.name)
            _print_task(task, args.json, "added")
        elif args.command == "done":
            state = State.FAILED if args.failed else State.OPEN if args.reopen else State.DONE
            task = board.settle(args.id, state, args.note, author=args.name)
            _print_task(task, args.json, "now")
        elif args.command == "watch":
            return _watch(board, args.json)
        else:
            return _claim(board, args, command)
        return EXIT_OK
    except TaskRefused as exc:
        print(f"zcoder tasks: {visible_lines(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # the reader went away (| head): nothing more, no traceback
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())  # Python's flush at exit writes there
        os.close(null)
        return EXIT_READER_GONE
    except BoardError as exc:
        print(f"zcoder tasks: {screen_safe(str(exc))}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        board.close()
