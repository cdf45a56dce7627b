"""The interactive terminal UI (Textual): ``run_app`` runs it (zcoder.tui.run).

The face is lazy, so a module of ``tui/state`` imports no Textual by being in the package."""

from typing import TYPE_CHECKING

from zcoder.base.lazy import face

if TYPE_CHECKING:
    from zcoder.tui.app import ZcoderApp
    from zcoder.tui.run import run_app

__getattr__, __dir__, __all__ = face(__name__, __file__)
