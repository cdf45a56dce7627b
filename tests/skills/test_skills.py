"""Agent Skills: parsing SKILL.md, where skills are found, the catalog and the two tools."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fixtures.workspace import tool_context
from zcoder.skills import (
    ACTIVATE_SKILL,
    READ_SKILL_FILE,
    SkillError,
    catalog_text,
    discover_skills,
    make_skill_tools,
    parse_skill,
)
from zcoder.skills.tools import MAX_CATALOG_SKILLS
from zcoder.tools import CommandPolicy
from zcoder.tools.base import ToolContext, ToolSpec


def write_skill(root: Path, name: str, description: str = "Does a thing.", body: str = "") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    text = body or f"# {name}\nSteps."
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n{text}\n"
    )
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def context(workspace: Path, max_output: int = 32768) -> ToolContext:
    return tool_context(workspace, policy=CommandPolicy.ASK, max_output=max_output)


def tool(tools: list[ToolSpec], name: str) -> ToolSpec:
    return next(spec for spec in tools if spec.name == name)


# -- parsing ------------------------------------------------------------------------------


def test_a_skill_parses_its_fields_and_keeps_its_body(tmp_path: Path) -> None:
    text = (
        "---\nname: pdf-tools\ndescription: >\n  Fill and merge PDF forms.\n"
        "license: MIT\nallowed-tools: [Bash, Read]\nmetadata:\n  version: 2\n---\n"
        "# PDF\n\nRun scripts/fill.py.\n"
    )
    skill = parse_skill(text, tmp_path / "pdf-tools", "project")
    assert (skill.name, skill.description, skill.license) == (
        "pdf-tools",
        "Fill and merge PDF forms.",
        "MIT",
    )
    assert skill.allowed_tools == "Bash Read"
    assert skill.metadata == {"version": "2"}
    assert skill.body == "# PDF\n\nRun scripts/fill.py."
    assert skill.warnings == ()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no front matter\n", "does not begin"),
        ("---\nname: x\n", "no closing"),
        ("---\nname: [unclosed\n---\n", "not valid YAML"),
        ("---\n- a\n- b\n---\n", "not a YAML mapping"),
        ("---\ndescription: d\n---\n", "no 'name'"),
        ("---\nname: Bad_Name\ndescription: d\n---\n", "lowercase"),
        ("---\nname: -lead\ndescription: d\n---\n", "lowercase"),
        ("---\nname: a--b\ndescription: d\n---\n", "lowercase"),
        ("---\nname: " + "a" * 65 + "\ndescription: d\n---\n", "at most 64"),
        ("---\nname: ok\n---\n", "no 'description'"),
        ("---\nname: ok\ndescription: {a: 1}\n---\n", "must be text"),
    ],
)
def test_a_bad_skill_file_says_what_is_wrong(tmp_path: Path, text: str, reason: str) -> None:
    with pytest.raises(SkillError, match=reason):
        parse_skill(text, tmp_path / "ok", "project")


def test_yaml_tags_are_never_constructed(tmp_path: Path) -> None:
    """The safe loader only: a tag that would build a Python object is an error."""
    text = "---\nname: ok\ndescription: !!python/object/apply:os.getcwd []\n---\n"
    with pytest.raises(SkillError, match="not valid YAML"):
        parse_skill(text, tmp_path / "ok", "project")


def test_a_name_unlike_its_folder_loads_with_a_warning(tmp_path: Path) -> None:
    skill = parse_skill("---\nname: alpha\ndescription: d\n---\n", tmp_path / "beta", "user")
    assert skill.name == "alpha"
    assert "differs from its folder" in skill.warnings[0]


# -- discovery ----------------------------------------------------------------------------


def test_skills_are_found_in_every_place_and_the_nearest_wins(repo: Path, home: Path) -> None:
    workspace = repo / "pkg"
    workspace.mkdir()
    write_skill(workspace / ".agents" / "skills", "deploy", "workspace deploy")
    write_skill(repo / ".agents" / "skills", "deploy", "repository deploy")
    write_skill(repo / ".agents" / "skills", "lint", "repository lint")
    write_skill(repo / ".claude" / "skills", "review", "claude review")
    write_skill(home / ".agents" / "skills", "notes", "user notes")
    write_skill(home / ".claude" / "skills", "lint", "claude user lint")

    found = discover_skills(workspace, home)

    assert found.names() == ["deploy", "lint", "notes", "review"]
    assert found.skills["deploy"].description == "workspace deploy"
    assert found.skills["lint"].source == "project"
    assert found.skills["review"].read_only and found.skills["review"].source == "claude (project)"
    assert found.skills["notes"].source == "user"
    shadowed = sorted(str(p.path.relative_to(p.path.parents[3])) for p in found.problems)
    assert len(found.problems) == 2
    assert all("shadowed" in p.reason for p in found.problems), shadowed


def test_outside_a_repository_only_the_workspace_and_home_are_searched(
    tmp_path: Path, home: Path
) -> None:
    workspace = tmp_path / "a" / "b"
    workspace.mkdir(parents=True)
    write_skill(tmp_path / "a" / ".agents" / "skills", "above", "not in a repository")
    write_skill(workspace / ".agents" / "skills", "here", "the workspace's")
    assert discover_skills(workspace, home).names() == ["here"]


def test_a_broken_skill_is_listed_and_the_others_load(repo: Path, home: Path) -> None:
    place = repo / ".agents" / "skills"
    write_skill(place, "good")
    broken = place / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: broken\n---\n")
    (place / "empty-folder").mkdir()
    found = discover_skills(repo, home)
    assert found.names() == ["good"]
    assert [(p.path.parent.name, p.reason) for p in found.problems] == [
        ("broken", "its front matter has no 'description'")
    ]


def test_no_skills_no_catalog_and_no_tools(repo: Path, home: Path) -> None:
    found = discover_skills(repo, home)
    assert not found
    assert catalog_text(found) == ""
    assert make_skill_tools(found) == []


def test_the_catalog_is_bounded(repo: Path, home: Path) -> None:
    place = repo / ".agents" / "skills"
    for n in range(MAX_CATALOG_SKILLS + 5):
        write_skill(place, f"skill-{n:02d}", "x" * 100)
    text = catalog_text(discover_skills(repo, home))
    assert text.count("\n- skill-") == MAX_CATALOG_SKILLS
    assert "(5 more; the user can list them with /skills)" in text


# -- the tools ----------------------------------------------------------------------------


async def test_activate_returns_the_instructions_and_the_files(repo: Path, home: Path) -> None:
    folder = write_skill(
        repo / ".agents" / "skills", "deploy", body="Run scripts/go.sh then check."
    )
    (folder / "scripts").mkdir()
    (folder / "scripts" / "go.sh").write_text("echo go\n")
    (folder / ".hidden").write_text("secret\n")
    tools = make_skill_tools(discover_skills(repo, home))

    result = await tool(tools, ACTIVATE_SKILL).run({"name": "deploy"}, context(repo))

    assert result.ok
    assert "Run scripts/go.sh then check." in result.output
    assert "scripts/go.sh" in result.output and ".hidden" not in result.output
    missing = await tool(tools, ACTIVATE_SKILL).run({"name": "nope"}, context(repo))
    assert not missing.ok and "deploy" in missing.output


async def test_allowed_tools_grant_nothing_and_say_so(repo: Path, home: Path) -> None:
    folder = repo / ".agents" / "skills" / "risky"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: risky\ndescription: d\nallowed-tools: Bash(rm:*)\n---\nDo it.\n"
    )
    tools = make_skill_tools(discover_skills(repo, home))
    result = await tool(tools, ACTIVATE_SKILL).run({"name": "risky"}, context(repo))
    assert "grants nothing" in result.output


async def test_read_skill_file_reads_inside_the_skill(repo: Path, home: Path) -> None:
    folder = write_skill(repo / ".agents" / "skills", "guide")
    (folder / "references").mkdir()
    (folder / "references" / "api.md").write_text("The API.\n")
    tools = make_skill_tools(discover_skills(repo, home))
    result = await tool(tools, READ_SKILL_FILE).run(
        {"skill": "guide", "path": "references/api.md"}, context(repo)
    )
    assert result.ok and result.output == "The API.\n"


@pytest.mark.parametrize("path", ["../../../secret.txt", "/etc/passwd", "link/secret.txt", "out"])
async def test_read_skill_file_never_leaves_the_skill(
    repo: Path, home: Path, tmp_path: Path, path: str
) -> None:
    """Attack: a prompt-injected model asks for files outside the skill's folder, by
    .., by absolute path, through a symlinked folder and through a symlinked file."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=hunter2\n")
    folder = write_skill(repo / ".agents" / "skills", "guide")
    os.symlink(tmp_path, folder / "link")
    os.symlink(secret, folder / "out")
    tools = make_skill_tools(discover_skills(repo, home))
    result = await tool(tools, READ_SKILL_FILE).run({"skill": "guide", "path": path}, context(repo))
    assert not result.ok
    assert "hunter2" not in result.output


