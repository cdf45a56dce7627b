"""Arguments filled into a command's prompt, and what a typed prompt invokes."""

from __future__ import annotations

from pathlib import Path

import pytest

from zcoder.commands import CommandSet, UserCommands, parse_command
from zcoder.commands.expand import expand
from zcoder.skills import SkillSet, parse_skill


@pytest.mark.parametrize(
    ("body", "arguments", "expected"),
    [
        ("Fix issue $ARGUMENTS now", "#12 and #13", "Fix issue #12 and #13 now"),
        ("A=$1 B=$2 C=$3", 'one "two words"', "A=one B=two words C="),
        ("$2-$1", "a b", "b-a"),
        ("Tenth: $10", " ".join(str(n) for n in range(1, 11)), "Tenth: 10"),
        ("Plain prompt", "", "Plain prompt"),
        ("Plain prompt", "extra words", "Plain prompt\n\nARGUMENTS: extra words"),
        ("Costs $0 and $ money, $1", "x", "Costs $0 and $ money, x"),
        ("first=$1", 'unbalanced "quote here', "first=unbalanced"),
    ],
)
def test_expand(body: str, arguments: str, expected: str) -> None:
    assert expand(body, arguments) == expected


def test_arguments_are_put_in_once_never_expanded_again() -> None:
    assert expand("[$ARGUMENTS] [$1]", "$1 $ARGUMENTS") == "[$1 $ARGUMENTS] [$1]"


def skill_set(tmp_path: Path, *names: str, hidden: str = "") -> SkillSet:
    found = SkillSet()
    for name in (*names, *([hidden] if hidden else [])):
        extra = "user-invocable: false\n" if name == hidden else ""
        text = f"---\nname: {name}\ndescription: does {name}\n{extra}---\nBody of {name}.\n"
        found.skills[name] = parse_skill(text, tmp_path / name, "project")
    return found


def command_set(tmp_path: Path, **bodies: str) -> CommandSet:
    found = CommandSet()
    for name, body in bodies.items():
        path = tmp_path / f"{name}.md"
        found.commands[name] = parse_command(body, name=name, path=path, source="project")
    return found


@pytest.fixture
def user(tmp_path: Path) -> UserCommands:
    return UserCommands.build(
        skill_set(tmp_path, "deploy", "review", "help", hidden="secret"),
        command_set(tmp_path, review="Review $1", fix="Fix $ARGUMENTS", compact="x"),
        frozenset({"help", "compact", "skill", "skills"}),
    )


def test_built_ins_win_and_are_said_to(user: UserCommands) -> None:
    assert "compact" not in user.custom
    assert "help" not in user.skill_commands
    assert any("/compact" in r and "zcoder's own" in r for r in user.refused)
    assert any("skill help" in r and "$help" in r for r in user.refused)


def test_a_skill_shadows_a_command_of_its_name(user: UserCommands) -> None:
    assert "review" in user.skill_commands and "review" not in user.custom
    assert any("shadowed by the skill review" in p for p in user.problems())


def test_a_custom_command_expands_to_its_prompt(user: UserCommands) -> None:
    invocation = user.resolve("/fix the flaky test")
    assert invocation is not None and invocation.command is not None
    assert invocation.prompt == "Fix the flaky test"
    assert invocation.skill is None
    assert "/fix the flaky test" in invocation.announcement()
    assert "custom command /fix" in invocation.announcement()


def test_names_resolve_case_blind_like_the_registry(user: UserCommands) -> None:
    invocation = user.resolve("/FIX it")
    assert invocation is not None and invocation.prompt == "Fix it"


@pytest.mark.parametrize(
    ("typed", "skill", "prompt"),
    [
        ("$deploy", "deploy", ""),
        ("$deploy ship the preview", "deploy", "ship the preview"),
        ("$deploy\nmulti\nline", "deploy", "multi\nline"),
        ("/deploy ship it", "deploy", "ship it"),
        ("/skill deploy ship it", "deploy", "ship it"),
        ("/skill help", "help", ""),  # not a command, still a skill
        ("/skill deploy\nline two", "deploy", "line two"),
        ("/skill secret do it", "secret", "do it"),
    ],
)
def test_skills_are_invoked(user: UserCommands, typed: str, skill: str, prompt: str) -> None:
    invocation = user.resolve(typed)
    assert invocation is not None and invocation.skill is not None
    assert (invocation.skill.name, invocation.prompt) == (skill, prompt)


@pytest.mark.parametrize(
    "typed",
    [
        "$HOME is unset",
        "$deployment is not a skill",
        "$nothere",
        "$secret",  # user-invocable: false
        "/secret",
        "/unknown thing",
        "/skill nothere",
        "plain words /fix",
        "/help",
        "/compact",
    ],
)
def test_everything_else_is_an_ordinary_prompt(user: UserCommands, typed: str) -> None:
    assert user.resolve(typed) is None
