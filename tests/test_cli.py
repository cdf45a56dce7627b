import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pytest

from zcoder import __version__, config
from zcoder.base.errors import UsageError
from zcoder.cli import main
from zcoder.model.gguf import GGUFError
from zcoder.sessions import SessionStoreError


def test_version_flag_prints_version():
    out = subprocess.run(
        [sys.executable, "-m", "zcoder", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"zcoder {__version__}"


def test_help_flag_describes_program():
    out = subprocess.run(
        [sys.executable, "-m", "zcoder", "--help"], capture_output=True, text=True, check=True
    )
    assert "usage: zcoder" in out.stdout


def test_help_lists_the_agents_and_send_commands():
    out = subprocess.run(
        [sys.executable, "-m", "zcoder", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "       zcoder agents [--json | --watch]\n" in out
    assert "       zcoder send [--json] [--steer] [--wait [--timeout S]] TARGET [MESSAGE]\n" in out
    commands = out[out.index("\ncommands:\n") :]
    assert "\n  agents [--json]  " in commands
    assert "\n  send TARGET [MESSAGE] " in commands
    # They are real commands: each answers its own --help.
    for command in ("agents", "send"):
        own = subprocess.run(
            [sys.executable, "-m", "zcoder", command, "--help"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert own.startswith(f"usage: zcoder {command}")


class _Refused(UsageError):
    """A usage error raised where no code closer than cli.main handles it."""


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (_Refused("--model is not a model here"), 2),
        (GGUFError("no GGUF file at /x (give the path of a .gguf file)"), 1),
        (SessionStoreError(Path("/h/sessions.db"), "the store is locked"), 1),
    ],
)
def test_a_zcoder_error_is_said_once_at_the_top_with_its_exit_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], error: Exception, code: int
) -> None:
    def refuse(*args: object, **kwargs: object) -> NoReturn:
        raise error

    monkeypatch.setattr(config, "load_config", refuse)
    assert main(["--prompt", "hello"]) == code
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"zcoder: {error}\n")


def test_an_error_message_cannot_drive_the_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(*args: object, **kwargs: object) -> NoReturn:
        raise _Refused("bad name \x1b]0;owned\x07\x1b[2J")

    monkeypatch.setattr(config, "load_config", refuse)
    assert main(["--prompt", "hello"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err
    assert err.startswith("zcoder: bad name ")


def test_an_error_that_is_not_zcoders_is_not_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(*args: object, **kwargs: object) -> NoReturn:
        raise KeyError("a bug")

    monkeypatch.setattr(config, "load_config", crash)
    with pytest.raises(KeyError):
        main(["--prompt", "hello"])