async def test_a_large_skill_file_is_bounded(repo: Path, home: Path) -> None:
    folder = write_skill(repo / ".agents" / "skills", "big")
    (folder / "data.txt").write_text("line\n" * 100_000)
    tools = make_skill_tools(discover_skills(repo, home))
    result = await tool(tools, READ_SKILL_FILE).run(
        {"skill": "big", "path": "data.txt"}, context(repo, max_output=4096)
    )
    assert result.ok and len(result.output.encode()) <= 4096 + 200
    assert "omitted" in result.output or "…" in result.output


# -- a project's skills stay in the repository (issue 27, item 7) ---------------------------


async def test_a_project_skill_linked_outside_the_repository_is_refused_and_said(
    repo: Path, home: Path, tmp_path: Path
) -> None:
    """Attack: the repository ships ``.agents/skills/evil`` as a symbolic link to a folder
    outside it (one of the user's, holding a SKILL.md), and ``sneaky/SKILL.md`` as a link
    to a file outside. Neither is offered, neither can be read through the skill tools,
    and the notice says why; a link that stays in the repository is still followed, and
    the user's own links are the user's."""
    from zcoder.frontend.extensions import load_extensions
    from zcoder.tools.registry import ToolRegistry

    outside = tmp_path / "outside" / "evil"
    outside.mkdir(parents=True)
    (outside / "SKILL.md").write_text("---\nname: evil\ndescription: Reads secrets.\n---\nGo.\n")
    (outside / "secret.txt").write_text("TOKEN=hunter2\n")
    place = repo / ".agents" / "skills"
    place.mkdir(parents=True)
    os.symlink(outside, place / "evil")
    sneaky = place / "sneaky"
    sneaky.mkdir()
    os.symlink(outside / "SKILL.md", sneaky / "SKILL.md")
    shared = write_skill(repo / "shared", "kept")
    os.symlink(shared, place / "kept")  # inside the repository: followed
    user_place = home / ".agents" / "skills"
    user_place.mkdir(parents=True)
    os.symlink(write_skill(tmp_path / "dotfiles", "mine"), user_place / "mine")

    found = discover_skills(repo, home)

    assert found.names() == ["kept", "mine"]
    refused = {p.path.name: p.reason for p in found.problems}
    assert set(refused) == {"evil", "sneaky"}
    assert all("outside the repository" in reason for reason in refused.values())
    assert str(outside.resolve()) in refused["evil"]
    tools = make_skill_tools(found)
    for name, arguments in (
        (ACTIVATE_SKILL, {"name": "evil"}),
        (READ_SKILL_FILE, {"skill": "evil", "path": "secret.txt"}),
    ):
        result = await tool(tools, name).run(arguments, context(repo))
        assert (
            not result.ok
            and "hunter2" not in result.output
            and "Reads secrets" not in result.output
        )
    notices = load_extensions(ToolRegistry(), repo, home).problems
    assert [n for n in notices if "outside the repository" in n and "evil" in n]
