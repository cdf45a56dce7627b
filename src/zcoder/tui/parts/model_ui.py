"""The model in the app: sizing its context window, the warm-up, Ollama's allocation
check, and changing the model (``/model``, the picker).

The window is sized per model in the background (zcoder.model.context); every turn, the
warm-up and ``/compact`` wait for it (``window_ready``), so num_ctx goes with every
request. The warm-up loads the model exactly as the first turn will use it.

It takes its context (the services, a ``Say``, a ``Host``: tui/parts/services.py), never
the app:
the model in use is ``Services.model``; a change of model goes to the session store and
the relay's manifest at once, and is posted (``ModelChanged``) for the screen's header.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.worker import Worker, WorkerState, get_current_worker

from zcoder.agent import Status
from zcoder.frontend.session import resolve_window
from zcoder.model import ModelError
from zcoder.model.context import (
    ContextWindow,
    WindowProbe,
    allocation_notice,
)
from zcoder.sessions import SessionStoreError
from zcoder.slash.declared import ModelCommands
from zcoder.tui.dialogs.model_picker import ModelPicker
from zcoder.tui.messages import ModelChanged
from zcoder.tui.parts.services import Part, PartContext

if TYPE_CHECKING:
    from zcoder.agent import Agent

log = logging.getLogger(__name__)

_ENDED = (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED)


class ModelUI(Part, ModelCommands):
    """The current model's context window (``context_window``, None until sized)."""

    def __init__(self, context: PartContext) -> None:
        super().__init__(context)
        self.context_window: ContextWindow | None = None  # resolved per model, in the background
        self._warmup: Worker[Any] | None = None
        self._window_task: asyncio.Task[ContextWindow] | None = None
        self._allocation_checked: set[tuple[str, int]] = set()
        self._warned: set[str] = set()

    # -- the header's context meter -----------------------------------------------------

    def refresh_meter(self, *, after: Awaitable[object] | None = None) -> None:
        """The header's context meter: the last real count, or an estimate before one.

        Estimating a long history takes a while (about a second for a 5,000-event session
        with megabytes of tool output), so it is done in a thread, after the screen has
        been drawn (``after``: a reopened session's entries are mounted, and drawn,
        first: the thread would slow their drawing down), and the header is updated when
        it is ready; a newer refresh supersedes an older one still running."""
        agent = self.services.agent
        if agent is not None:
            self.host.when_shown(after, partial(self._start_measuring, agent))

    def _start_measuring(self, agent: Agent) -> None:
        self.host.run_in_thread(partial(self._measure_context, agent), group="context-meter")

    def _measure_context(self, agent: Agent) -> None:
        """In a worker thread: the meter's reading, posted to the header (thread-safe)."""
        usage = agent.usage_now()
        if get_current_worker().is_cancelled:
            return  # a newer refresh runs: its reading is the one to show
        self.say.header(context=usage)

    # -- warm-up ------------------------------------------------------------------------

    def start_warmup(self) -> None:
        """Size the context window for the current model, then load the model with it."""
        self.cancel_warmup()
        self._resolve_window()
        self.say.header(status=Status.WARMING_UP.value)
        self._warmup = self.host.run_later(self._warm, group="warmup")

    def cancel_warmup(self) -> None:
        """A real request (or another warm-up) supersedes the warm-up."""
        if self._warmup is not None and self._warmup.state is WorkerState.RUNNING:
            self._warmup.cancel()

    def warmup_ended(self, event: Worker.StateChanged) -> bool:
        """Whether ``event`` is the warm-up's end (shown in the header), not a turn's."""
        if event.worker is not self._warmup or event.state not in _ENDED:
            return False
        if event.state is WorkerState.ERROR and event.worker.error is not None:
            self.say.error(str(event.worker.error))
            self.say.header(status=Status.ERROR.value)
        elif event.state is WorkerState.SUCCESS:  # not over a turn that started since
            self.say.header(status=Status.READY.value, idle_only=True)
        return True

    def _resolve_window(self) -> None:
        """Start sizing the window for this model (zcoder.model.context), in the background."""
        self._window_task = asyncio.get_running_loop().create_task(
            self._resolve(self.services.model)
        )

    async def _resolve(self, model: str) -> ContextWindow:
        services = self.services
        window = await resolve_window(services.config, model, services.client, self._warn_once)
        if model == services.model:
            self.context_window = window
            if services.agent is not None:
                services.agent.settings.num_ctx = window.tokens
            self.refresh_meter()
        return window

    def _warn_once(self, warning: str) -> None:
        if warning not in self._warned:
            self._warned.add(warning)
            self.say.notice(warning)

    async def window_ready(self) -> ContextWindow:
        """The window of the current model, once sized (shielded: a stopped turn or
        warm-up does not stop the sizing the next one needs)."""
        if self._window_task is None:
            self._resolve_window()
        assert self._window_task is not None
        return await asyncio.shield(self._window_task)

    def window_source(self) -> str | None:
        """Where the context window's size came from, for /context."""
        return self.context_window.source if self.context_window is not None else None

    async def _warm(self) -> None:
        """Load the model exactly as the first turn will use it, so nothing reloads.

        The request is the start of a user turn's: its system message and tool schemas,
        with the same num_ctx, think and keep_alive. Ollama reloads a loaded model only
        when a runner option (num_ctx, num_batch, num_gpu, ...) differs, never for
        num_predict, so one generated token is enough; Ollama keeps the evaluated prefix
        in its cache and the first turn reuses it. Nothing enters history.
        """
        await self.window_ready()
        agent = self.services.agent
        assert agent is not None
        messages, tools = agent.user_turn_request()
        settings = agent.settings
        await self.services.client.warm_up(
            self.services.model,
            messages[:1],
            tools=tools or None,
            think=settings.think,
            num_ctx=settings.num_ctx,
            keep_alive=settings.keep_alive,
        )
        self.check_allocation()

    def check_allocation(self) -> None:
        """Once per model and window, in the background: does Ollama report the window
        it was asked for? If not, say so (zcoder.model.context.allocation_notice)."""
        window, model, client = self.context_window, self.services.model, self.services.client
        if window is None or not isinstance(client, WindowProbe):
            return
        if (model, window.tokens) in self._allocation_checked:
            return
        self._allocation_checked.add((model, window.tokens))
        self.host.run_later(
            partial(self._report_allocation, client, model, window), group="allocation"
        )

    async def _report_allocation(
        self, probe: WindowProbe, model: str, window: ContextWindow
    ) -> None:
        try:
            allocated = await probe.loaded_context_length(model)
        except ModelError as exc:
            log.info("could not read Ollama's allocation for %s: %s", model, exc)
            return
        notice = allocation_notice(model, window, allocated)
        if notice is not None and model == self.services.model:
            self.say.notice(notice)

    # -- changing the model -------------------------------------------------------------

    async def model_command(self, argument: str) -> None:
        if argument:
            self.set_model(argument)
        else:
            await self.pick()

    async def pick(self) -> None:
        """The model picker, with the models the server lists."""
        services = self.services
        if services.busy():
            self.say.notice("The model can be changed when no turn is running.")
            return
        try:
            models = await services.client.list_models()
        except ModelError as exc:
            self.say.error(str(exc))
            return
        if not models:
            if services.config.backend == "openai":
                self.say.notice(
                    f"The server at {services.config.base_url} lists no models; load one."
                )
            else:
                self.say.notice("Ollama has no models; pull one with `ollama pull NAME`.")
            return
        self.host.ask(ModelPicker(models, services.model), self._chosen)

    def _chosen(self, model: str | None) -> None:
        if model:
            self.set_model(model)

    def set_model(self, model: str, *, notice: str | None = None) -> None:
        """Switch to ``model``; ``notice`` replaces the plain "Model: NAME"."""
        services = self.services
        if services.busy():
            self.say.notice("The model can be changed when no turn is running.")
            return
        services.model = model
        if services.agent is not None:
            services.agent.settings.model = model
        if services.store is not None and services.session_id is not None:
            with contextlib.suppress(SessionStoreError):
                services.store.set_model(services.session_id, model)
        if services.relay is not None:  # peers see it at once
            services.relay.refresh_manifest(model=model)
        self.say.post(ModelChanged(model))  # the header follows
        self.say.notice(notice or f"Model: {model}")
        self.start_warmup()
