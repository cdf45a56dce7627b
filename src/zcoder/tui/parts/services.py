"""What the parts of the TUI share instead of the app: the services, and a host for workers.

The parts behind the screen (the model, the sessions, the relay, turns, slash commands)
used to take the whole app and reach into it for whatever they needed. Each now takes
a ``PartContext``: ``Services`` (the program's long-lived objects: the config, the model
in use, the agent, the session store and the open session, the relay, the user's waiting
input, the turn scheduler), a ``Say`` to post messages up (tui/messages.py), and a
``Host``: the few things a screen does for a part that is not a widget (run its workers,
show a dialog).
So each can be made and tested without an app (tests/tui/test_model_ui.py), and none
imports the app or the screen, so the TUI's imports form a tree
(tests/tui/test_import_tree.py).

Every part is made the same way: ``Part(context, *, its own wires)``. ``PartContext``
holds the three things each may use (the services, the ``Say``, the ``Host``); what a part
needs beyond them (another part, one of the screen's own calls) it takes by keyword,
named, so what it depends on is in its signature (tests/tui/test_part_signature.py).

The app owns the services' lifecycle (tui/app.py): made with the app, filled in by
start-up's second stage (tui/parts/startup.py), closed at exit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

from textual.dom import DOMNode

from zcoder.frontend.goal import GoalKeeper
from zcoder.frontend.pending import PendingInput
from zcoder.tui.state.scheduler import TurnScheduler

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.worker import Worker

    from zcoder.agent import Agent
    from zcoder.config import Config
    from zcoder.frontend.activity import ActivityTracker
    from zcoder.model.backends import ModelClient
    from zcoder.relay import Relay
    from zcoder.sessions import SessionStore
    from zcoder.tui.messages import Say

__all__ = ["Host", "Part", "PartContext", "ScreenHost", "Services"]


class Services:
    """The long-lived objects every part may use; ``busy`` says whether a turn runs.

    ``agent``, ``store``, ``session_id`` and ``relay`` are None until start-up's second
    stage made them (and the store and relay stay None when they could not start)."""

    def __init__(
        self,
        config: Config,
        *,
        busy: Callable[[], bool] = lambda: False,
        client: ModelClient | None = None,
    ) -> None:
        """``client``: the model client; by default the config's, made when first used."""
        self.config = config
        self._client = client
        self.model = config.model
        """The model in use (``/model`` changes it; tui/parts/model_ui.py)."""
        self.pending = PendingInput()
        """The user's waiting input (steering, follow-ups): the one store of it, saved with
        the open session (tui/parts/sessions_ui.py), the agent's steering source."""
        self.scheduler = TurnScheduler(config.relay.max_auto_turns, pending=self.pending)
        self.goal = GoalKeeper()
        """The open session's goal (/goal, tui/parts/goal_ui.py), saved with it."""
        self.scheduler.goal_due = lambda: self.goal.due
        self.busy = busy
        self.agent: Agent | None = None
        self.store: SessionStore | None = None
        self.session_id: str | None = None
        self.relay: Relay | None = None

    @property
    def client(self) -> ModelClient:
        """Ollama, or an OpenAI-compatible server: made (and httpx imported) on first use,
        which is the second stage of start-up."""
        if self._client is None:
            from zcoder.model.backends import make_client  # noqa: PLC0415

            self._client = make_client(self.config)
        return self._client

    @cached_property
    def activity(self) -> ActivityTracker:
        """What this zcoder is doing, for its relay's manifest (made on first use)."""
        from zcoder.frontend.activity import ActivityTracker  # noqa: PLC0415

        return ActivityTracker(lambda: self.relay)

    @property
    def relay_available(self) -> bool:
        return self.relay is not None and self.relay.available


class Host(Protocol):
    """What a screen does for a part that is not a widget: run its workers (they are the
    screen's, and end with it), show its dialogs, and wait for the screen to be drawn."""

    def run_later(
        self,
        work: Callable[[], Coroutine[Any, Any, object]],
        *,
        group: str = "default",
        exit_on_error: bool = False,
    ) -> Worker[Any]: ...

    def run_in_thread(self, work: Callable[[], object], *, group: str) -> Worker[Any]: ...

    def call_after_refresh(self, callback: Callable[..., Any], *args: Any) -> bool: ...

    def when_shown(
        self, mounting: Awaitable[object] | None, then: Callable[[], object]
    ) -> None: ...

    def ask(self, dialog: Screen[Any], answered: Callable[[Any], None]) -> object: ...

    def columns(self) -> int:
        """How wide a line of the transcript may be, for text laid out to fit it
        (/list-agents' table)."""
        ...


@dataclass(frozen=True)
class PartContext:
    """What every part is made with: the long-lived ``services``, a ``say`` to post
    messages up, and the ``host`` that runs its workers and shows its dialogs."""

    services: Services
    say: Say
    host: Host


@dataclass(eq=False)
class Part:
    """The base of every part: made as ``Part(context, *, its own wires)``, it reads the
    services, its ``Say`` and its ``Host`` from the context."""

    context: PartContext

    @property
    def services(self) -> Services:
        return self.context.services

    @property
    def say(self) -> Say:
        return self.context.say

    @property
    def host(self) -> Host:
        return self.context.host


class ScreenHost(DOMNode):
    """``Host`` for a screen (or any widget): mixed into the main screen, and into the
    small apps the tests host a part on."""

    def run_later(
        self,
        work: Callable[[], Coroutine[Any, Any, object]],
        *,
        group: str = "default",
        exit_on_error: bool = False,
    ) -> Worker[Any]:
        """``run_worker`` given a coroutine function, never a coroutine: a worker cancelled
        before it starts (the app quitting) then leaves no coroutine unawaited."""
        return self.run_worker(work, group=group, exit_on_error=exit_on_error)

    def run_in_thread(self, work: Callable[[], object], *, group: str) -> Worker[Any]:
        """``work`` in a thread; a newer one of the group supersedes (cancels) this one."""
        return self.run_worker(work, thread=True, group=group, exclusive=True, exit_on_error=False)

    def columns(self) -> int:
        return self.app.size.width  # the main screen's is its transcript's

    def when_shown(self, mounting: Awaitable[object] | None, then: Callable[[], object]) -> None:
        """``then`` once ``mounting`` is done (if any) and the screen drawn after it."""
        if mounting is None:
            self.call_after_refresh(then)
            return

        async def wait_then() -> None:
            await mounting
            self.call_after_refresh(then)

        self.run_later(wait_then)

    def ask(self, dialog: Screen[Any], answered: Callable[[Any], None]) -> object:
        return self.app.push_screen(dialog, callback=answered)
