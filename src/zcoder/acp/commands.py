"""zcoder's slash commands in an editor: those declared for ``FrontEnd.EDITOR``
(zcoder.slash.declared), offered as ACP's available commands with their usage and help,
and carried out on the session when a prompt starts with one's name (its aliases are the
TUI's).

``EditorCommands`` carries them out: it subclasses the classes that declare them (the
owner types) and answers each with the text shown in the editor:

- ``/help``, ``/context``, ``/diff``, ``/list-agents``, ``/tasks`` (the repository's task
  board, zcoder.board.commands): answered at once, with no request to the model and
  nothing added to the conversation;
- ``/compact [FOCUS]``: a turn of its own, as every command that needs the model
  (``Needs.MODEL``: it asks the model for the summary).

The others are not declared for editors: ``/model`` (the editor starts zcoder with
``-m``), ``/new`` and the session commands (the editor opens, lists and loads sessions),
``/undo``, ``/rewind`` and ``/fork`` (they ask in dialogs of the TUI's, and the editor keeps
its own history), ``/copy`` and ``/output`` (the editor shows
and copies replies and output itself), ``/quit`` (the editor ends the agent), ``/rename``,
``/agents`` and ``/inbox`` (the relay's controls, the TUI's for now). A prompt that starts
with any other ``/word`` is a custom command's or a skill's (zcoder.acp.user_commands), or
goes to the model as it is (it may be a path).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from zcoder.acp.approvals import fenced
from zcoder.agent.usage import render_breakdown
from zcoder.base.sanitize import visible
from zcoder.model import ModelError
from zcoder.relay import peer_table
from zcoder.slash.declared import (
    AppCommands,
    EditCommands,
    InstructionCommands,
    RelayCommands,
    TaskCommands,
)
from zcoder.slash.owners import Owners
from zcoder.slash.registry import Command, FrontEnd, Needs, commands
from zcoder.tools.offload import StopSignal, in_thread

if TYPE_CHECKING:
    from zcoder.acp.relay import SessionRelay
    from zcoder.agent import Agent
    from zcoder.config import Config


class CommandSession(Protocol):
    """What the commands use of the session (zcoder.acp.session.AcpSession)."""

    config: Config
    relay: SessionRelay | None
    window_source: str | None

    def started_agent(self) -> Agent: ...

    async def size_window(self) -> None: ...


def editor_commands() -> list[Command]:
    """The commands declared for editors, in the order /help lists them."""
    return commands().of(FrontEnd.EDITOR)


def available(command: Command) -> AvailableCommand:
    """ACP's entry: the name without the slash (the editor shows ``/name``), the first
    form's help, and what to type after the name when its usage takes something."""
    form = command.forms[0]
    rest = form.usage.split(maxsplit=1)[1:]
    hint = rest[0] if rest else None
    return AvailableCommand(
        name=command.name.removeprefix("/"),
        description=form.help,
        input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None,
    )


@dataclass(frozen=True)
class EditorCommands(AppCommands, EditCommands, RelayCommands, InstructionCommands, TaskCommands):
    """The editor's owner of its commands: each returns the answer shown in the editor."""

    session: CommandSession

    async def help_command(self, _argument: str) -> str:
        forms = [command.forms[0] for command in editor_commands()]
        width = max(len(form.usage) for form in forms) + 2
        lines = ["zcoder's commands here:"]
        lines += [f"  {form.usage.ljust(width)}{form.help}" for form in forms]
        return "```\n" + "\n".join(lines) + "\n```"

    async def context_command(self, _argument: str) -> str:
        session = self.session
        await session.size_window()  # asks the model server its window (no chat request)
        agent = session.started_agent()
        text = render_breakdown(agent.context_breakdown(), session.window_source)
        return f"```\n{text}\n```"

    async def show_diff(self, _argument: str) -> str:
        agent = self.session.started_agent()
        # Reading every changed file and diffing it is file-system work: off the loop.
        diff = await in_thread(StopSignal(), agent.edits.session_diff, name="diff")
        if not diff.diffs:
            return (
                "No file changes in this session to show (edits made by run_command are "
                "not tracked; undone ones are gone)."
            )
        lines = [line for d in diff.diffs for line in d.lines]
        return f"{diff.header}\n\n```diff\n" + "\n".join(lines) + "\n```"

    async def list_agents(self, _argument: str) -> str:
        import asyncio  # noqa: PLC0415

        relay = self.session.relay
        if relay is None:
            return "Agent relay is unavailable in this session (see zcoder.log for why)."
        found = await asyncio.to_thread(relay.relay.discover)
        if found.error:
            return f"Agent discovery failed: {found.error}"
        return f"```\n{peer_table(found.peers)}\n```"

    async def tasks_command(self, argument: str, /) -> str:
        import asyncio  # noqa: PLC0415

        from zcoder.board import (  # noqa: PLC0415
            Board,
            BoardError,
            TaskRefused,
            answer,
            parse_tasks_argument,
        )

        config = self.session.config

        def carry_out() -> str:
            action, rest = parse_tasks_argument(argument)
            board = Board.for_workspace(config.home, config.workspace)
            try:
                return answer(board, action, rest, visible)
            finally:
                board.close()

        try:
            return fenced(await asyncio.to_thread(carry_out))
        except (BoardError, TaskRefused) as exc:
            return str(exc)

    async def compact_command(self, focus: str) -> str:
        try:
            result = await self.session.started_agent().compact(focus)
        except ModelError as exc:
            return f"Compaction failed, nothing was changed: {exc}"
        return result.text if result.compacted else f"Nothing compacted: {result.text}."

    async def instructions_command(self, _argument: str) -> str:
        from zcoder.agent.instructions import describe_instructions  # noqa: PLC0415

        await self.session.size_window()  # what fits depends on the window
        settings = self.session.started_agent().settings
        return f"```\n{describe_instructions(settings.instruction_set, settings.num_ctx)}\n```"

    async def init_command(self, focus: str) -> str:
        from zcoder.agent.init_draft import run_init  # noqa: PLC0415

        return (await run_init(self.session.started_agent(), focus)).text


OWNER_TYPES: Final = (EditorCommands,)
"""What an editor's session registers to carry its commands out (tests/slash walk them)."""


def owners(session: CommandSession) -> Owners:
    return Owners(FrontEnd.EDITOR, *(kind(session) for kind in OWNER_TYPES))


def available_commands() -> list[AvailableCommand]:
    return [available(command) for command in editor_commands()]


def find_command(text: str) -> tuple[Command, str] | None:
    """The command a prompt starts with, and its argument; None when it starts with none."""
    if not text.startswith("/"):
        return None
    name, _, argument = text.strip().partition(" ")
    command = commands().find(name)
    if command is None or command.name != name.lower() or not command.applies_to(FrontEnd.EDITOR):
        return None
    return command, argument.strip()


def is_turn(command: Command) -> bool:
    """Whether the command is a turn of its own (it waits for the running one): it asks
    the model."""
    return Needs.MODEL in command.needs


async def run_command(session: CommandSession, command: Command, argument: str) -> str:
    """Carry ``command`` out on ``session``; its answer, to show in the editor."""
    answer = await command.call(owners(session).owner_of(command), argument)
    return answer or ""
