"""Active skills: read from the model history, carried over compaction, back on resume."""

from __future__ import annotations

from pathlib import Path

from tests.agent.support import Harness
from tests.fixtures.fake_ollama import Turn, call
from zcoder.agent.compaction import SUMMARY_OPEN, render_history, split_history
from zcoder.model import user_message
from zcoder.skills import Skill, SkillSet, install_skills, parse_skill
from zcoder.skills.active import (
    active_skills,
    carried_records,
    is_skill_record,
    user_activation,
)

BODY = "Always run scripts/check.sh before a deploy."


def a_skill(tmp_path: Path, name: str = "deploy-preview", body: str = BODY) -> Skill:
    text = f"---\nname: {name}\ndescription: Deploy a preview.\n---\n{body}\n"
    return parse_skill(text, tmp_path / name, "project")


def tool_result(content: str, name: str = "activate_skill") -> dict[str, str]:
    return {"role": "tool", "content": content, "tool_call_id": "c1", "tool_name": name}


def test_active_skills_come_from_tool_results_and_user_records(tmp_path: Path) -> None:
    first = a_skill(tmp_path, "alpha")
    second = a_skill(tmp_path, "beta")
    messages = [
        user_message("do it"),
        tool_result('<skill name="alpha" folder="/x">\nbody\n</skill>'),
        tool_result("no skill named 'gamma'; the skills are: alpha"),  # a failed activation
        tool_result('<skill name="delta" folder="/x">', name="read_skill_file"),
        user_message(user_activation(second, 10_000)),
        user_message(user_activation(first, 10_000)),
        user_message('<skill name="typed">: the user typed this, it activates nothing'),
    ]
    assert active_skills(messages) == ["alpha", "beta"]
    assert is_skill_record(messages[4]) and not is_skill_record(messages[1])
    assert not is_skill_record(messages[6])


def test_compaction_carries_what_the_summary_would_drop(tmp_path: Path) -> None:
    skill = a_skill(tmp_path, "alpha")
    older = [
        user_message("first"),
        user_message(user_activation(skill, 10_000)),
        tool_result('<skill name="beta" folder="/x">\nbeta body\n</skill>'),
    ]
    kept = [user_message("second"), tool_result('<skill name="beta" folder="/x">\nagain')]
    [carried] = carried_records(older, kept)  # beta is active in what is kept
    assert carried["content"].startswith("[zcoder] A skill activated before the summary")
    assert BODY in carried["content"]
    assert active_skills([carried]) == ["alpha"]
    # Carried again by a later compaction, unchanged.
    assert carried_records([carried], [user_message("third")])[0]["content"].endswith(
        carried["content"].partition("\n")[2]
    )


def test_only_a_summary_and_carried_skills_are_not_compacted_again(tmp_path: Path) -> None:
    skill = a_skill(tmp_path)
    summary = user_message(f"{SUMMARY_OPEN}\nsummary")
    carried = carried_records([user_message(user_activation(skill, 10_000))], [])
    messages = [summary, *carried, user_message("one"), user_message("two")]
    assert split_history(messages) == ([], messages)


async def test_a_skill_stays_active_through_compaction_and_resume(
    harness: Harness, tmp_path: Path
) -> None:
    skills = SkillSet({"deploy-preview": a_skill(tmp_path)})
    install_skills(harness.agent.registry, skills)
    server = harness.server
    server.enqueue(
        Turn.tool_calls(call("activate_skill", {"name": "deploy-preview"})),
        Turn.text("activated"),
    )
    await harness.agent.run_user_turn("deploy a preview")
    for word in ("two", "three"):
        server.enqueue(Turn.text(f"answer {word}"))
        await harness.agent.run_user_turn(f"request {word}")
    server.enqueue(Turn.text("SUMMARY: a preview was deployed."))
    result = await harness.agent.compact()
    assert result.compacted
    messages = harness.agent.messages
    assert messages[0]["content"].startswith(SUMMARY_OPEN)
    assert BODY in messages[1]["content"]
    assert active_skills(messages) == ["deploy-preview"]

    # Resumed: the saved history holds the skill; the next request carries its body.
    data = harness.load()
    harness.agent.use_session(harness.session_id, data.messages, data.user_ledger)
    assert active_skills(harness.agent.messages) == ["deploy-preview"]
    server.enqueue(Turn.text("going on"))
    await harness.agent.run_user_turn("go on")
    sent = harness.bodies()[-1]["messages"]
    assert any(BODY in str(m.get("content")) for m in sent)
    # What the summary replaced was handed to the summariser as usual.
    assert "deploy a preview" in harness.bodies()[-2]["messages"][1]["content"]


def test_the_summariser_is_told_a_skill_record_is_kept(tmp_path: Path) -> None:
    record = user_message(user_activation(a_skill(tmp_path), 10_000))
    rendered = render_history([user_message("go"), record])
    assert "## SKILL INSTRUCTIONS (kept as they are after the summary)" in rendered
    assert "## USER\ngo" in rendered
