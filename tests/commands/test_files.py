"""Custom command files: parsing, where they are found, and files meant to do harm."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fixtures.workspace import new_dir
from tests.skills.test_skills import home, repo
from zcoder.commands import CommandFileError, discover_commands, parse_command
from zcoder.commands.files import (
    MAX_COMMAND_FILE_BYTES,
    MAX_DEPTH,
    MAX_FILES_PER_PLACE,
    command_name,
    command_places,
)


@pytest.fixture
def zhome(tmp_path: Path) -> Path:
    return new_dir(tmp_path / "zhome")


__all__ = ["home", "repo"]  # the skills' fixtures: a repository and a home


def write(folder: Path, relative: str, text: str | bytes) -> Path:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def problems_of(found: object) -> dict[str, str]:
    return {p.path.name: p.reason for p in found.problems}  # type: ignore[attr-defined]


# -- parsing ------------------------------------------------------------------------------


def test_front_matter_gives_description_and_hint(tmp_path: Path) -> None:
    text = (
        "---\ndescription: Review a pull request\nargument-hint: [pr-number]\n"
        "allowed-tools: Bash(git:*)\nmodel: opus\n---\nReview PR $1 carefully.\n"
    )
    command = parse_command(text, name="review", path=tmp_path / "r.md", source="project")
    assert (command.description, command.argument_hint) == ("Review a pull request", "[pr-number]")
    assert command.body == "Review PR $1 carefully."


def test_without_front_matter_the_first_line_is_the_description(tmp_path: Path) -> None:
    text = "\n# Explain the code\n\nExplain $ARGUMENTS simply.\n"
    command = parse_command(text, name="explain", path=tmp_path / "e.md", source="user")
    assert command.description == "Explain the code"
    assert command.body.endswith("Explain $ARGUMENTS simply.")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("---\ndescription: [unclosed\n---\nbody\n", "not valid YAML"),
        ("---\n- a\n---\nbody\n", "not a YAML mapping"),
        ("---\ndescription: x\n", "no closing"),
        ("---\ndescription: {a: 1}\n---\nbody\n", "must be text"),
        ("---\ndescription: !!python/object/apply:os.getcwd []\n---\nbody\n", "not valid YAML"),
        ("---\ndescription: fine\n---\n\n  \n", "body is empty"),
        ("", "body is empty"),
    ],
)
def test_a_bad_file_says_what_is_wrong(tmp_path: Path, text: str, reason: str) -> None:
    with pytest.raises(CommandFileError, match=reason):
        parse_command(text, name="x", path=tmp_path / "x.md", source="project")


def test_a_long_description_is_bounded(tmp_path: Path) -> None:
    text = "---\ndescription: " + "word " * 500 + "\n---\nbody\n"
    command = parse_command(text, name="x", path=tmp_path / "x.md", source="project")
    assert len(command.description) <= 300


@pytest.mark.parametrize(
    "file_name",
    [
        "has space.md",
        "semi;colon.md",
        "dot.ted.md",
        "-lead.md",
        "ünïcode.md",
        "tab\there.md",
        "esc\x1b[31m.md",
        "a" * 65 + ".md",
        ".md",
    ],
)
def test_odd_names_are_refused(file_name: str) -> None:
    with pytest.raises(CommandFileError, match="not letters, digits"):
        command_name(file_name)


def test_names_are_lowercased() -> None:
    assert command_name("Review_PR-2.md") == "review_pr-2"


# -- where they are found -----------------------------------------------------------------


def test_places_go_from_the_workspace_up_to_the_repository_then_the_user(
    repo: Path, zhome: Path, home: Path
) -> None:
    workspace = repo / "pkg"
    workspace.mkdir()
    places = [(p.path, p.source, p.read_only) for p in command_places(workspace, zhome, home)]
    assert places == [
        (workspace / ".zcoder" / "commands", "project", False),
        (workspace / ".claude" / "commands", "claude (project)", True),
        (repo / ".zcoder" / "commands", "project", False),
        (repo / ".claude" / "commands", "claude (project)", True),
        (zhome / "commands", "user", False),
        (home / ".claude" / "commands", "claude (user)", True),
    ]


def test_nearer_wins_and_the_shadowed_one_is_listed(repo: Path, zhome: Path, home: Path) -> None:
    workspace = repo / "pkg"
    write(workspace / ".zcoder" / "commands", "review.md", "near")
    write(repo / ".claude" / "commands", "review.md", "far")
    write(zhome / "commands", "review.md", "user")
    write(home / ".claude" / "commands", "mine.md", "claude user")
    found = discover_commands(workspace, zhome, home)
    assert found.names() == ["mine", "review"]
    assert found.commands["review"].body == "near"
    assert found.commands["mine"].source == "claude (user)"
    assert found.commands["mine"].read_only
    shadowed = [p for p in found.problems if "shadowed" in p.reason]
    assert {p.path for p in shadowed} == {
        repo / ".claude" / "commands" / "review.md",
        zhome / "commands" / "review.md",
    }


def test_a_subfolder_is_a_namespace_not_part_of_the_name(
    repo: Path, zhome: Path, home: Path
) -> None:
    write(repo / ".zcoder" / "commands", "frontend/component.md", "Make a component $1")
    found = discover_commands(repo, zhome, home)
    command = found.commands["component"]
    assert (command.namespace, command.label()) == ("frontend", "project:frontend")


def test_outside_a_repository_only_the_workspace_is_searched(
    tmp_path: Path, zhome: Path, home: Path
) -> None:
    write(tmp_path / ".zcoder" / "commands", "above.md", "x")
    workspace = tmp_path / "plain"
    write(workspace / ".zcoder" / "commands", "here.md", "x")
    assert discover_commands(workspace, zhome, home).names() == ["here"]


# -- files meant to do harm ---------------------------------------------------------------


def test_a_huge_file_is_refused_unread(repo: Path, zhome: Path, home: Path) -> None:
    write(repo / ".zcoder" / "commands", "huge.md", "x" * (MAX_COMMAND_FILE_BYTES + 1))
    write(repo / ".zcoder" / "commands", "fine.md", "x" * MAX_COMMAND_FILE_BYTES)
    found = discover_commands(repo, zhome, home)
    assert found.names() == ["fine"]
    assert "larger than 128 KiB" in problems_of(found)["huge.md"]


def test_binary_and_non_utf8_files_are_refused(repo: Path, zhome: Path, home: Path) -> None:
    write(repo / ".zcoder" / "commands", "bin.md", b"\x7fELF\x00\x00\x01")
    write(repo / ".zcoder" / "commands", "latin.md", "caf\xe9".encode("latin-1"))
    found = discover_commands(repo, zhome, home)
    assert found.names() == []
    reasons = problems_of(found)
    assert "binary" in reasons["bin.md"]
    assert "not UTF-8" in reasons["latin.md"]


def test_a_symlink_out_of_the_folder_is_refused(
    tmp_path: Path, repo: Path, zhome: Path, home: Path
) -> None:
    secret = write(tmp_path / "secret", "id_rsa", "PRIVATE KEY")
    folder = repo / ".zcoder" / "commands"
    folder.mkdir(parents=True)
    (folder / "leak.md").symlink_to(secret)
    (folder / "up.md").symlink_to(Path("..") / ".." / ".." / "secret" / "id_rsa")
    write(folder, "real.md", "inside")
    (folder / "alias.md").symlink_to("real.md")  # a link that stays inside is fine
    outside_dir = tmp_path / "elsewhere"
    write(outside_dir, "sneaky.md", "PRIVATE")
    (folder / "linked").symlink_to(outside_dir, target_is_directory=True)
    found = discover_commands(repo, zhome, home)
    assert found.names() == ["alias", "real"]
    reasons = problems_of(found)
    assert "leads out of its folder" in reasons["leak.md"]
    assert "leads out of its folder" in reasons["up.md"]
    assert all("PRIVATE" not in c.body for c in found.commands.values())


def test_a_fifo_is_not_read(repo: Path, zhome: Path, home: Path) -> None:
    folder = repo / ".zcoder" / "commands"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "pipe.md")  # reading it would block forever
    found = discover_commands(repo, zhome, home)
    assert found.names() == []
    assert "named pipe" in problems_of(found)["pipe.md"]


def test_a_bad_file_does_not_stop_the_others(repo: Path, zhome: Path, home: Path) -> None:
    folder = repo / ".zcoder" / "commands"
    write(folder, "bad.md", "---\ndescription: [\n---\nx\n")
    write(folder, "odd name.md", "x")
    write(folder, "good.md", "good")
    write(folder, "notes.txt", "not a command")
    write(folder, ".hidden.md", "hidden")
    found = discover_commands(repo, zhome, home)
    assert found.names() == ["good"]
    assert set(problems_of(found)) == {"bad.md", "odd name.md"}


def test_the_scan_is_bounded(repo: Path, zhome: Path, home: Path) -> None:
    folder = repo / ".zcoder" / "commands"
    for index in range(MAX_FILES_PER_PLACE + 5):
        write(folder, f"c{index:04d}.md", "x")
    deep = "/".join(f"d{n}" for n in range(MAX_DEPTH + 2))
    write(folder, f"{deep}/deep.md", "too deep")
    found = discover_commands(repo, zhome, home)
    assert len(found.commands) == MAX_FILES_PER_PLACE
    assert "deep" not in found.commands
    assert any("the rest are left" in p.reason for p in found.problems)


def test_no_folders_no_commands(repo: Path, zhome: Path, home: Path) -> None:
    found = discover_commands(repo, zhome, home)
    assert (found.commands, found.problems) == ({}, [])


def test_a_bracketed_hint_is_taken_as_written(tmp_path: Path) -> None:
    """Claude Code's examples write hints YAML would read as a list, or refuse."""
    text = "---\nargument-hint: [pr-number] [priority]\ndescription: d\n---\nbody\n"
    command = parse_command(text, name="x", path=tmp_path / "x.md", source="project")
    assert command.argument_hint == "[pr-number] [priority]"


def test_controls_in_what_is_shown_are_escaped(tmp_path: Path) -> None:
    text = '---\ndescription: "red \\e[31m \\e]52;c;Zm9v\\a bidi \\u202e"\n---\nbody\n'
    command = parse_command(text, name="x", path=tmp_path / "x.md", source="project")
    assert not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in command.description)
    assert "\u202e" not in command.description
    assert "red" in command.description and "bidi" in command.description
