"""Every declared command has an owner in each front end it applies to, found by the
class that declares it: the TUI's parts, ``--connect``'s, an editor's (tests/slash for
the editor's and the walk itself). A missing owner is said in the transcript, never a
crash of the worker that runs the command."""

from __future__ import annotations

from typing import Any, cast

import pytest

from tests.tui.conftest import submit, transcript_text, wait_until
from zcoder.base.ssh_target import Target
from zcoder.remote.app import RemoteApp, RemoteMainScreen
from zcoder.slash.owners import Owners
from zcoder.slash.registry import FrontEnd

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 40)


async def test_the_tuis_parts_carry_out_every_command_declared_for_it(
    make_config: Any, app_factory: Any
) -> None:
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.services.agent is not None)  # the start finished
        owners = app.main.parts.command_owners()
        assert owners.front_end is FrontEnd.TUI
        assert owners.unowned() == []


async def test_a_part_missing_from_the_owners_is_said_and_the_app_goes_on(
    make_config: Any, app_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.services.agent is not None)
        parts = app.main.parts
        # The edits part left out, as a new part not added to the owners would be.
        without = Owners(FrontEnd.TUI, parts.slash, parts.mcp, parts.sessions, parts.model_ui)
        monkeypatch.setattr(parts.slash, "owners", lambda: without)
        assert "/diff (EditCommands.show_diff)" in without.unowned()
        await submit(pilot, app, "/diff")
        await wait_until(pilot, lambda: "/diff has no owner in the TUI" in transcript_text(app))
        assert "carries out EditCommands.show_diff" in transcript_text(app)
        await submit(pilot, app, "/context")  # the others still run
        await wait_until(pilot, lambda: "Context of the next request" in transcript_text(app))
        assert app.is_running


async def test_connects_parts_carry_out_or_refuse_each_command_by_its_declaration(
    make_config: Any, env: dict[str, str]
) -> None:
    target = Target.parse("127.0.0.1:1/srv/app")  # nothing listens: never connected
    app = RemoteApp(make_config(), target, env)
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = cast(RemoteMainScreen, app.main)
            owners = screen.parts.command_owners()
            assert owners.front_end is FrontEnd.REMOTE
            assert owners.unowned() == []
            label = screen.link.target.label
            slash = screen.parts.slash
            await slash.run("/diff", "")
            await slash.run("/inbox", "")
            await slash.run("/help", "")
            await slash.run("/list-agents", "")
            await wait_until(
                pilot, lambda: "/list-agents: this zcoder is connected to" in transcript_text(app)
            )
            text = " ".join(transcript_text(app).split())
            assert (
                "/diff is not available over --connect: the edits are on the remote host, in "
                f"its workspace. This zcoder is connected to {label}."
            ) in text
            assert (
                f"/inbox acts on this machine's zcoder, and the agent runs on {label}: it is "
                "not available over --connect."
            ) in text
            assert "/compact [FOCUS]" in text  # /help: the TUI's list, then this mode's note
            assert f"Connected to {label} (zcoder --connect): /reconnect (F5)" in text
    finally:
        app._stop_services()
