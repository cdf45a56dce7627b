"""The app's start-up, in two stages, so the first frame comes quickly.

The first stage (the app's ``on_mount``) does only what the first frame needs: the signal
handlers, the prompt's history, the header's "relay: starting", the prompt's focus. The
screen is drawn, and the prompt takes keys, from then on.

The second stage (``finish``) runs right after that first frame is painted: it imports and
starts what the screen does not need to appear (the session store and its sqlite3, the
relay and its listener process, the tools, the model client and httpx, the agent), opens
the session, starts the warm-up, and tunes the garbage collector once the session's
entries are on screen. A prompt submitted before then finishes the start first (the app
calls ``finish`` from its submit handler), so nothing typed is lost or reordered; keys
typed while it runs wait in the terminal and arrive in order.

With ``--resume`` both stages run before the first frame: a resumed session's screen is
its transcript, and laying its entries out once with the first frame costs far less than
mounting them into a screen already shown (measured: 400-600 ms for 30 entries).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from zcoder.tui.collector import tune_collector
from zcoder.tui.exit_guard import ExitGuard
from zcoder.tui.history import PromptHistory

if TYPE_CHECKING:
    from zcoder.tui.app import ZcoderApp

__all__ = ["Startup"]


class Startup:
    def __init__(self, app: ZcoderApp, *, resume: bool, tune_gc: bool) -> None:
        """``tune_gc``: tune the process's garbage collector once up (tui/collector.py)."""
        self.app = app
        self.say = app.say
        self.resume = resume
        self.tune_gc = tune_gc
        self.finished = False
        """The second stage has run (or is running): agent, sessions and relay exist."""
        self.leaving = False
        """The app is exiting: a second stage not yet run never runs."""

    def first_stage(self) -> None:
        app = self.app
        loop = asyncio.get_running_loop()

        def exit_from_any_thread(status: int) -> None:
            loop.call_soon_threadsafe(app.exit_on_signal, status)

        ExitGuard(exit_from_any_thread, app.forced_exit_cleanup).install()
        self._open_history()
        if app.config.relay.enabled:
            self.say.header(relay="starting")
        app.prompt_input.focus()
        if self.resume:
            self.finish()
        else:
            app.call_after_refresh(self.finish)

    def finish(self) -> None:
        """The second stage; runs once, whichever asks first, and not at all when the app
        is already leaving (Ctrl+C on the first frame)."""
        if self.finished or self.leaving:
            return
        self.finished = True
        from zcoder.agent import (  # noqa: PLC0415 - the point of the second stage
            Agent,
            AgentSettings,
            register_relay_tools,
        )
        from zcoder.extensions import hook_consent_dialog, load_extensions  # noqa: PLC0415
        from zcoder.tools import ApprovalPolicy, default_registry  # noqa: PLC0415
        from zcoder.tui.relay_ui import RELAY_POLL_SECONDS  # noqa: PLC0415

        app, config = self.app, self.app.config
        app.install_sidebar()
        app.sessions.open_store()
        app.relay_ui.start(spawn_now=self.resume)
        registry = default_registry()
        if app.relay is not None and app.relay.available:
            register_relay_tools(registry, app.relay, app.dialogs)
        extensions = load_extensions(registry, config.workspace, config.home)
        for problem in extensions.problems:
            self.say.notice(problem)
        if extensions.hooks is not None:  # a person is here: the project's hooks ask once
            extensions.hooks.ask = hook_consent_dialog(app.dialogs, config)
        app.agent = Agent(
            client=app.client,
            registry=registry,
            settings=AgentSettings.from_config(config, app.model, skills=extensions.skills),
            approval=ApprovalPolicy(
                config.command_policy, config.profile, edits=config.edit_policy
            ),
            approver=app.dialogs,
            on_event=app.agent_view.on_event,
            store=app.store,
            relay_available=lambda: app.relay is not None and app.relay.available,
            hooks=extensions.hooks,
        )
        app.custom_commands.install(extensions.skills, extensions.commands)
        app.show_deferred_after(app.sessions.open_initial)  # its load starts the meter
        if app.sessions.session_id is None:  # no session store: the meter all the same
            app.refresh_meter()
        app.set_interval(RELAY_POLL_SECONDS, app.relay_ui.poll)
        app.relay_ui.watch_workspace_peers()  # another instance here already?
        app.relay_ui.refresh_header()
        if self.tune_gc:  # once the session's entries are on screen
            app.when_shown(app.sessions.shown, tune_collector)
        if not app.sessions.restoring_model:  # else it warms up the session's model
            app.model_ui.start_warmup()
        app.schedule()  # prompts submitted before the start finished

    def _open_history(self) -> None:
        """The prompts sent in this workspace before, for Up, Down and Ctrl+R."""
        app = self.app
        history = PromptHistory.open(app.config.home, app.config.workspace)
        app.prompt_input.habits.attach(
            history,
            workspace=app.config.workspace,
            queued_waiting=lambda: bool(app.scheduler.prompts()),
        )
        if history.problem is not None:
            self.say.error(history.problem)
