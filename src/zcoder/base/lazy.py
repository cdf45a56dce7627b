"""Lazy package exports (PEP 562): ``from zcoder.tools import Profile`` imports only the
module that defines ``Profile``, not every module the package re-exports.

Start-up draws its first frame before the agent, the tools and the model client are
imported (tui/app.py); eager package ``__init__`` files would import them all on the
first light name. zcoder.relay has its own copy of this, so it stays standalone.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: each name in ``where`` comes from the submodule
    it maps to, imported on first use and then kept in the package's namespace."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
