import subprocess
import sys

from zcoder import __version__


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
    assert "       zcoder agents [--json]\n" in out
    assert "       zcoder send [--json] TARGET [MESSAGE]\n" in out
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
