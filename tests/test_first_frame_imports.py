"""The interactive start imports, before its first frame, only what that frame needs.

The first frame (bench/app_bench.py, docs/performance.md) is drawn by the modules the
command line, the settings, the log file and the app's first stage import
(tui/parts/startup.py); the rest waits for the second stage. These are modules that used to
come with the first frame for one small name each: a GGUF launch's (urllib and
http.client, importlib.metadata, the GGUF reader; the command line only asks whether a
GGUF is named), the relay's registry and wire protocol (the TUI only asks whether a
pid is alive) and the session records (the session list only names their type).
"""

from __future__ import annotations

import subprocess
import sys

# What zcoder.cli imports on the interactive path before the app draws its first frame.
FIRST_FRAME = (
    "zcoder.cli",
    "zcoder.model.embedded",
    "zcoder.config",
    "zcoder.early_keys",
    "zcoder.base.logfile",
    "zcoder.tui",
    "zcoder.tui.parts.startup",
)
NOT_BEFORE_THE_FIRST_FRAME = (
    "urllib.request",
    "http.client",
    "importlib.metadata",
    "zcoder.model.gguf",
    "zcoder.relay.registry",
    "zcoder.relay.protocol",
    "zcoder.sessions.records",
)


def test_the_first_frame_imports_no_launch_machinery_no_relay_wire_no_session_records() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {FIRST_FRAME!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(sorted(m for m in {NOT_BEFORE_THE_FIRST_FRAME!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.splitlines() == ["[]"], done.stdout


def test_version_and_help_import_no_event_loop_nor_the_stream_readers() -> None:
    """What answers at once (--version, --help, a wrong flag) reads the option table, whose
    defaults live in zcoder.model.limits: the stream's readers and asyncio wait for a run
    (they tripled --version's time once)."""
    code = (
        "import sys\n"
        "from zcoder.cli import main\n"
        "for argv in (['--version'], ['--help']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "later = ('asyncio', 'zcoder.model.watch', 'zcoder.model.body')\n"
        "print(*(m in sys.modules for m in later))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "False False False"
