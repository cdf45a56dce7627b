"""Waits and runs the app tests share beyond conftest's basics, kept apart so that a test
file imports only the few it uses."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.tui.conftest import idle, submit, wait_until
from zcoder.relay import Relay, SendResult
from zcoder.tui import ZcoderApp


async def relay_ready(pilot: Any, app: ZcoderApp) -> None:
    """Wait until the app's relay is registered and listening, so peers can reach it."""
    await wait_until(pilot, lambda: app.relay is not None and app.relay.ready)


async def relay_to(app: ZcoderApp, sender: Relay, body: str) -> SendResult:
    """``sender`` sends the app's relay ``body`` (from a thread: the send blocks on the
    app's listener, which runs in this event loop)."""
    assert app.relay is not None and app.relay.instance_id is not None
    return await asyncio.to_thread(sender.send, app.relay.instance_id, body)


@contextlib.asynccontextmanager
async def answered(
    app: ZcoderApp, fake: FakeOllama, prompt: str, *replies: Turn, size: tuple[int, int]
) -> AsyncIterator[Any]:
    """``app`` running at ``size``, once the turn of ``prompt`` (which the model answers
    with ``replies``) has ended; yields its pilot."""
    fake.enqueue(*replies)
    async with app.run_test(size=size) as pilot:
        await submit(pilot, app, prompt)
        await idle(pilot, app)
        yield pilot
