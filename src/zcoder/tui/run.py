"""Running the interactive zcoder as a program: the app, then, with the terminal the
shell's again, the line that says how to come back to the session (zcoder --resume)."""

from __future__ import annotations

import contextlib
import os

from zcoder.config import Config
from zcoder.tui.app import ZcoderApp

__all__ = ["run_app"]


def run_app(config: Config, *, resume: str | None = None, keep_model: bool = False) -> int:
    """``resume``: a full session id (the CLI resolves prefixes); its model is put back
    unless ``keep_model`` (``-m`` was given)."""
    app = ZcoderApp(config, resume=resume, keep_model=keep_model, tune_gc=True)
    try:
        code = app.run()
    finally:
        app._stop_services()  # idempotent: also covers an exit that skipped unmount
    # The terminal is the shell's again: say how to come back to this session.
    exit_session = app.sessions.exit_session if app.started else None
    from zcoder.resume import resume_command  # noqa: PLC0415 - only once the app has run

    if exit_session is not None:
        hint = resume_command(exit_session, config.workspace, config.profile.value)
        with contextlib.suppress(OSError):  # after SIGHUP there may be no terminal
            print(f"Resume this session with: {hint}", flush=True)
    if os.environ.get("ZCODER_DEBUG_EXIT"):
        print(f"zcoder exited with {code}")
    return int(code or 0)
