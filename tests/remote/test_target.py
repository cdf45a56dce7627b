"""``--connect``'s target and the ssh command line made from it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zcoder.base.errors import EXIT_USAGE
from zcoder.base.ssh_target import Target, TargetError, remote_shell_command, ssh_argv
from zcoder.cli import main


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("box", Target("box")),
        ("me@box", Target("box", user="me")),
        ("me@box:2222", Target("box", user="me", port=2222)),
        ("box/srv/app", Target("box", path="/srv/app")),
        ("me@box:22/srv/my app", Target("box", user="me", port=22, path="/srv/my app")),
        ("box/~/src/app", Target("box", path="~/src/app")),
        ("[::1]:2200/w", Target("::1", port=2200, path="/w")),
        ("build.example.org", Target("build.example.org")),
    ],
)
def test_targets(text: str, expected: Target) -> None:
    assert Target.parse(text) == expected
    assert Target.parse(str(expected)) == expected


@pytest.mark.parametrize("text", ["", "-oProxyCommand=x", "me@", "box:port", "box:99999", "a b"])
def test_not_targets(text: str) -> None:
    with pytest.raises(TargetError):
        Target.parse(text)


def test_the_ssh_command_is_the_users_ssh_in_batch_mode() -> None:
    argv = ssh_argv(Target.parse("me@box:2222/srv/app"), {})
    assert argv[:2] == ["ssh", "-T"]
    assert "BatchMode=yes" in argv
    assert argv[argv.index("-l") + 1] == "me" and argv[argv.index("-p") + 1] == "2222"
    # The host comes after "--": a host can never be read as an option.
    assert argv[-3:] == ["--", "box", "cd /srv/app && exec zcoder --acp"]


def test_zcoder_ssh_and_the_remote_command_are_configurable() -> None:
    env = {"ZCODER_SSH": "ssh -F /tmp/cfg", "ZCODER_REMOTE_COMMAND": "~/.local/bin/zcoder --acp"}
    argv = ssh_argv(Target.parse("box"), env)
    assert argv[:3] == ["ssh", "-F", "/tmp/cfg"]
    assert argv[-1] == "exec ~/.local/bin/zcoder --acp"


def test_paths_are_quoted_for_the_remote_shell() -> None:
    assert (
        remote_shell_command(Target("box", path="/srv/it's; rm x"), "zcoder --acp")
        == "cd '/srv/it'\"'\"'s; rm x' && exec zcoder --acp"
    )
    assert (
        remote_shell_command(Target("box", path="~/my app"), "zcoder --acp")
        == "cd \"$HOME\"/'my app' && exec zcoder --acp"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["--connect", "box", "-m", "qwen3-coder"],
        ["--connect", "box", "--yes"],
        ["--connect", "box", "-w", "/tmp"],
        ["--connect", "box", "--acp"],
        ["--connect=-oProxyCommand=touch x"],
        ["--connect", "box:port"],
    ],
)
def test_the_command_line_refuses_what_is_the_remote_zcoders(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == EXIT_USAGE
    assert "--connect" in capsys.readouterr().err


def test_the_resume_hint_shows_a_remote_session_id_made_visible() -> None:
    """The id comes from the remote agent: it cannot write to the terminal after exit."""
    from zcoder.remote.app import resume_hint

    hint = resume_hint(Target("box"), "s1\x1b]52;c;cm0gLXJmIH4=\x07\u202e")
    assert hint == (
        "Resume this session with: zcoder --connect box "
        "--resume s1\\e]52;c;cm0gLXJmIH4=\\x07\\u202e"
    )


@pytest.mark.parametrize(
    ("text", "host", "name"),
    [
        ("box:api", Target("box"), "api"),
        ("me@box:2222:api", Target("box", user="me", port=2222), "api"),
        ("[::1]:api#42", Target("::1"), "api#42"),
        (
            "me@[fe80::1]:2200:4242-7310039222510338",
            Target("fe80::1", "me", 2200),
            "4242-7310039222510338",
        ),
        ("box:2222", Target("box"), "2222"),  # the name is after the last colon
        ("box:données", Target("box"), "données"),
    ],
)
def test_remote_send_targets(text: str, host: Target, name: str) -> None:
    from zcoder.relay.hosts import is_remote_target, split_remote_target

    assert is_remote_target(text)
    assert split_remote_target(text) == (host, name)


@pytest.mark.parametrize(
    "text",
    ["box", "box:", ":api", "[::1]", "box:-api", "box:a b", "box:$(id)", "box:a;b", "-o:api",
     "box/srv:api", "box:a:b:c", "box:api#x"],
)  # fmt: skip
def test_not_remote_send_targets(text: str) -> None:
    from zcoder.relay.hosts import split_remote_target

    with pytest.raises(TargetError):
        split_remote_target(text)


@pytest.mark.parametrize(
    "text", ["$(id)", "`id`", "box;id", "box|id", "-lroot@box", "me@-box", "bo'x", "%h", "bo\nx"]
)
def test_no_shell_word_nor_option_is_a_host_or_a_login(text: str) -> None:
    """ssh gives the host and login to a ProxyCommand through a shell (%h, %r)."""
    with pytest.raises(TargetError):
        Target.parse(text)


SHELL_OR_OPTION = set(" \t\n\r;&|$`'\"\\<>()*?[]{}!#~%")


@given(st.text(max_size=60))
def test_whatever_is_typed_no_host_login_or_name_reaches_ssh_as_a_shell_word(text: str) -> None:
    """Every accepted HOST:NAME has a host and login that no shell reads and no ssh takes
    as an option, and a name that is not an option (it is quoted there anyway)."""
    from zcoder.relay.hosts import split_remote_target

    try:
        target, name = split_remote_target(text)
    except TargetError:
        return
    for word in (target.host, target.user or "x"):
        assert not word.startswith("-") and not SHELL_OR_OPTION & set(word.strip("[]")) - {":"}
    assert not name.startswith("-") and not SHELL_OR_OPTION - {"#"} & set(name)
