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
    from zcoder.frontend.resume import backend_flags, resume_command, start_words  # noqa: PLC0415

    if exit_session is not None:  # a command that works from here, with the same server
        flags = backend_flags(
            backend=config.backend, host=config.host, base_url=config.base_url, gguf=config.gguf
        )
        hint = resume_command(
            exit_session,
            config.workspace,
            config.profile.value,
            start=start_words(),
            backend=flags,
        )
        with contextlib.suppress(OSError):  # after SIGHUP there may be no terminal
            print(f"Resume this session with: {hint}", flush=True)
    if os.environ.get("ZCODER_DEBUG_EXIT"):
        print(f"zcoder exited with {code}")
    return int(code or 0)
