"""``zcoder hooks``: see the workspace's hooks and answer for its project hooks from a shell.

``--prompt`` and ``--acp`` have no person to ask, so a project hook (``.zcoder/settings.json``)
nobody has allowed does not run there; this is where the user allows it without opening the
TUI. ``list`` shows every hook with its exact command and where it stands; ``trust`` allows
the project's hooks exactly as they are now (each printed), ``refuse`` refuses them, and
``reset`` forgets every answer given in this workspace (the next TUI asks again), as
``zcoder mcp reset-project-choices`` does for servers. Failures are a line on standard
error and an exit status, never a traceback. What the repository wrote is shown made
visible (zcoder.base.sanitize), each field on its line: a carriage return or an escape
sequence in a command cannot hide part of it from the person deciding to trust it.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from zcoder.base.consent import Consent, ConsentError
from zcoder.base.plural import counted
from zcoder.base.sanitize import screen_safe, visible
from zcoder.hooks.config import EVENTS, load_hooks
from zcoder.hooks.consent import HookConsent
from zcoder.sessions import default_home

__all__ = ["main"]

EXIT_OK, EXIT_FAILED = 0, 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zcoder hooks",
        description="Hooks from $ZCODER_HOME/settings.json (yours) and .zcoder/settings.json "
        "(the project's, which run only once you allow them).",
    )
    parser.add_argument("-w", "--workspace", help="the project (default: here)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("list", help="every hook, its exact command and whether it may run")
    commands.add_parser("trust", help="allow the project's hooks as they are now, here")
    commands.add_parser("refuse", help="refuse the project's hooks as they are now, here")
    commands.add_parser("reset", help="forget every answer given about this workspace's hooks")
    return parser


def _list(home: Path, workspace: Path) -> int:
    found = load_hooks(home, workspace)
    consent = HookConsent(home, workspace)
    for problem in found.problems:
        print(f"problem: {screen_safe(problem)}", file=sys.stderr)
    if not found:
        print(f"No hooks for {visible(str(workspace))}.")
        return EXIT_FAILED if found.problems else EXIT_OK
    for event in EVENTS:
        for group in found.groups.get(event, []):
            for command in group.commands:
                state = consent.status(command)
                whose = "project" if command.project else "yours"
                print(f"{event} [{visible(command.matcher)}] ({whose}, {state.value}):")
                print(f"  {visible(command.command)}")
                print(f"  from {visible(str(command.source))}, at most {command.timeout:g} s")
    if consent.file.problem:
        print(f"problem: {screen_safe(consent.file.problem)}", file=sys.stderr)
    return EXIT_FAILED if found.problems else EXIT_OK


def _answer(home: Path, workspace: Path, decision: Consent) -> int:
    found = load_hooks(home, workspace)
    commands = found.project_commands()
    if not commands:
        print(f"{visible(str(workspace))} has no project hooks (.zcoder/settings.json).")
        return EXIT_OK
    count = HookConsent(home, workspace).record(commands, decision)
    verb = "Allowed" if decision is Consent.GRANTED else "Refused"
    where = visible(str(workspace))
    print(f"{verb} {counted(count, 'project hook')} in {where}:")
    for command in commands:
        event, matcher = visible(command.event), visible(command.matcher)
        print(f"  {event} [{matcher}]: {visible(command.command)}")
    print("A changed entry asks again.")
    return EXIT_OK


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    home = default_home(os.environ)
    workspace = Path(args.workspace or os.getcwd()).resolve()
    try:
        if args.command == "list":
            return _list(home, workspace)
        if args.command in ("trust", "refuse"):
            decision = Consent.GRANTED if args.command == "trust" else Consent.REFUSED
            return _answer(home, workspace, decision)
        count = HookConsent(home, workspace).file.forget_workspace(workspace)
        where = visible(str(workspace))
        print(f"Forgot {counted(count, 'answer')} about {where}'s hooks")
        return EXIT_OK
    except ConsentError as exc:
        print(f"zcoder hooks: {screen_safe(str(exc))}", file=sys.stderr)
        return EXIT_FAILED
