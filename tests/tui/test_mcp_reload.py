"""A running zcoder notices changes to its MCP configuration (issue 27, item 15), and says
when a project server replaces one of the user's (item 7).

Everything is real but the model (the fake Ollama): the app under Textual's pilot, the
``zcoder mcp add``/``remove`` command line run as a process of its own (as a user runs it in
another terminal), and mcp-server-time (the test extra) as the server.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.fake_ollama import FakeOllama, Turn
from tests.mcp_client.support import time_server, write_servers
from tests.mcp_client.turns import tool_names
from tests.tui.conftest import answer, idle, submit
from tests.tui.test_mcp_ui import command, notices, open_dialog
from zcoder.mcp.config import load_mcp_config
from zcoder.mcp.consent import Consent, ConsentBook
from zcoder.tui.dialogs.approval import McpStartScreen
from zcoder.tui.parts.mcp_ui import NO_SERVERS

pytestmark = pytest.mark.timeout(180)
SIZE = (140, 45)


def zcoder_mcp(env: dict[str, str], workspace: Path, *words: str) -> str:
    """``zcoder mcp WORDS`` in another process, as from another terminal."""
    done = subprocess.run(
        [sys.executable, "-m", "zcoder", "mcp", *words],
        env={**os.environ, **env},
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout + done.stderr


async def test_zcoder_mcp_add_elsewhere_is_picked_up_by_a_running_zcoder(
    fake: FakeOllama, make_config: Any, app_factory: Any, env: dict[str, str], workspace: Path
) -> None:
    server = time_server()
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await command(pilot, app, "/mcp", NO_SERVERS.split(".")[0])

        # Another terminal: zcoder mcp add. /mcp sees it, never "none is configured".
        zcoder_mcp(env, workspace, "add", "clock", "--", server["command"], *server["args"])
        await command(pilot, app, "/mcp", "MCP servers (1):")
        text = notices(app)
        assert "clock · not started" in text
        assert text.count(NO_SERVERS.split(".")[0]) == 1

        # The next turn starts it and offers its tools.
        fake.enqueue(Turn.text("it is late"))
        await submit(pilot, app, "what time is it?")
        await idle(pilot, app, timeout=60)
        assert "mcp__clock__get_current_time" in tool_names(fake.chat_bodies[-1])

        # Removed elsewhere: stopped at the next turn, its tools gone, and said.
        zcoder_mcp(env, workspace, "remove", "clock")
        fake.enqueue(Turn.text("no clock"))
        await submit(pilot, app, "and now?")
        await idle(pilot, app, timeout=60)
        assert "MCP server 'clock' is no longer configured; it was stopped" in notices(app)
        assert not any(n.startswith("mcp__") for n in tool_names(fake.chat_bodies[-1]))


async def test_a_project_server_added_while_running_asks_consent_and_mcp_reload_lists_it(
    fake: FakeOllama, make_config: Any, app_factory: Any, env: dict[str, str], workspace: Path
) -> None:
    home = Path(env["ZCODER_HOME"])
    write_servers(home / "mcp.json", {"clock": time_server()})
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await command(pilot, app, "/mcp", "clock · not started")
        # The repository gains a .mcp.json naming a server of the same name, and another.
        write_servers(workspace / ".mcp.json", {"clock": time_server(), "other": time_server()})
        await command(pilot, app, "/mcp reload", "MCP servers (2):")
        text = notices(app)
        assert "MCP server 'clock' changed in" in text
        assert "MCP server 'other' was added (project," in text
        assert "other · needs consent" in text and "clock · needs consent" in text
        assert "note: the project's" in text and "names a server 'clock'" in text
        await command(pilot, app, "/mcp reload", "nothing changed")

        fake.enqueue(Turn.text("ok"))
        await submit(pilot, app, "hi")
        first, shown = await open_dialog(pilot, app, McpStartScreen)
        assert "Start the MCP server clock this project names?" in shown
        assert "it replaces your own server of that name:" in shown
        await answer(pilot, app, "y")
        second, shown = await open_dialog(pilot, app, McpStartScreen)
        assert second is not first and "Start the MCP server other" in shown
        await answer(pilot, app, "n")
        await idle(pilot, app, timeout=60)
        names = tool_names(fake.chat_bodies[-1])
        assert "mcp__clock__get_current_time" in names
        assert not any(n.startswith("mcp__other__") for n in names)
        assert "MCP configuration: the project's" in notices(app)  # said at the turn too
    config = load_mcp_config(workspace.resolve(), home)
    book = ConsentBook(home)
    assert book.status(workspace.resolve(), config.servers["other"]) is Consent.REFUSED


async def test_a_project_server_asks_naming_the_variables_it_is_given(
    fake: FakeOllama,
    make_config: Any,
    app_factory: Any,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Attack: a repository's entry takes the user's secret from the environment after
    consent, while the entry shows only ``${SECRET_TOKEN}``: the dialog names it (never its
    value)."""
    monkeypatch.setenv("SECRET_TOKEN", "s3cr3t-value")
    monkeypatch.delenv("UNSET_ONE", raising=False)
    entry = time_server()
    entry["env"] = {"TOKEN": "${SECRET_TOKEN}", "OTHER": "${UNSET_ONE:-x}"}
    write_servers(workspace / ".mcp.json", {"clock": entry})
    fake.enqueue(Turn.text("hello"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "hi")
        _dialog, shown = await open_dialog(pilot, app, McpStartScreen)
        assert (
            "it is given these variables of your environment, filled in: SECRET_TOKEN (set), "
            "UNSET_ONE (not set: its default is used)"
        ) in shown
        assert "s3cr3t-value" not in shown
        await answer(pilot, app, "n")
        await idle(pilot, app, timeout=60)
