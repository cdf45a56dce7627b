"""The agent's context window: the meter, /context's breakdown, and compaction.

The keeper holds the ContextMeter (zcoder.agent.usage) and works on its agent's history
through a narrow interface (``ContextHost``): it reads the settings and the next request,
and compaction replaces the history (zcoder.agent.compaction) and saves it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from zcoder.agent.compaction import split_history, summary_record, summary_request
from zcoder.agent.events import (
    ErrorNotice,
    Notice,
)
from zcoder.agent.hook_points import HookPoints
from zcoder.agent.prompts import system_prompt
from zcoder.agent.recorder import Recorder
from zcoder.agent.status import ContextUsage
from zcoder.agent.usage import Breakdown, ContextMeter, output_cap
from zcoder.base.plural import counted
from zcoder.model import AssistantReply, Done, Message, ModelError
from zcoder.skills.active import carried_records

if TYPE_CHECKING:
    from zcoder.agent.plan_keeper import PlanKeeper
    from zcoder.agent.settings import AgentSettings
    from zcoder.model.protocol import ChatClient


@dataclass(frozen=True)
class CompactResult:
    compacted: bool
    text: str
    before: int = 0
    after: int = 0


class ContextHost(Protocol):
    """What the keeper needs of its agent (zcoder.agent.core.Agent)."""

    client: ChatClient
    settings: AgentSettings
    messages: list[Message]  # the model history, without the system message
    recorder: Recorder
    hook_points: HookPoints
    plan: PlanKeeper

    def relay_available(self) -> bool: ...

    def user_turn_request(self) -> tuple[list[Message], list[dict[str, Any]]]: ...

    async def session_started(self, source: str) -> None: ...


class ContextKeeper:
    """The context window of one agent's conversation; ``meter`` is its ContextMeter."""

    def __init__(self, host: ContextHost) -> None:
        self.host = host
        self.meter = ContextMeter()

    # -- the meter ----------------------------------------------------------------------

    def show_estimate(self, request: list[Message], schemas: list[dict[str, Any]]) -> None:
        """Before the first real count of this session, show an estimate of the request."""
        if self.meter.last is None:
            self.host.recorder.emit(
                self.meter.estimate(request, schemas, self.host.settings.num_ctx)
            )

    def record(
        self, done: Done | None, request: list[Message], schemas: list[dict[str, Any]]
    ) -> None:
        """After a response: the server's count, shown when it gave one."""
        usage = self.meter.record(done, request, schemas, self.host.settings.num_ctx)
        if usage is not None:
            self.host.recorder.emit(usage)

    def usage_now(self) -> ContextUsage:
        """The meter's reading: the last real count, or an estimate of the next request."""
        window = self.host.settings.num_ctx
        if self.meter.last is not None and self.meter.last.window == window:
            return self.meter.last
        messages, schemas = self.host.user_turn_request()
        return self.meter.estimate(messages, schemas, window)

    def breakdown(self) -> Breakdown:
        """Where the tokens of the next request go (for /context)."""
        host, settings = self.host, self.host.settings
        _messages, schemas = host.user_turn_request()
        return self.meter.breakdown(
            base_prompt=system_prompt(
                settings.profile,
                settings.workspace,
                relay_available=host.relay_available(),
            ),
            instructions=settings.instructions,
            history=host.messages,
            tools=schemas,
            window=settings.num_ctx,
        )

    def output_cap(self, request: list[Message], schemas: list[dict[str, Any]]) -> int | None:
        """The output limit to ask for with ``request``: the setting, lowered to what the
        window leaves after it (zcoder.agent.usage.output_cap). Turns and compaction's
        summary request are both sized so."""
        window = self.host.settings.num_ctx
        prompt = self.meter.estimate(request, schemas, window).used if window else 0
        return output_cap(
            window, prompt, self.host.settings.num_predict, measured=self.meter.last is not None
        )

    # -- compaction ---------------------------------------------------------------------

    async def compact(self, focus: str = "", *, automatic: bool = False) -> CompactResult:
        """Replace older history with a summary the model writes; keep the latest turns.

        The transcript (the user's record) is untouched; the model's history is replaced
        and saved, so a resumed session goes on from the summary.
        """
        host, settings, recorder = self.host, self.host.settings, self.host.recorder
        older, kept = split_history(host.messages)
        if not older:
            return CompactResult(
                False, "nothing to compact yet: the history is only the latest turns"
            )
        refused = await host.hook_points.may_compact("auto" if automatic else "manual")
        if refused is not None:
            return CompactResult(False, f"a hook kept the history as it is: {refused}")
        messages, schemas = host.user_turn_request()
        # Before and after are the same measure: the next request as predicted now, and
        # the compacted one estimated with the same tokens per estimated token.
        before = self.meter.predict(messages, schemas, settings.num_ctx).used
        per_estimated = before / max(1, self.meter.raw_estimate(messages, schemas))
        label = "Compacting the conversation" + (
            " (the context window is nearly full)" if automatic else ""
        )
        recorder.emit(Notice(f"{label}…"))
        summary = AssistantReply()
        request = summary_request(older, focus)
        # Sized and bounded as a turn is: an output limit that fits the window (a server
        # such as vLLM refuses one that does not), the idle deadline and the reply cap.
        stream = host.client.chat(
            settings.model,
            request,
            think=False,
            num_predict=self.output_cap(request, []),
            num_ctx=settings.num_ctx,
            keep_alive=settings.keep_alive,
        )
        async for event in settings.watched(stream):
            summary.add(event)
        text = summary.content.strip()
        if not text:
            return CompactResult(False, "the model wrote an empty summary; nothing was compacted")
        # Skills activated before the cut stay active: their instructions follow the summary,
        # and so does the model's plan (agent/plan_keeper.py).
        carried = [*carried_records(older, kept), *host.plan.records()]
        host.messages = [summary_record(text), *carried, *kept]
        recorder.save_messages(host.messages)
        await host.session_started("compact")  # SessionStart hooks, as in Claude Code
        self.meter.reset()
        messages, schemas = host.user_turn_request()
        after = ContextUsage(
            round(self.meter.raw_estimate(messages, schemas) * per_estimated),
            settings.num_ctx,
            measured=False,
        )
        older_messages = counted(len(older), "older message")
        report = (
            f"Compacted{' automatically' if automatic else ''}: {older_messages} "
            f"became a summary; the latest turns are kept as they were. "
            f"Context ~{before:,} → ~{after.used:,} tokens."
        )
        recorder.notice(report, {"compacted": True, "before": before, "after": after.used})
        recorder.emit(after)
        return CompactResult(True, report, before, after.used)

    async def compact_if_needed(
        self, request: list[Message], schemas: list[dict[str, Any]]
    ) -> bool:
        """Compact first when the next request would pass the threshold of the window:
        as the server last counted, or, before any count (a session resumed in a new
        process), as estimated; a request too big for the window is never sent as is."""
        window, share = self.host.settings.num_ctx, self.host.settings.compact_at
        if not window or share is None:
            return False
        predicted = self.meter.predict(request, schemas, window).used
        if predicted < window * share:
            return False
        try:
            result = await self.compact(automatic=True)
        except ModelError as exc:
            self.host.recorder.emit(ErrorNotice(f"automatic compaction failed: {exc}"))
            return False
        return result.compacted
