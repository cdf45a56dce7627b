"""The one registry (zcoder.slash): each command declared once, with where it applies and
what it needs; owners found by the declaring type, a missing one said plainly."""

from __future__ import annotations

import subprocess
import sys

import pytest

from zcoder.acp.commands import OWNER_TYPES
from zcoder.slash.declared import AppCommands, EditCommands
from zcoder.slash.owners import NoOwner, Owners, carries_out, unowned
from zcoder.slash.registry import (
    EVERYWHERE,
    Command,
    CommandRegistry,
    Form,
    FrontEnd,
    Needs,
    commands,
    declare_into,
    slash_command,
)

HELP_ORDER = [
    "/help",
    "/context",
    "/output",
    "/compact",
    "/copy",
    "/new",
    "/sessions",
    "/queue",
    "/jobs",
    "/goal",
    "/mode",
    "/model",
    "/diff",
    "/undo",
    "/list-agents",
    "/agents",
    "/rename",
    "/inbox",
    "/mcp",
    "/quit",
    "/skills",
    "/skill",
    "/rewind",
    "/fork",
    "/instructions",
    "/init",
    "/claude",
    "/codex",
    "/opencode",
    "/helpers",
    "/spawn",
    "/team",
    "/tasks",
]

WORK_REMOTELY = {"/help", "/output", "/copy", "/quit", "/new", "/sessions"}
"""The app's commands that worked as they are over --connect before the registry said so."""

WHERE_TO_ASK = {
    "/model": "the model is the remote zcoder's (its ZCODER_MODEL, or -m in ZCODER_REMOTE_COMMAND)",
    "/context": "the context window and what fills it are on the remote host (the header's "
    "meter shows how full it is)",
    "/compact": "compaction is the remote agent's (it compacts by itself when the window fills)",
    "/diff": "the edits are on the remote host, in its workspace",
    "/undo": "the edits are on the remote host, in its workspace",
    "/rename": "this zcoder publishes no relay peer: the remote host's zcoder is the agent",
    "/rewind": "rewinding is not offered over --connect: the conversation and its files are "
    "the remote host's (run zcoder there to rewind)",
    "/fork": "forking is not offered over --connect: the sessions are the remote host's "
    "(zcoder --fork ID there)",
    "/jobs": "background commands run on the remote host, and end with its zcoder",
    "/instructions": "the instruction files are the remote host's (zcoder "
    "--print-instructions there lists them)",
    "/init": "/init writes the remote workspace's AGENTS.md: run it there",
    "/mode": "the permission mode is the remote zcoder's (its --mode)",
    **dict.fromkeys(
        ("/claude", "/codex", "/opencode", "/helpers"),
        "a helper would run in the remote host's workspace: use it there",
    ),
    "/spawn": "workers start on the remote host: run zcoder there, in tmux",
    "/team": "the team is the remote host's: run zcoder there, in tmux",
    "/tasks": "the task board is the remote repository's: zcoder tasks there",
}
"""--connect's refusals as its own table had them, before they joined the declarations."""


def test_the_declarations_keep_the_help_order_and_say_where_each_applies() -> None:
    registry = commands()
    builtins = [c for c in registry if not c.extension]
    assert [c.name for c in builtins] == HELP_ORDER
    assert [c.name for c in builtins if c.applies_to(FrontEnd.TUI)] == HELP_ORDER
    editor = [c.name for c in registry.of(FrontEnd.EDITOR)]
    assert editor == [
        "/help",
        "/context",
        "/compact",
        "/diff",
        "/list-agents",
        "/instructions",
        "/init",
        "/tasks",
    ]
    remote = {c.name for c in registry.of(FrontEnd.REMOTE)}
    # The relay's are asked there; /queue is the waiting input here.
    assert remote == WORK_REMOTELY | {"/list-agents", "/agents", "/queue"}
    refusals = {c.name: c.remote_refusal for c in builtins if c.remote_refusal}
    assert refusals == WHERE_TO_ASK
    turns = [c.name for c in registry.of(FrontEnd.EDITOR) if Needs.MODEL in c.needs]
    assert turns == ["/compact", "/init"]  # an editor runs each as a turn of its own


def test_every_command_an_editor_is_offered_has_its_owner() -> None:
    assert unowned(FrontEnd.EDITOR, OWNER_TYPES) == []


