"""What Tab offers: slash commands, their fixed arguments, and paths inside the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from zcoder.slash.registry import commands
from zcoder.tui.state.completion import Completions, command_words, complete

COMMANDS = commands().completion_entries()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src" / "zcoder").mkdir(parents=True)
    (root / "src" / "zcoder" / "app.py").write_text("")
    (root / "src" / "zebra.txt").write_text("")
    (root / "docs").mkdir()
    (root / "docs" / "usage guide.md").write_text("")
    (root / "docs" / 'say "hi".md').write_text("")
    (root / "hello.py").write_text("")
    (root / ".env").write_text("SECRET=1")
    (root / ".git").mkdir()
    return root


def texts(found: Completions | None) -> list[str]:
    """The texts offered; none is the same to the user as an empty list."""
    return [] if found is None else [c.text for c in found.candidates]


def path_texts(before: str, workspace: Path) -> list[str]:
    return texts(complete(before, first_row=False, workspace=workspace, commands=COMMANDS))


def test_command_names_and_fixed_arguments_come_from_the_help() -> None:
    words = command_words(COMMANDS)
    assert {"pause", "resume", "continue"} <= set(words["/agents"])
    assert words["/model"] == ()  # [NAME] is not a fixed word
    assert "/help" in words and "/quit" in words
    assert command_words(
        {
            "/a go [MORE]": "",
            "/a run N | discard N": "",
            "/a trust | block | forget NAME": "",
            "/b [NAME]": "",
            "/c NAME": "",
            "/d": "",
        }
    ) == {
        "/a": ("go", "run", "discard", "trust", "block", "forget"),
        "/b": (),
        "/c": (),
        "/d": (),
    }


HELP_ENTRIES = {
    "/help": "",
    "/compact [FOCUS]": "",
    "/context": "",
    "/model [NAME]": "",
    "/agents": "",
    "/agents pause": "",
    "/agents resume": "",
    "/agents continue": "",
}


def test_the_first_word_completes_as_a_slash_command(workspace: Path) -> None:
    def commands(before: str) -> list[str]:
        found = complete(before, first_row=True, workspace=workspace, commands=HELP_ENTRIES)
        return texts(found)

    assert commands("/he") == ["/help"]
    assert commands("/c") == ["/compact", "/context"]
    assert commands("/") == ["/agents", "/compact", "/context", "/help", "/model"]
    assert commands("/HE") == ["/help"]
    assert commands("/nothing") == []
    assert commands("/agents p") == ["pause"]
    assert commands("/agents ") == ["continue", "pause", "resume"]
    assert commands("/model ") == []  # a value to type, nothing fixed
    found = complete("/agents re", first_row=True, workspace=workspace, commands=HELP_ENTRIES)
    assert found is not None and found.start == len("/agents ") and found.word == "re"
    # Not on the first row, or after a word: a path, not a command.
    assert path_texts("/he", workspace) == []  # / is the file system's root: outside
    # With no workspace (the input alone), commands still complete; paths do not.
    found = complete("/he", first_row=True, workspace=None, commands=COMMANDS)
    assert texts(found) == ["/help", "/helpers"]
    assert complete("hel", first_row=False, workspace=None, commands=COMMANDS) is None


def test_paths_complete_relative_to_the_workspace(workspace: Path) -> None:
    assert path_texts("look at hel", workspace) == ["hello.py"]
    assert path_texts("look at s", workspace) == ["src/"]
    assert path_texts("look at src/", workspace) == ["src/zcoder/", "src/zebra.txt"]
    assert path_texts("look at src/zc", workspace) == ["src/zcoder/"]
    assert path_texts("see @src/zcoder/a", workspace) == ["@src/zcoder/app.py"]
    found = complete("look at src/z", first_row=False, workspace=workspace, commands=COMMANDS)
    assert found is not None and found.start == len("look at ") and found.word == "src/z"
    assert found.common_prefix() == "src/z"
    assert [c.label for c in found.candidates] == ["zcoder/", "zebra.txt"]
    assert [c.final for c in found.candidates] == [False, True]


def test_nothing_typed_completes_nothing(workspace: Path) -> None:
    assert complete("", first_row=False, workspace=workspace, commands=COMMANDS) is None
    assert complete("look at ", first_row=False, workspace=workspace, commands=COMMANDS) is None


def test_hidden_names_only_once_a_dot_is_typed(workspace: Path) -> None:
    assert ".env" not in path_texts("e", workspace)
    assert path_texts("x", workspace) == []
    assert path_texts(".", workspace) == [".env", ".git/"]
    assert path_texts(".e", workspace) == [".env"]


def test_names_with_blanks_or_quotes_are_quoted(workspace: Path) -> None:
    assert path_texts("docs/u", workspace) == ['"docs/usage guide.md"']
    assert path_texts("docs/s", workspace) == ["'docs/say \"hi\".md'"]
    # An open quote goes on inside it; a directory leaves it open.
    assert path_texts('read "docs/us', workspace) == ['"docs/usage guide.md"']
    assert path_texts("read 'do", workspace) == ["'docs/"]
    assert path_texts('read @"docs/us', workspace) == ['@"docs/usage guide.md"']


def test_an_apostrophe_in_prose_is_not_an_open_quote(workspace: Path) -> None:
    assert path_texts("don't touch hel", workspace) == ["hello.py"]


def test_nothing_outside_the_workspace_is_listed(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("")
    (workspace / "escape").symlink_to(outside)
    (workspace / "inner").symlink_to(workspace / "src")
    assert path_texts("../", workspace) == []
    assert path_texts("../outside/s", workspace) == []
    assert path_texts(f"{outside}/s", workspace) == []
    assert path_texts("/etc/pas", workspace) == []
    assert path_texts("escape/s", workspace) == []  # through a symlink
    # A link out is offered as a name, never as a folder to go into; one inside is a folder.
    assert path_texts("esc", workspace) == ["escape"]
    assert path_texts("inn", workspace) == ["inner/"]
    assert path_texts("inner/zc", workspace) == ["inner/zcoder/"]
    # An absolute path inside the workspace is fine.
    assert path_texts(f"{workspace}/hel", workspace) == [f"{workspace}/hello.py"]


def test_an_unreadable_folder_completes_nothing(workspace: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any folder")
    (workspace / "src").chmod(0)
    try:
        assert path_texts("src/", workspace) == []
    finally:
        (workspace / "src").chmod(0o755)
