"""Every consumer of the agent's events (and of a remote's ACP updates) dispatches with
one ``match`` ending in ``assert_never``, so that mypy --strict names each consumer that
does not handle an event type added to the union (zcoder.agent.events.AgentEvent)."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

from acp.schema import SessionNotification

import zcoder
from zcoder.remote.events import RemoteUpdate

SOURCE = Path(zcoder.__file__).parent
UNIONS = ("AgentEvent", "RemoteUpdate")


def _annotated_with_union(arg: ast.arg) -> bool:
    return arg.annotation is not None and any(
        union in ast.unparse(arg.annotation) for union in UNIONS
    )


def _is_exhaustive(match: ast.Match, name: str) -> bool:
    last = match.cases[-1]
    if not isinstance(last.pattern, ast.MatchAs) or last.pattern.pattern is not None:
        return False  # the last case is not ``case _:``
    return any(
        isinstance(node, ast.Call)
        and ast.unparse(node.func).endswith("assert_never")
        and [ast.unparse(each) for each in node.args] == [name]
        for node in ast.walk(last)
    )


def _dispatchers() -> dict[str, tuple[str, ast.FunctionDef]]:
    """Each method that looks at the type of an event or update it is given, by
    ``Class.method`` (whatever module the class is filed in)."""
    found: dict[str, tuple[str, ast.FunctionDef]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        owners = {
            id(function): owner.name
            for owner in ast.walk(tree)
            if isinstance(owner, ast.ClassDef)
            for function in owner.body
        }
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            for arg in function.args.args:
                if not _annotated_with_union(arg):
                    continue
                looks = any(
                    (
                        (isinstance(node, ast.Call) and ast.unparse(node.func) == "isinstance")
                        and ast.unparse(node.args[0]) == arg.arg
                    )
                    or (isinstance(node, ast.Match) and ast.unparse(node.subject) == arg.arg)
                    for node in ast.walk(function)
                )
                if looks:
                    owner = owners.get(id(function), str(path.relative_to(SOURCE)))
                    key = f"{owner}.{function.name}"
                    found[key] = (arg.arg, function)
    return found


def test_every_event_consumer_matches_exhaustively_with_assert_never() -> None:
    dispatchers = _dispatchers()
    # The consumers issue 28 names: the TUI, ACP, --prompt (text and JSON), --connect.
    assert set(dispatchers) >= {
        "AgentView.on_event",
        "EventTranslator.__call__",
        "StreamPrinter.__call__",
        "JsonReport.__call__",
        "UpdateReader.__call__",
    }
    unchecked = [
        key
        for key, (name, function) in dispatchers.items()
        if not any(
            isinstance(node, ast.Match)
            and ast.unparse(node.subject) == name
            and _is_exhaustive(node, name)
            for node in ast.walk(function)
        )
    ]
    assert unchecked == []


def test_remote_update_union_is_what_acp_session_updates_carry() -> None:
    # A new update type in the ACP SDK joins RemoteUpdate, and mypy then asks
    # zcoder.remote.events.UpdateReader to handle it.
    carried = typing.get_args(SessionNotification.model_fields["update"].annotation)
    assert set(typing.get_args(RemoteUpdate)) == set(carried)
