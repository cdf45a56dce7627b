"""Waits the app tests share beyond conftest's basics, kept apart so that a test file
imports only the few it uses."""

from __future__ import annotations

from typing import Any

from tests.tui.conftest import wait_until
from zcoder.tui import ZcoderApp


async def relay_ready(pilot: Any, app: ZcoderApp) -> None:
    """Wait until the app's relay is registered and listening, so peers can reach it."""
    await wait_until(pilot, lambda: app.relay is not None and app.relay.ready)
