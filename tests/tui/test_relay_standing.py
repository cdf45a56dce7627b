"""What the app shows of a relayed message's sender is what its listener verified.

A `zcoder send` from a plain shell is held (ZCODER_RELAY_INBOUND=hold), and the held
notice, /agents held, the quit dialog, the transcript, /inbox and the model's <agent_relay>
record all call it "via zcoder send, pid N, from DIR", never by its directory's name.
/agents trust refuses a peer that is not a verifiable interactive instance.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.fake_ollama import Turn
from tests.tui.conftest import answer, idle, submit, transcript_text, wait_until
from tests.tui.support import relay_ready
from zcoder.relay import ClaimedMessage, Relay, load_relay_settings
from zcoder.relay.trust import TRUST_FILE
from zcoder.tui import ZcoderApp

pytestmark = pytest.mark.timeout(90)


def zcoder_send(env: dict[str, str], cwd: Path, target: str, body: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "zcoder", "send", target, body],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture
def elsewhere(short_dir: Path) -> Path:
    """A directory no instance works in, to run ``zcoder send`` from."""
    path = short_dir / "elsewhere"
    path.mkdir()
    return path


async def hold_a_zcoder_send(
    pilot: Any, app: ZcoderApp, env: dict[str, str], elsewhere: Path
) -> tuple[ClaimedMessage, str]:
    """``zcoder send`` run in ``elsewhere`` sends the app's project "please look at it",
    which the app holds; the held message, and the label it is shown with everywhere."""
    await relay_ready(pilot, app)
    await asyncio.to_thread(zcoder_send, env, elsewhere, "project", "please look at it")
    await wait_until(pilot, lambda: "is held for you" in transcript_text(app))
    assert app.relay is not None
    (held,) = [m for m in app.relay.held() if isinstance(m, ClaimedMessage)]
    return held, f"via zcoder send, pid {held.envelope.sender_pid}, from {elsewhere}"


async def test_a_zcoder_send_message_is_shown_and_recorded_as_such_everywhere(
    fake, make_config, app_factory, env, elsewhere
):
    app = app_factory(make_config(env={"ZCODER_RELAY_INBOUND": "hold"}))
    async with app.run_test(size=(160, 50)) as pilot:
        held, label = await hold_a_zcoder_send(pilot, app, env, elsewhere)
        assert f"A message {label} is held for you" in transcript_text(app)
        await submit(pilot, app, "/agents held")
        await wait_until(pilot, lambda: f"1. {label}: please look at it" in transcript_text(app))
        fake.enqueue(Turn.text("looked"))
        await submit(pilot, app, "/agents run 1")
        await wait_until(pilot, lambda: len(fake.chat_bodies) == 1)
        await idle(pilot, app)
        await wait_until(pilot, lambda: "looked" in transcript_text(app))
        shown = transcript_text(app)
        assert f"⇄ relayed task {label}" in shown
        await submit(pilot, app, "/inbox")
        await wait_until(
            pilot,
            lambda: f"zcoder send (pid {held.envelope.sender_pid})" in transcript_text(app),
        )
    record = next(
        m["content"]
        for m in fake.chat_bodies[0]["messages"]
        if m["role"] == "user" and "<agent_relay>" in m["content"]
    )
    assert f"Sender: zcoder send (pid {held.envelope.sender_pid})" in record
    assert f"Sender workspace: {elsewhere}\n" in record
    assert "Sender standing: not an interactive zcoder instance" in record
    # Never called by its working directory's name, as if it were an instance there.
    assert "from elsewhere" not in transcript_text(app) and "Sender: elsewhere" not in record


async def test_the_quit_dialog_names_a_zcoder_send_message_as_everywhere_else(
    fake, make_config, app_factory, env, elsewhere
):
    from zcoder.tui.parts.quit_ui import QuitScreen

    app = app_factory(make_config(env={"ZCODER_RELAY_INBOUND": "hold"}))
    async with app.run_test(size=(160, 50)) as pilot:
        _, label = await hold_a_zcoder_send(pilot, app, env, elsewhere)
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, QuitScreen))
        screen = app.screen
        assert isinstance(screen, QuitScreen)
        meta = " ".join(str(widget.content) for widget in screen.meta())
        assert meta.startswith(f"{label}; quitting discards them")
        assert screen.body() == f"{label}: please look at it"
        await answer(pilot, app, "n")


async def test_agents_trust_refuses_a_peer_that_is_not_a_verifiable_instance(
    fake, make_config, app_factory, env, short_dir, sender
):
    plain_ws = short_dir / "plain"
    plain_ws.mkdir()
    plain = Relay(load_relay_settings(env), workspace=plain_ws, env={**os.environ, **env})
    plain.start()
    try:
        app = app_factory(make_config())
        async with app.run_test(size=(160, 50)) as pilot:
            await relay_ready(pilot, app)
            await submit(pilot, app, "/agents trust plain")
            await wait_until(pilot, lambda: "cannot be trusted" in transcript_text(app))
            assert not (Path(env["ZCODER_HOME"]) / TRUST_FILE).exists()  # nothing recorded
            await submit(pilot, app, "/agents trust sender-project")  # an instance: trusted
            await wait_until(pilot, lambda: "Trust:" in transcript_text(app))
        policies = json.loads((Path(env["ZCODER_HOME"]) / TRUST_FILE).read_text())["peers"]
        assert policies == {str(sender.workspace): "trust"}
    finally:
        plain.stop()


async def test_the_header_counts_held_tasks_as_held_and_a_running_one_not_at_all(
    fake, make_config, app_factory, env, elsewhere
):
    # One source for the header and /agents: a held message is "held" (not "queued"), and
    # the task being run is neither.
    app = app_factory(make_config(env={"ZCODER_RELAY_INBOUND": "hold"}))

    def relay_part() -> str:
        return str(app.header.render()).split("relay:", 1)[-1]

    async with app.run_test(size=(160, 50)) as pilot:
        await relay_ready(pilot, app)
        await asyncio.to_thread(zcoder_send, env, elsewhere, "project", "please look at it")
        await wait_until(pilot, lambda: "· 1 held" in relay_part())
        assert "queued" not in relay_part()
        await submit(pilot, app, "/agents")
        await wait_until(pilot, lambda: "0 queued · 0 running · 1 held" in transcript_text(app))
        fake.enqueue(Turn.stall(before="looking"))
        await submit(pilot, app, "/agents run 1")
        await wait_until(pilot, lambda: len(fake.chat_bodies) == 1 and app.busy)
        await wait_until(pilot, lambda: "held" not in relay_part())
        assert "queued" not in relay_part()
        await submit(pilot, app, "/agents")
        await wait_until(pilot, lambda: "0 queued · 1 running · 0 held" in transcript_text(app))
        await pilot.press("escape")
        await idle(pilot, app)
