"""The interactive app's log file: private, size-bounded, never the terminal."""

from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.processes import fresh_python_lines
from zcoder.base.logfile import LOG_FILE_NAME, PrivateRotatingFileHandler, setup_logging


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    """setup_logging changes process-wide loggers: undo it after each test."""
    zcoder, relay = logging.getLogger("zcoder"), logging.getLogger("zcoder.relay")
    handlers, level = list(zcoder.handlers), relay.level
    yield
    for handler in zcoder.handlers[:]:
        if handler not in handlers:
            zcoder.removeHandler(handler)
            handler.close()
    relay.setLevel(level)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_relay_records_go_to_a_private_file_with_the_pid(tmp_path: Path) -> None:
    home = tmp_path / "home" / "zcoder"
    path = setup_logging(home)
    assert path == home / LOG_FILE_NAME
    logging.getLogger("zcoder.relay.listener").info("relay refused enqueue: status=invalid")
    for handler in logging.getLogger("zcoder").handlers:
        handler.flush()
    assert mode(home) == 0o700
    assert mode(path) == 0o600
    (line,) = path.read_text(encoding="utf-8").splitlines()
    assert f"zcoder[{os.getpid()}] INFO zcoder.relay.listener: relay refused enqueue" in line


def test_an_existing_loose_log_file_is_made_private(tmp_path: Path) -> None:
    tmp_path.chmod(0o700)
    (tmp_path / LOG_FILE_NAME).write_text("old line\n")
    (tmp_path / LOG_FILE_NAME).chmod(0o644)
    path = setup_logging(tmp_path)
    assert path is not None and mode(path) == 0o600
    assert path.read_text() == "old line\n"  # appended to, not truncated


def test_the_log_is_bounded_and_every_rotated_file_is_private(tmp_path: Path) -> None:
    path = tmp_path / LOG_FILE_NAME
    handler = PrivateRotatingFileHandler(path, maxBytes=300, backupCount=2, encoding="utf-8")
    logger = logging.getLogger("zcoder.test-rotation")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        for n in range(200):
            logger.warning("line %03d %s", n, "x" * 40)
    finally:
        logger.removeHandler(handler)
        handler.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == [LOG_FILE_NAME, f"{LOG_FILE_NAME}.1", f"{LOG_FILE_NAME}.2"]
    for name in files:
        assert mode(tmp_path / name) == 0o600
        assert (tmp_path / name).stat().st_size <= 300
    assert "line 199" in path.read_text()


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory"])
def test_a_log_path_that_is_not_a_regular_file_is_not_used(tmp_path: Path, kind: str) -> None:
    path = tmp_path / LOG_FILE_NAME
    target = tmp_path / "elsewhere"
    if kind == "symlink":
        target.write_text("")
        path.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(path)  # opening it for writing would wait for a reader forever
    else:
        path.mkdir()
    code = (
        "import logging, sys\n"
        "from pathlib import Path\n"
        "from zcoder.base.logfile import setup_logging\n"
        "print(setup_logging(Path(sys.argv[1])))\n"
        "logging.getLogger('zcoder.relay.listener').warning('nowhere to go')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert out.stdout == "None\n"
    assert out.stderr == ""  # dropped: never printed where the app draws
    if kind == "symlink":
        assert target.read_text() == ""


def test_help_does_not_import_the_log_setup() -> None:
    code = (
        "import sys\n"
        "from zcoder.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('zcoder.base.logfile' in sys.modules, 'logging.handlers' in sys.modules)\n"
    )
    assert fresh_python_lines(code)[-1] == "False False"
