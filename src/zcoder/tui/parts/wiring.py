"""The parts behind the main screen, made when first used, and what each is wired to.

A part (the model, the sessions, the relay, turns, slash commands, edits, quitting, the
agent's view, the approval dialogs) is made one way: ``Part(context, *, its own wires)``.
The ``PartContext`` (tui/parts/services.py) holds the services, a ``Say`` and the
``Host`` that runs its workers and shows its dialogs; where a part needs another part or
one of the screen's own calls (start a turn, show an entry at once), it is handed that
by keyword, alone.
This module is that wiring, in one place, so the screen (tui/main_screen.py) only
composes and routes, and no part sees more of the screen than it is given.

The parts are made when first used: the first frame needs none of them, and they import
the agent, the model client, the relay and the session store (tui/parts/startup.py).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import KW_ONLY, dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from zcoder.slash.owners import Owners
from zcoder.slash.registry import FrontEnd
from zcoder.tui.parts.services import Host, PartContext

if TYPE_CHECKING:
    from textual.app import App

    from zcoder.frontend.peer_steering import PeerSteers
    from zcoder.slash.declared import RelayCommands
    from zcoder.tui.messages import Say
    from zcoder.tui.parts.agent_view import AgentView
    from zcoder.tui.parts.approvals import DialogApprovals
    from zcoder.tui.parts.custom_commands_ui import CustomCommandsUI
    from zcoder.tui.parts.edits_ui import EditsUI
    from zcoder.tui.parts.goal_ui import GoalUI
    from zcoder.tui.parts.helpers_ui import HelpersUI
    from zcoder.tui.parts.instructions_ui import InstructionsUI
    from zcoder.tui.parts.jobs_ui import JobsUI
    from zcoder.tui.parts.mcp_ui import McpUI
    from zcoder.tui.parts.model_ui import ModelUI
    from zcoder.tui.parts.modes_ui import ModesUI
    from zcoder.tui.parts.quit_ui import QuitUI
    from zcoder.tui.parts.relay_ui import RelayUI
    from zcoder.tui.parts.rewind_ui import RewindUI
    from zcoder.tui.parts.services import Services
    from zcoder.tui.parts.sessions_ui import SessionsUI
    from zcoder.tui.parts.slash import SlashCommands
    from zcoder.tui.parts.tasks_ui import TasksUI
    from zcoder.tui.parts.team_ui import TeamUI
    from zcoder.tui.parts.turns import Turns
    from zcoder.tui.state.notify import Notifier
    from zcoder.tui.widgets.plan_view import PlanView
    from zcoder.tui.widgets.prompt import PromptInput
    from zcoder.tui.widgets.shared import SessionList
    from zcoder.tui.widgets.task_view import TaskView
    from zcoder.tui.widgets.transcript import Entry, Transcript

__all__ = ["Parts", "ScreenSide"]


class ScreenSide(Host, Protocol):
    """What the parts are wired to on the main screen: its widgets and its own calls."""

    transcript: Transcript
    sidebar: SessionList
    plan_view: PlanView
    task_view: TaskView
    prompt_input: PromptInput

    @property
    def app(self) -> App[Any]: ...

    def show(self, entry: Entry) -> Entry: ...

    def error(self, text: str) -> None: ...

    def start_turn(
        self, work: Callable[[], Coroutine[Any, Any, object]], *, relay: bool, model: bool = True
    ) -> None: ...

    def show_queue(self) -> None: ...

    def schedule(self) -> None: ...

    def queue_prompt(self, text: str) -> None: ...

    def note_user_acted(self) -> None: ...

    def show_sessions_list(self) -> None: ...

    def show_output(self) -> None: ...

    def put_back(self, text: str) -> None: ...


@dataclass(eq=False)
class Parts:
    """Each part, made on first use; ``exit`` is the app's (quitting is the app's)."""

    services: Services
    say: Say
    screen: ScreenSide
    _: KW_ONLY
    exit: Callable[[int], object]
    resume: str | None
    keep_model: bool
    front_end: ClassVar[FrontEnd] = FrontEnd.TUI  # what the commands carried out here apply to

    @cached_property
    def context(self) -> PartContext:
        """What every part is made with: the services, the ``Say``, the screen as host."""
        return PartContext(self.services, self.say, self.screen)

    @cached_property
    def model_ui(self) -> ModelUI:
        """The model's context window, its warm-up and changing the model."""
        from zcoder.tui.parts.model_ui import ModelUI

        return ModelUI(self.context)

    @cached_property
    def sessions(self) -> SessionsUI:
        from zcoder.tui.parts.sessions_ui import SessionsUI

        return self.sessions_of(SessionsUI, resume=self.resume, keep_model=self.keep_model)

    def sessions_of(self, kind: type[SessionsUI], **extra: Any) -> SessionsUI:
        """A ``kind`` of SessionsUI wired to this screen; ``extra``: the keyword arguments
        that differ between kinds (``resume``, ``keep_model``, a remote one's ``link``)."""
        screen = self.screen
        return kind(
            self.context,
            model=self.model_ui,
            transcript=screen.transcript,
            sidebar=screen.sidebar,
            agent_view=self.agent_view,
            show_list=screen.show_sessions_list,
            focus_prompt=screen.prompt_input.focus,
            **extra,
        )

    @cached_property
    def relay_ui(self) -> RelayUI:
        from zcoder.tui.parts.relay_ui import RelayUI

        return RelayUI(self.context, user_acted=self.screen.note_user_acted)

    @cached_property
    def turns(self) -> Turns:
        """What runs next, and the body of each kind of turn: the seam to the agent."""
        from zcoder.tui.parts.turns import Turns

        return self.turns_of(Turns)

    def turns_of(self, kind: type[Turns], **extra: Any) -> Turns:
        """A ``kind`` of Turns wired to this screen; ``extra``: the keyword arguments a
        kind adds (a remote one's ``link`` and ``queue``)."""
        screen = self.screen

        async def goal_turn() -> None:  # the goal's part, made when a goal first runs
            await self.goal.turn()

        return kind(
            self.context,
            model=self.model_ui,
            relay=self.relay_ui,
            sessions=self.sessions,
            start=screen.start_turn,
            show=screen.show,
            show_queue=screen.show_queue,
            plan=lambda prompt: self.custom_commands.plan(prompt),  # noqa: PLW0108 - made on use
            goal_turn=goal_turn,
            after_plan=lambda text: self.modes.offer_plan(text),  # noqa: PLW0108 - made on use
            **extra,
        )

    @cached_property
    def custom_commands(self) -> CustomCommandsUI:
        """Custom commands and skills by name: /NAME, /skill, $NAME, /skills."""
        from zcoder.tui.parts.custom_commands_ui import CustomCommandsUI

        screen = self.screen
        return CustomCommandsUI(
            self.context,
            show=screen.show,
            queue=screen.queue_prompt,
            user_turn=lambda prompt: self.turns.user_turn(prompt),  # noqa: PLW0108
            refresh=(self.model_ui.refresh_meter, self.sessions.refresh),
        )

    @cached_property
    def goal(self) -> GoalUI:
        """/goal and the goal's turns."""
        from zcoder.tui.parts.goal_ui import GoalUI

        return GoalUI(
            self.context, model=self.model_ui, sessions=self.sessions, schedule=self.screen.schedule
        )

    @cached_property
    def mcp(self) -> McpUI:
        """/mcp: the MCP servers, their state and tools."""
        from zcoder.tui.parts.mcp_ui import McpUI

        return McpUI(self.context)

    @cached_property
    def edits(self) -> EditsUI:
        from zcoder.tui.parts.edits_ui import EditsUI

        return EditsUI(self.context, confirm_undo=self.dialogs.confirm_undo)

    @cached_property
    def modes(self) -> ModesUI:
        """The permission mode: Shift+Tab, /mode, the plan offered at a plan's end."""
        from zcoder.tui.parts.modes_ui import ModesUI

        return ModesUI(
            self.context,
            confirm_plan=self.dialogs.confirm_plan,
            queue_prompt=self.screen.queue_prompt,
        )

    @cached_property
    def rewind(self) -> RewindUI:
        """/rewind (Escape twice) and /fork."""
        from zcoder.tui.parts.rewind_ui import RewindUI

        return RewindUI(
            self.context,
            sessions=self.sessions,
            confirm=self.dialogs.confirm_rewind,
            put_back=self.screen.put_back,
        )

    @cached_property
    def jobs(self) -> JobsUI:
        """/jobs and the header's count of background commands."""
        from zcoder.tui.parts.jobs_ui import JobsUI

        return JobsUI(self.context)

    @cached_property
    def team(self) -> TeamUI:
        """/spawn, /team and the model's spawn_agent: workers in worktrees."""
        from zcoder.tui.parts.team_ui import TeamUI

        return TeamUI(self.context, confirm=self.dialogs.confirm)

    @cached_property
    def slash(self) -> SlashCommands:
        from zcoder.tui.parts.slash import SlashCommands

        return self.slash_of(SlashCommands)

    def slash_of(self, kind: type[SlashCommands], **extra: Any) -> SlashCommands:
        """A ``kind`` of SlashCommands wired to these parts; ``extra``: the keyword arguments
        a kind adds (a remote one's ``link`` and ``relay``)."""
        return kind(
            self.context,
            owners=self.command_owners,
            model=self.model_ui,
            sessions=self.sessions,
            turns=self.turns,
            show_output=self.screen.show_output,
            copy=self.screen.app.copy_to_clipboard,
            **extra,
        )

    def command_owners(self) -> Owners:
        """The parts that carry out commands, each found by the class that declares them
        (zcoder.slash.declared)."""
        return Owners(
            self.front_end,
            self.slash,
            self.edits,
            self.mcp,
            self.sessions,
            self.model_ui,
            self.relay_commands(),
            self.relay_ui.inbox,
            self.quit_ui,
            self.custom_commands,
            self.turns,
            self.rewind,
            self.jobs,
            self.goal,
            self.instructions,
            self.modes,
            self.helpers,
            self.team,
            self.tasks,
        )

    @cached_property
    def helpers(self) -> HelpersUI:
        """/claude, /codex, /opencode and /helpers: other coding agents as helpers."""
        from zcoder.tui.parts.helpers_ui import HelpersUI

        return HelpersUI(self.context, start=self.screen.start_turn)

    @cached_property
    def tasks(self) -> TasksUI:
        """/tasks and the sidebar's task board."""
        from zcoder.tui.parts.tasks_ui import TasksUI

        return TasksUI(self.context, view=self.screen.task_view)

    @cached_property
    def instructions(self) -> InstructionsUI:
        """/instructions and /init."""
        from zcoder.tui.parts.instructions_ui import InstructionsUI

        return InstructionsUI(self.context, start=self.screen.start_turn, model=self.model_ui)

    def relay_commands(self) -> RelayCommands:
        """What carries out the relay's commands: the relay's part."""
        return self.relay_ui

    @cached_property
    def quit_ui(self) -> QuitUI:
        """Quitting with relayed messages still queued asks first."""
        from zcoder.tui.parts.quit_ui import QuitUI

        return QuitUI(
            self.context,
            # RelayUI is made when first used: not by making this, nor without a relay.
            history=lambda: None if self.services.relay is None else self.relay_ui.inbox.history,
            exit=self.exit,
        )

    @cached_property
    def agent_view(self) -> AgentView:
        from zcoder.tui.parts.agent_view import AgentView

        return AgentView(
            self.context, show=self.screen.show, show_plan=self.screen.plan_view.show_plan
        )

    @cached_property
    def peer_steers(self) -> PeerSteers:
        """Trusted peers' steers for the running turn (no part: no screen of its own)."""
        from zcoder.frontend.peer_steering import PeerSteers
        from zcoder.hooks.relay_gate import hooks_judge

        services = self.services
        return PeerSteers(
            lambda: services.relay,
            lambda: self.relay_ui.inbox.history,
            admits=lambda task: (
                not hooks_judge(services.agent.hook_points.engine if services.agent else None, task)
            ),
            landed=lambda: self.relay_ui.refresh_header(),  # noqa: PLW0108 - looked up late
        )

    @cached_property
    def dialogs(self) -> DialogApprovals:
        from zcoder.tui.parts.approvals import DialogApprovals

        screen = self.screen
        return DialogApprovals(
            self.context,
            app=screen.app,
            error=screen.error,
            # A key typed while a dialog was not yet armed was meant for the prompt.
            give_back=screen.prompt_input.insert,
            user_acted=screen.note_user_acted,
            call_back=self.notifier.call_back,
        )

    @cached_property
    def notifier(self) -> Notifier:
        """Calls the user back to an unfocused terminal (ZCODER_NOTIFY); started with the
        screen's app once mounted."""
        from zcoder.tui.state.notify import Notifier

        config = self.context.services.config
        return Notifier(config.notify, f"zcoder {config.agent_name or config.workspace.name}")
