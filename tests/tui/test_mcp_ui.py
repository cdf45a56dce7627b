"""MCP in the real app: /mcp, the MCP approval dialog, and no server outliving a forced exit.

Everything is real but the model (the fake Ollama): the app under Textual's pilot, the MCP
manager, and real server processes (@modelcontextprotocol/server-everything from npm, and
our hostile ``silent`` server, whose one tool never answers).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar, cast

import pytest
from textual.message import Message

from tests.fixtures.fake_ollama import FakeOllama, Turn, call
from tests.mcp_client.support import (
    alive,
    everything,
    hostile,
    needs_everything,
    pids,
    time_server,
    wait_for,
    write_servers,
)
from tests.mcp_client.turns import tool_names, tool_results
from tests.tui.conftest import answer, entries, idle, submit, transcript_text, wait_until
from tests.tui.parts_support import part_context, services_for
from zcoder.mcp.consent import Consent
from zcoder.mcp.manager import McpManager
from zcoder.tui import ZcoderApp
from zcoder.tui.dialogs.approval import ApprovalScreen, McpApprovalScreen, McpStartScreen
from zcoder.tui.messages import ShowNotice
from zcoder.tui.parts.mcp_ui import NO_SERVERS, McpUI

pytestmark = pytest.mark.timeout(120)
SIZE = (140, 45)
Dialog = TypeVar("Dialog", bound=ApprovalScreen)


def notices(app: ZcoderApp) -> str:
    return "\n".join(e.plain for e in entries(app) if e.role in ("system", "error"))


async def command(pilot: Any, app: ZcoderApp, text: str, until: str) -> None:
    """Type a slash command and wait until the transcript says ``until``."""
    await submit(pilot, app, text)
    await wait_until(pilot, lambda: until in notices(app), timeout=60)


async def open_dialog(
    pilot: Any, app: ZcoderApp, kind: type[Dialog], until: str = ""
) -> tuple[Dialog, str]:
    """The dialog of ``kind`` once it is open (and shows ``until``), and all its lines.

    ``until``: a part mounted after the head (the description, in the scrolling content)
    is composed a frame or more later under load."""

    def shown() -> str:
        # Pushed is not composed yet: under load the screen is on top a frame before its
        # lines are there.
        screen = app.screen
        if not isinstance(screen, kind) or not screen.is_mounted:
            return ""
        return "\n".join(str(w.render()) for w in screen.query("Static"))

    await wait_until(pilot, lambda: bool(shown()) and until in shown(), timeout=60)
    dialog = app.screen
    assert isinstance(dialog, kind)
    return dialog, shown()


async def test_mcp_without_servers_says_how_to_add_one(fake, make_config, app_factory) -> None:
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await command(pilot, app, "/mcp", NO_SERVERS.split(".")[0])


@needs_everything
async def test_an_mcp_call_asks_in_its_own_dialog_and_mcp_lists_reconnects_and_switches(
    fake: FakeOllama,
    make_config: Any,
    app_factory: Any,
    env: dict[str, str],
    workspace: Path,
) -> None:
    home = Path(env["ZCODER_HOME"])
    write_servers(home / "mcp.json", {"every": everything()})
    fake.enqueue(
        Turn.tool_calls(call("mcp__every__gzip-file-as-resource", {"name": "a.gz"})),
        Turn.tool_calls(call("mcp__every__toggle-simulated-logging", {})),
        Turn.text("done"),
    )
    # Every schema, whatever the window: the setting reaches the servers through Config.
    app = app_factory(make_config(env={"ZCODER_MCP_TOOLS_SHARE": "1"}))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "compress something")
        described = "the server's description of this tool (its words, not yours):"
        dialog, shown = await open_dialog(pilot, app, McpApprovalScreen, until=described)
        assert "Run the MCP tool gzip-file-as-resource of the server every?" in shown
        assert "Run this command" not in shown and "$ " not in shown
        assert '"name": "a.gz"' in dialog.body()
        assert "[y] run this call   [n]/Esc deny" in dialog.keys_text()
        await answer(pilot, app, "n")  # it would fetch a URL: no
        await wait_until(pilot, lambda: len(fake.chat_bodies) == 2, timeout=60)
        await answer(pilot, app, "y")
        await idle(pilot, app, timeout=60)
        denied, toggled = tool_results(fake.chat_bodies[-1])
        assert denied == "Error: the user denied this MCP tool call"
        assert "logging" in toggled.lower() and not toggled.startswith("Error")
        assert "mcp__every__echo" in tool_names(fake.chat_bodies[0])

        await command(pilot, app, "/mcp", "MCP servers (1):")
        text = notices(app)
        assert "every · ready, 13 tools" in text
        assert "echo (read-only)" in text and "gzip-file-as-resource," in text

        await command(pilot, app, "/mcp disable every", "is turned off in this workspace")
        kept = json.loads((home / "mcp-disabled.json").read_text())
        assert kept["workspaces"] == {str(workspace.resolve()): ["every"]}
        await command(pilot, app, "/mcp", "every · disabled: turned off in this workspace")
        fake.enqueue(Turn.text("no tools of every now"))
        await submit(pilot, app, "anything")
        await idle(pilot, app, timeout=60)
        assert not any(n.startswith("mcp__") for n in tool_names(fake.chat_bodies[-1]))

        await command(pilot, app, "/mcp enable every", "its tools are offered from the next")
        assert json.loads((home / "mcp-disabled.json").read_text())["workspaces"] == {}
        await command(pilot, app, "/mcp reconnect every", "Starting the MCP server 'every'")
        await wait_until(pilot, lambda: notices(app).count("'every': ready, 13 tools") == 2, 60)
        fake.enqueue(Turn.text("tools are back"))
        await submit(pilot, app, "again")
        await idle(pilot, app, timeout=60)
        assert "mcp__every__echo" in tool_names(fake.chat_bodies[-1])

        await command(pilot, app, "/mcp reconnect nothing", "There is no MCP server 'nothing'")
        await command(pilot, app, "/mcp restart every", "not understood")


async def test_a_project_server_asks_consent_in_a_dialog_of_its_own(
    fake: FakeOllama, make_config: Any, app_factory: Any, workspace: Path
) -> None:
    write_servers(workspace / ".mcp.json", {"time": time_server()})
    fake.enqueue(Turn.text("hello"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "hi")
        start, shown = await open_dialog(pilot, app, McpStartScreen)
        assert "Start the MCP server time this project names?" in shown
        assert "(from the repository)" in shown and "Run this command" not in shown
        assert start.body().startswith(time_server()["command"])
        await answer(pilot, app, "y")
        await idle(pilot, app, timeout=60)
        assert "mcp__time__get_current_time" in tool_names(fake.chat_bodies[-1])


async def call_that_never_ends(pilot: Any, app: ZcoderApp, record: Path) -> int:
    """Have the model call the silent server's wait, approve it; the server's pid."""
    await submit(pilot, app, "wait for ever")
    await answer(pilot, app, "y")  # the server's wait never answers
    await wait_until(pilot, lambda: "silent: wait" in transcript_text(app), 60)
    (pid,) = pids(record)
    assert alive(pid) and app.busy
    return pid


@pytest.fixture
def silent(fake: FakeOllama, env: dict[str, str], short_dir: Path) -> Path:
    """The user's mcp.json names the silent server; where it records its pids."""
    record = short_dir / "pids"
    home = Path(env["ZCODER_HOME"])
    write_servers(home / "mcp.json", {"silent": hostile("silent", HOSTILE_PIDS=str(record))})
    fake.enqueue(Turn.tool_calls(call("mcp__silent__wait", {})))
    return record


