"""Custom commands and skills in the real app: /help, Tab, running one, /skills, /skill, $NAME.

The fake model records every request: each test asserts what reached the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.fake_ollama import Turn
from tests.tui.conftest import entries, idle, submit, transcript_text, wait_until
from zcoder.skills.active import active_skills
from zcoder.slash.registry import commands

pytestmark = pytest.mark.timeout(60)
SIZE = (140, 45)
REVIEW = (
    "---\ndescription: Review a pull request\nargument-hint: [pr-number] [priority]\n---\n"
    "Review pull request #$1 with priority $2. All of it: $ARGUMENTS\n"
)
SKILL_BODY = "Run scripts/check.sh first, then deploy the preview."


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def add_skill(workspace: Path, name: str = "deploy-preview") -> None:
    write(
        workspace / ".agents" / "skills" / name / "SKILL.md",
        f"---\nname: {name}\ndescription: Deploy a preview of the site.\n---\n{SKILL_BODY}\n",
    )


def last_user_message(fake: Any) -> str:
    return str(fake.chat_bodies[-1]["messages"][-1]["content"])


async def started(pilot: Any, app: Any) -> None:
    await wait_until(pilot, lambda: app.agent is not None)
    await pilot.pause()


async def test_a_custom_command_is_in_help_completes_and_runs(
    fake, make_config, app_factory, workspace
):
    write(workspace / ".zcoder" / "commands" / "review.md", REVIEW)
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, app)
        await submit(pilot, app, "/help")
        await wait_until(pilot, lambda: "Custom commands and skills" in transcript_text(app))
        help_text = transcript_text(app)
        assert "/review [pr-number] [priority]" in help_text
        assert "Review a pull request (project)" in help_text
        # Tab completes it like zcoder's own.
        app.prompt_input.clear()
        await pilot.press("slash", "r", "e", "v")
        await pilot.press("tab")
        assert app.prompt_input.text == "/review "
        await pilot.press("4", "2", "space", "h", "i", "g", "h", "enter")
        fake.enqueue(Turn.text("Reviewed."))
        await wait_until(pilot, lambda: bool(fake.chat_bodies))
        await idle(pilot, app)
        expanded = "Review pull request #42 with priority high. All of it: 42 high"
        assert last_user_message(fake) == expanded
        text = transcript_text(app)
        assert "/review 42 high → the prompt of the custom command /review" in text
        assert expanded in [e.plain.splitlines()[-1] for e in entries(app, "user")]
        assert app.agent is not None and app.agent.user_ledger[-1] == expanded


async def test_a_command_named_like_a_built_in_is_refused(
    fake, make_config, app_factory, workspace
):
    write(workspace / ".zcoder" / "commands" / "help.md", "Say that help is overridden.")
    write(workspace / ".claude" / "commands" / "bad name.md", "x")
    write(workspace / ".zcoder" / "commands" / "tidy.md", "Tidy up.")
    write(workspace / ".claude" / "commands" / "tidy.md", "Claude's tidy.")
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, app)
        await wait_until(pilot, lambda: "was not added" in transcript_text(app))
        assert "/help is zcoder's own command" in transcript_text(app)
        assert "bad name.md" in transcript_text(app)
        assert "shadowed" not in transcript_text(app)  # by choice: only /skills says so
        await submit(pilot, app, "/skills")
        await wait_until(pilot, lambda: "Custom commands not added:" in transcript_text(app))
        assert "shadowed by /tidy" in transcript_text(app)
        await submit(pilot, app, "/help")
        await wait_until(pilot, lambda: "Commands:" in transcript_text(app))
        await idle(pilot, app)
    assert fake.chat_bodies == []  # /help stayed zcoder's: nothing went to the model
    assert not any(c.extension for c in commands() if c.name == "/help")


async def test_skills_lists_activates_and_dollar_name(fake, make_config, app_factory, workspace):
    add_skill(workspace)
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, app)
        await submit(pilot, app, "/skills")
        await wait_until(pilot, lambda: "Skills (* active)" in transcript_text(app))
        assert "    deploy-preview  project  " in transcript_text(app)
        # $NAME: the skill first, then the rest of the prompt.
        fake.enqueue(Turn.text("Deployed."))
        await submit(pilot, app, "$deploy-preview ship it")
        await wait_until(pilot, lambda: bool(fake.chat_bodies))
        await idle(pilot, app)
        sent = fake.chat_bodies[-1]["messages"]
        assert sent[-1]["content"] == "ship it"
        assert SKILL_BODY in sent[-2]["content"]
        assert sent[-2]["content"].startswith("[zcoder] The user activated the skill")
        assert "Skill deploy-preview is active" in transcript_text(app)
        assert app.agent is not None
        assert active_skills(app.agent.messages) == ["deploy-preview"]
        await submit(pilot, app, "/skills")
        await wait_until(pilot, lambda: "  * deploy-preview" in transcript_text(app))
        # Again: already active, no second copy of its instructions.
        await submit(pilot, app, "/skill deploy-preview")
        await wait_until(pilot, lambda: "already active" in transcript_text(app))
        await idle(pilot, app)
        records = [m for m in app.agent.messages if SKILL_BODY in str(m.get("content"))]
        assert len(records) == 1
    assert len(fake.chat_bodies) == 1


async def test_skill_command_and_slash_name_activate_without_a_request(
    fake, make_config, app_factory, workspace
):
    add_skill(workspace)
    add_skill(workspace, "lint-all")
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, app)
        await submit(pilot, app, "/skill deploy-preview")
        await wait_until(pilot, lambda: "Skill deploy-preview is active" in transcript_text(app))
        await submit(pilot, app, "/skill nothere")
        await wait_until(pilot, lambda: "no skill named 'nothere'" in transcript_text(app))
        fake.enqueue(Turn.text("Linted."))
        await submit(pilot, app, "/lint-all the src folder")
        await wait_until(pilot, lambda: bool(fake.chat_bodies))
        await idle(pilot, app)
        assert app.agent is not None
        assert active_skills(app.agent.messages) == ["deploy-preview", "lint-all"]
    assert last_user_message(fake) == "the src folder"


async def test_a_command_typed_during_a_turn_waits_in_the_queue(
    fake, make_config, app_factory, workspace
):
    write(workspace / ".zcoder" / "commands" / "again.md", "Do it again: $ARGUMENTS")
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, app)
        fake.enqueue(Turn.stall(), Turn.text("second"))
        await submit(pilot, app, "first")
        await wait_until(pilot, lambda: app.busy and bool(fake.chat_bodies))
        await submit(pilot, app, "/again twice")
        assert app.scheduler.prompts() == ("/again twice",)
        app.action_stop_turn()  # holds what waits
        await idle(pilot, app)
        await submit(pilot, app, "/queue resume")
        await wait_until(pilot, lambda: len(fake.chat_bodies) == 2)
        await idle(pilot, app)
    assert last_user_message(fake) == "Do it again: twice"


async def test_skills_reload_reads_new_commands(fake, make_config, app_factory, workspace):
    app = app_factory(make_config())
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, app)
        write(workspace / ".zcoder" / "commands" / "fresh.md", "Fresh prompt")
        add_skill(workspace)
        await submit(pilot, app, "/skills reload")
        await wait_until(
            pilot, lambda: "Reloaded: 1 skill, 1 custom command." in transcript_text(app)
        )
        assert commands().find("/fresh") is not None
        fake.enqueue(Turn.text("ok"))
        await submit(pilot, app, "$deploy-preview go")
        await wait_until(pilot, lambda: bool(fake.chat_bodies))
        await idle(pilot, app)
    system = fake.chat_bodies[-1]["messages"][0]["content"]
    assert "- deploy-preview: Deploy a preview of the site." in system
    assert "activate_skill" in {t["function"]["name"] for t in fake.chat_bodies[-1]["tools"]}


async def test_the_palette_offers_and_runs_a_custom_command(
    fake, make_config, app_factory, workspace
):
    from tests.tui.test_command_registry import PALETTE_WAIT, open_palette, palette_rows

    write(workspace / ".zcoder" / "commands" / "tidy-imports.md", "Sort the imports of src/.")
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, app)
        fake.enqueue(Turn.text("Sorted."))
        await open_palette(pilot, app, "tidy-imports")
        await wait_until(
            pilot,
            lambda: palette_rows(app) and palette_rows(app)[0] == "/tidy-imports",
            timeout=PALETTE_WAIT,
        )
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(fake.chat_bodies), timeout=PALETTE_WAIT)
        await idle(pilot, app)
    assert last_user_message(fake) == "Sort the imports of src/."
