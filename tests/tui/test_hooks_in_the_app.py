"""Hooks in the real app: the consent dialog for a project's hooks, SessionStart, and the
RelayMessage hook between two real relays (the sender reads the receipt it is sent).

Every hook is a real program; the model is the scripted fake Ollama.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.fake_ollama import Turn
from tests.hooks.support import entry, project_settings, script, write_settings
from tests.tui.conftest import answer, converse, idle, submit, transcript_text, wait_until
from tests.tui.support import relay_ready, relay_to
from zcoder.relay import ClaimedMessage
from zcoder.tui.dialogs.approval import ApprovalScreen

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 40)


def user_hooks(env: dict[str, str], hooks: dict[str, object]) -> None:
    write_settings(Path(env["ZCODER_HOME"]) / "settings.json", hooks)


def sources_hook(where: Path, log: Path) -> str:
    """A SessionStart hook that notes each source and gives the model a line of context."""
    return script(
        where,
        "start",
        f"open({str(log)!r}, 'a').write(payload['source'] + '\\n'); print('On call: ann.')",
    )


async def receipts_of(pilot: Any, sender: Any, count: int = 1) -> list[tuple[Any, Any]]:
    got: list[tuple[Any, Any]] = []

    def arrived() -> bool:
        got.extend(sender.take_receipts())
        return len(got) >= count

    await wait_until(pilot, arrived)
    return got


async def test_a_refusing_relay_hook_and_the_senders_receipt(
    fake, make_config, app_factory, sender, env, short_dir
):
    refuse = script(
        short_dir,
        "refuse",
        "print('no tasks from ' + payload['sender']['name'], file=sys.stderr); sys.exit(2)",
    )
    user_hooks(env, {"RelayMessage": entry(refuse)})
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await relay_ready(pilot, app)
        sent = await relay_to(app, sender, "deploy it")
        assert sent.status == "accepted"  # the listener took it; the hook decides after
        ((receipt, _record),) = await receipts_of(pilot, sender)
        await wait_until(pilot, lambda: "was refused by a hook" in transcript_text(app))
        await idle(pilot, app)
        assert app.relay.held() == []
    assert receipt.in_reply_to == sent.message_id and receipt.outcome == "refused"
    assert "no tasks from sender-project" in receipt.summary
    assert fake.chat_bodies == []  # the model never saw it


async def test_a_hanging_relay_hook_holds_the_message_until_the_user_runs_it(
    fake, make_config, app_factory, sender, env, short_dir
):
    hang = script(short_dir, "hang", "time.sleep(600)")
    user_hooks(env, {"RelayMessage": [{"hooks": [{"command": hang, "timeout": 1}]}]})
    fake.enqueue(Turn.text("done it"))
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await relay_ready(pilot, app)
        await relay_to(app, sender, "held task")
        await wait_until(pilot, lambda: "is held for you" in transcript_text(app))
        await idle(pilot, app)
        held = app.relay.held()
        assert [m.envelope.body for m in held if isinstance(m, ClaimedMessage)] == ["held task"]
        assert "did not finish in time" in transcript_text(app)
        assert fake.chat_bodies == []
        # The user runs it: the hook is not asked again (it would hang again).
        await submit(pilot, app, "/agents run 1")
        await wait_until(pilot, lambda: len(fake.chat_bodies) == 1)
        await idle(pilot, app)
        ((receipt, _),) = await receipts_of(pilot, sender)
    assert "held task" in json.dumps(fake.chat_bodies[0]["messages"])
    assert receipt.outcome == "completed"


async def test_project_hooks_ask_once_and_a_changed_entry_asks_again(
    fake, make_config, app_factory, workspace, short_dir
):
    log = short_dir / "sources.log"
    command = sources_hook(short_dir, log)
    write_settings(project_settings(workspace), {"SessionStart": entry(command)})
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        assert command in app.screen.request.command
        await answer(pilot, app, "n")
        await wait_until(pilot, lambda: "Project hooks refused" in transcript_text(app))
        fake.enqueue(Turn.text("hi"))
        await submit(pilot, app, "hello")
        await idle(pilot, app)
    assert not log.exists()  # refused: never run
    assert "On call" not in json.dumps(fake.chat_bodies)

    again = app_factory(make_config())  # the no is kept: no dialog, nothing runs
    async with again.run_test(size=SIZE) as pilot:
        fake.enqueue(Turn.text("hi"))
        await submit(pilot, again, "hello")
        await idle(pilot, again)
        assert not isinstance(again.screen, ApprovalScreen)
    assert not log.exists()

    # The repository changes the entry: asked again; this time the user says yes.
    write_settings(project_settings(workspace), {"SessionStart": entry(command, "", 20)})
    third = app_factory(make_config())
    async with third.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(third.screen, ApprovalScreen))
        await answer(pilot, third, "y")
        await wait_until(pilot, log.exists)
    assert log.read_text() == "startup\n"


async def test_session_start_fires_at_start_clear_and_resume(
    fake, make_config, app_factory, env, short_dir
):
    log = short_dir / "sources.log"
    user_hooks(env, {"SessionStart": entry(sources_hook(short_dir, log))})
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        fake.enqueue(Turn.text("noted"))
        await submit(pilot, app, "who is on call?")
        await idle(pilot, app)
        assert "[hook] On call: ann." in [m["content"] for m in fake.chat_bodies[0]["messages"]]
        first = app.session_id
        await submit(pilot, app, "/clear")
        await wait_until(pilot, lambda: log.read_text().count("\n") == 2)
    resumed = app_factory(make_config(), resume=first)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: log.read_text().count("\n") == 3)
    assert log.read_text().split() == ["startup", "clear", "resume"]


async def test_session_start_fires_after_compaction(fake, make_config, app_factory, env, short_dir):
    log = short_dir / "sources.log"
    user_hooks(env, {"SessionStart": entry(sources_hook(short_dir, log), "compact")})
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await converse(pilot, app, fake, "one", "two", "three")
        assert not log.exists()  # the matcher: only a compaction's session start
        fake.enqueue(Turn.text("SUMMARY: three requests."), Turn.text("next"))
        await submit(pilot, app, "/compact")
        await wait_until(pilot, lambda: "Compacted:" in transcript_text(app))
        await idle(pilot, app)
        await submit(pilot, app, "go on")
        await idle(pilot, app)
    assert log.read_text() == "compact\n"
    sent = [m["content"] for m in fake.chat_bodies[-1]["messages"]]
    assert sent[-2:] == ["[hook] On call: ann.", "go on"]


async def test_a_terminal_too_small_for_the_consent_saves_no_refusal(
    fake, make_config, app_factory, workspace, short_dir
):
    """Too small to show the project's hooks: nothing is answered, so nothing is kept, and
    the next session (a larger terminal) asks."""
    log = short_dir / "sources.log"
    command = sources_hook(short_dir, log)
    write_settings(project_settings(workspace), {"SessionStart": entry(command)})
    small = app_factory(make_config())
    async with small.run_test(size=(36, 9)) as pilot:
        await wait_until(pilot, lambda: "consent could not be asked" in transcript_text(small))
        assert "too small for the consent dialog" in transcript_text(small)
        assert not isinstance(small.screen, ApprovalScreen)
    assert not log.exists()
    consent = Path(make_config().home) / "hook-consent.json"
    assert not consent.exists() or "refused" not in consent.read_text()

    large = app_factory(make_config())
    async with large.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(large.screen, ApprovalScreen))
        assert command in large.screen.request.command
        await answer(pilot, large, "y")
        await wait_until(pilot, log.exists)
    assert log.read_text() == "startup\n"


async def test_a_message_a_hook_refused_costs_no_turn_without_the_user(
    fake, make_config, app_factory, sender, env, short_dir
):
    """With room for one relayed turn without the user, a refused message does not use it:
    the next allowed message still runs (as in an editor's session, zcoder.acp.relay)."""
    refuse = script(
        short_dir,
        "refuse-some",
        "body = payload['message']\n"
        "if 'refuse' in body: print('not this one', file=sys.stderr); sys.exit(2)",
    )
    user_hooks(env, {"RelayMessage": entry(refuse)})
    fake.enqueue(Turn.text("ran it"))
    app = app_factory(make_config(env={"ZCODER_RELAY_MAX_AUTO_TURNS": "1"}))
    async with app.run_test(size=SIZE) as pilot:
        await relay_ready(pilot, app)
        for body in ("refuse me", "also refuse me", "run me"):
            await relay_to(app, sender, body)
        got = await receipts_of(pilot, sender, 3)
        await idle(pilot, app)
    assert sorted(receipt.outcome for receipt, _ in got) == ["completed", "refused", "refused"]
    assert len(fake.chat_bodies) == 1 and "run me" in json.dumps(fake.chat_bodies[0])