async def test_quitting_during_an_mcp_call_leaves_no_server_behind(
    make_config: Any, app_factory: Any, silent: Path
) -> None:
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        pid = await call_that_never_ends(pilot, app, silent)
        await pilot.press("ctrl+c")  # stops the turn
        await pilot.press("ctrl+c")  # and quits
        await wait_until(pilot, lambda: app.return_code is not None, 30)
    wait_for(lambda: not alive(pid), timeout=15, what="the MCP server to be gone")


async def test_the_last_resort_of_a_forced_exit_ends_the_mcp_servers_too(
    make_config: Any, app_factory: Any, silent: Path
) -> None:
    """What runs when the app cannot exit through Textual (tui/state/exit_guard.py) before
    os._exit, which runs no atexit handler: the servers must be gone by its end."""
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        pid = await call_that_never_ends(pilot, app, silent)
        app.forced_exit_cleanup()
        # Ended (SIGKILL sent to its group at the latest) when the cleanup returns.
        wait_for(lambda: not alive(pid), timeout=5, what="the MCP server to be gone")


async def test_mcp_names_each_state_and_its_reason(tmp_path: Path) -> None:
    """McpUI alone, given a real manager and a way to post: failed (with the reason),
    starting, refused, needs consent and disabled servers, each as /mcp lists it."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    write_servers(
        home / "mcp.json",
        {
            "gone": {"command": "no-such-program-here"},
            "mute": hostile("mute"),
            "off": hostile("mute"),
        },
    )
    write_servers(ws / ".mcp.json", {"theirs": hostile("mute"), "asked": hostile("mute")})
    manager = McpManager(ws, home, start_timeout=60)
    try:
        theirs = manager.config.servers["theirs"]
        manager.consent.record(ws, theirs, Consent.REFUSED)
        await manager.set_enabled("off", False)
        manager.start(manager.startable())
        await manager.wait_started(30, names=["gone"])
        states = lambda: {s.entry.name: s.state for s in manager.statuses()}  # noqa: E731
        wait_for(lambda: states()["mute"] == "starting", what="the mute server to be starting")
        posted: list[Message] = []
        services = services_for(ws, home)
        services.agent = cast(Any, SimpleNamespace(mcp_now=lambda: manager))
        ui = McpUI(part_context(services, posted, header=lambda _fields: None))
        await ui.mcp_command("")
        (listing,) = [m.text for m in posted if isinstance(m, ShowNotice)]
        assert "gone · failed: the command 'no-such-program-here' was not found on PATH" in listing
        assert "mute · starting" in listing
        assert "off · disabled: turned off in this workspace" in listing
        assert "theirs · refused: the user refused this project server" in listing
        assert "asked · needs consent: a project server" in listing
        posted.clear()
        await ui.mcp_command("reconnect theirs")
        assert any(
            "was not started (refused" in m.text for m in posted if isinstance(m, ShowNotice)
        )
    finally:
        manager.close()