def test_a_front_end_without_an_owner_is_found_by_the_walk_and_said_at_run_time() -> None:
    registry = commands()
    # The editor's owner without its EditCommands: /diff has nothing to carry it out.
    assert unowned(FrontEnd.EDITOR, [AppCommands]) == [
        "/help (AppCommands.help_command)",
        "/context (AppCommands.context_command)",
        "/compact (AppCommands.compact_command)",
        "/diff (EditCommands.show_diff)",
        "/list-agents (RelayCommands.list_agents)",
        "/instructions (InstructionCommands.instructions_command)",
        "/init (InstructionCommands.init_command)",
        "/tasks (TaskCommands.tasks_command)",
    ]
    diff = registry.find("/diff")
    assert diff is not None
    with pytest.raises(NoOwner, match=r"^/diff has no owner in an editor \(--acp\): nothing "):
        Owners(FrontEnd.EDITOR).owner_of(diff)
    # Of the declaring type but not overriding the method: no owner either.
    with pytest.raises(NoOwner, match=r"carries out EditCommands\.show_diff$"):
        Owners(FrontEnd.TUI, EditCommands()).owner_of(diff)
    assert not carries_out(EditCommands, diff)


def test_owners_are_filed_by_the_declaring_type_once() -> None:
    class Diffs(EditCommands):
        def show_diff(self, argument: str, /) -> str:
            return f"diff {argument}"

    diffs = Diffs()
    owners = Owners(FrontEnd.TUI, diffs)
    diff = commands().find("/diff")
    assert diff is not None and owners.owner_of(diff) is diffs
    with pytest.raises(ValueError, match="two owners of EditCommands's commands in the TUI"):
        Owners(FrontEnd.TUI, diffs, Diffs())
    form = Form("/review", "a custom command")
    added = Command("/review", (form,), lambda _owner, _argument: None, extension=True)
    assert owners.owner_of(added) is None  # an extension's command carries itself out


async def test_an_answer_comes_back_from_the_call() -> None:
    class Diffs(EditCommands):
        async def show_diff(self, argument: str, /) -> str:
            return f"diff {argument}"

    diff = commands().find("/diff")
    assert diff is not None
    assert await diff.call(Diffs(), "all") == "diff all"


def test_a_declaration_refused_over_connect_cannot_apply_there() -> None:
    with pytest.raises(ValueError, match="applies over --connect"):
        slash_command(Form("/x", "x"), where=FrontEnd.REMOTE, remote_refusal="no")
    with pytest.raises(ValueError, match="at least one form"):
        slash_command(where=FrontEnd.TUI)


def test_a_command_declared_for_one_front_end_is_not_the_others() -> None:
    class Editorial:
        @slash_command(Form("/cite", "cite"), where=FrontEnd.EDITOR)
        def cite(self, argument: str, /) -> str:
            return argument

    registry = CommandRegistry()
    declare_into(registry, Editorial)
    assert [c.name for c in registry.of(FrontEnd.EDITOR)] == ["/cite"]
    assert registry.of(FrontEnd.TUI) == [] and registry.completion_entries() == ()


def test_the_registry_imports_no_front_end() -> None:
    code = (
        "import sys\n"
        "from zcoder.slash.registry import commands\n"
        "import zcoder.slash.owners\n"
        "commands()\n"
        "found = [m for m in sys.modules if m.split('.')[0] in ('textual', 'acp')"
        " or m.startswith(('zcoder.tui', 'zcoder.acp', 'zcoder.remote'))]\n"
        "print(found)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_neutral_command_is_carried_out_by_its_declaration_in_every_front_end() -> None:
    class Clock:
        @slash_command(Form("/tick", "say tick"), where=EVERYWHERE, neutral=True)
        def tick(self, argument: str, /) -> str:
            return f"tick {argument}".strip()

        @slash_command(Form("/tock", "say tock"), where=EVERYWHERE)
        def tock(self, argument: str, /) -> str | None:
            """Each front end's."""

    registry = CommandRegistry()
    declare_into(registry, Clock)
    tick, tock = registry.find("/tick"), registry.find("/tock")
    assert tick is not None and tock is not None and tick.neutral and not tock.neutral
    assert carries_out(Clock, tick) and not carries_out(Clock, tock)
    assert not carries_out(AppCommands, tick)  # not of the declaring type
    assert unowned(FrontEnd.EDITOR, [Clock], registry) == ["/tock (Clock.tock)"]
