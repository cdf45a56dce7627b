"""The app's start-up, in two stages, so the first frame comes quickly.

The first stage (the main screen's ``on_mount``, tui/main_screen.py; the app installs its
signal handlers in its own) does only what the first frame needs: the prompt's history,
the header's "relay: starting", the prompt's focus. The screen is drawn, and the prompt
takes keys, from then on.

The second stage (``MainScreen.finish_start``) runs right after that first frame is
painted: it imports and starts what the screen does not need to appear (the session store
and its sqlite3, the relay and its listener process, the tools, the model client and
httpx, the agent: ``Startup.make_agent``), opens the session, starts the warm-up, and
tunes the garbage collector once the session's entries are on screen. A prompt submitted
before then finishes the start first (the screen calls ``finish_start`` from its submit
handler), so nothing typed is lost or reordered; keys typed while it runs wait in the
terminal and arrive in order.

With ``--resume`` both stages run before the first frame: a resumed session's screen is
its transcript, and laying its entries out once with the first frame costs far less than
mounting them into a screen already shown (measured: 400-600 ms for 30 entries).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zcoder.tui.parts.services import Part, PartContext
from zcoder.tui.state.history import PromptHistory

if TYPE_CHECKING:
    from zcoder.agent import SteerSource
    from zcoder.agent.events import EventSink
    from zcoder.frontend.extensions import Extensions
    from zcoder.tui.parts.approvals import DialogApprovals
    from zcoder.tui.widgets.prompt_habits import PromptHabits

__all__ = ["Startup"]


class Startup(Part):
    """Whether the second stage ran, and its work that is not the screen's layout."""

    def __init__(self, context: PartContext, *, resume: bool, tune_gc: bool) -> None:
        """``tune_gc``: tune the process's garbage collector once up (tui/state/collector.py)."""
        super().__init__(context)
        self.resume = resume
        self.tune_gc = tune_gc
        self.finished = False
        """The second stage has run (or is running): agent, sessions and relay exist."""
        self.leaving = False
        """The app is exiting: a second stage not yet run never runs."""

    def begin(self) -> bool:
        """Whether the second stage is to run now: once, whichever asks first, and not
        at all when the app is already leaving (Ctrl+C on the first frame)."""
        if self.finished or self.leaving:
            return False
        self.finished = True
        return True

    def open_history(self, habits: PromptHabits) -> None:
        """The prompts sent in this workspace before, for Up, Down and Ctrl+R."""
        config, scheduler = self.services.config, self.services.scheduler
        history = PromptHistory.open(config.home, config.workspace)
        habits.attach(
            history,
            workspace=config.workspace,
            queued_waiting=lambda: bool(scheduler.prompts()),
        )
        if history.problem is not None:
            self.say.error(history.problem)

    def make_agent(
        self, *, approver: DialogApprovals, on_event: EventSink, steering: SteerSource | None
    ) -> Extensions:
        """The agent (``Services.agent``), its tools and the extensions'; the relay's
        tools when the relay is up. The relay and the session store are open by now.
        The extensions found are returned (their commands join the registry)."""
        from zcoder.frontend.assembly import assemble_agent  # noqa: PLC0415 - the second stage's

        services = self.services
        relay = services.relay
        services.agent, extensions = assemble_agent(
            services.config,
            services.client,
            services.model,
            approver=approver,
            on_event=on_event,
            store=services.store,
            on_problem=self.say.notice,
            relay=(relay, approver) if relay is not None and relay.available else None,
            relay_available=lambda: services.relay_available,
            hook_consent=True,  # a person is here: the project's hooks ask once
        )
        services.agent.steering = steering  # what reaches a running turn (agent/steering.py)
        return extensions
