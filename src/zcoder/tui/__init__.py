"""The interactive terminal UI (Textual)."""

from zcoder.tui.app import ZcoderApp
from zcoder.tui.run import run_app

__all__ = ["ZcoderApp", "run_app"]
