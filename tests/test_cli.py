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
