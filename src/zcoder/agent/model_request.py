"""One request of a turn: stream the model's reply, shown as it arrives, retried once.

Kept apart from the turn loop (agent/core.py), which decides what to send and what to
do with the reply; this module only talks to the model client (zcoder.model.protocol).
A connection that failed before any response is retried once, after a short pause; a
malformed or unfinished reply is asked again once (its partial text is kept in the
transcript as partial). Anything else, or a second failure, reaches the turn loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from zcoder.agent.cancellation import RoundState
from zcoder.agent.events import AssistantDelta, Notice, ThinkingDelta
from zcoder.agent.recorder import Recorder
from zcoder.agent.settings import AgentSettings
from zcoder.model.errors import ModelError, ModelStreamError
from zcoder.model.protocol import ChatClient, ToolsTemplateProbe
from zcoder.model.repeats import Loop, RepeatGuard
from zcoder.model.types import AssistantReply, ContentDelta, Message, ReasoningDelta

__all__ = ["stream_reply", "tools_template_notice"]


async def stream_reply(
    client: ChatClient,
    settings: AgentSettings,
    recorder: Recorder,
    *,
    round_state: RoundState,
    messages: list[Message],
    tools: list[dict[str, Any]],
    num_predict: int | None,
    background: bool = False,
) -> AssistantReply:
    """Stream one reply; one retry for a connection error before any response, and one
    for a malformed or unfinished reply. ``round_state.reply`` is the reply so far (a
    stopped turn shows it as partial). The request first takes its place at the server
    (zcoder.model.turn_queue): ``background`` (a relayed turn) lets the user's go first."""
    async with _place(client, settings, background=background):
        retried = False
        while True:
            reply = AssistantReply()
            round_state.reply = reply
            received = False
            try:
                stream = client.chat(
                    settings.model,
                    messages,
                    tools=tools or None,
                    think=settings.think,
                    num_predict=num_predict,
                    num_ctx=settings.num_ctx,
                    keep_alive=settings.keep_alive,
                )
                events = settings.watched(stream)
                guards = (RepeatGuard(), RepeatGuard())  # the content's, the reasoning's
                try:
                    async for event in events:
                        received = True
                        reply.add(event)
                        if isinstance(event, ContentDelta) and event.text:
                            recorder.emit(AssistantDelta(event.text))
                            if _looped(reply, guards[0].feed(event.text), thinking=False):
                                break
                        elif isinstance(event, ReasoningDelta) and event.text:
                            recorder.emit(ThinkingDelta(event.text))
                            if _looped(reply, guards[1].feed(event.text), thinking=True):
                                break
                finally:
                    await events.aclose()  # a loop cut: the response is closed at once
                return reply
            except ModelError as exc:
                if retried:
                    raise
                if exc.retryable_before_response and not received:
                    retried = True
                    # Only what went wrong: the whole message, with what to do, comes once,
                    # if the retry fails too.
                    recorder.emit(Notice(f"{exc.brief} — retrying once"))
                    await asyncio.sleep(settings.retry_delay)
                    continue
                if isinstance(exc, ModelStreamError):
                    # A malformed or unfinished reply: asked again once, then reported.
                    retried = True
                    if reply.content.strip():
                        recorder.assistant(reply.content, partial=True)
                    recorder.emit(Notice(f"{exc} — asking again once"))
                    await asyncio.sleep(settings.retry_delay)
                    continue
                raise


def _place(
    client: ChatClient, settings: AgentSettings, *, background: bool
) -> contextlib.AbstractAsyncContextManager[object]:
    """The request's place at its server (zcoder.model.turn_queue), or none to wait for."""
    server = getattr(client, "host", None)
    if settings.turn_queue is None or not isinstance(server, str):
        return contextlib.nullcontext()
    return settings.turn_queue.place(server, background=background)


def _looped(reply: AssistantReply, loop: Loop | None, *, thinking: bool) -> bool:
    """Cut a looping reply to what came before the loop and the loop once, and say why
    (``reply.stopped``; the model reads it at the end of its own reply)."""
    if loop is None:
        return False
    reply.stopped = loop.describe()
    if thinking:
        reply.thinking = loop.kept
    else:
        reply.content = f"{loop.kept.rstrip()}\n\n{loop.note()}"
    return True


async def tools_template_notice(
    client: object, model: str, recorder: Recorder, checked: set[str]
) -> None:
    """Once per model (``checked`` remembers): warn when the server's chat template cannot
    take tools (the server accepts them silently and the model never sees a schema)."""
    if model in checked or not isinstance(client, ToolsTemplateProbe):
        return
    checked.add(model)
    warning = await client.tools_template_warning(model)
    if warning:
        recorder.notice(warning, {"tools_template": False})
