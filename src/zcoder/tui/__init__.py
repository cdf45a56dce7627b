"""The interactive terminal UI (Textual)."""

from zcoder.tui.app import ZcoderApp, run_app

__all__ = ["ZcoderApp", "run_app"]
