"""Package faces written once (PEP 562): each name is imported from its module on first use.

A package's ``__init__`` lists what it offers in one place, its ``if TYPE_CHECKING:``
block, so mypy --strict sees every name and its type (the faces are the modules
pyproject.toml lets re-export what they import: ``implicit_reexport``). At run time that
block does not run: ``face`` reads it from the ``__init__``'s source and builds the
module's ``__getattr__``, ``__dir__`` and ``__all__`` from it::

    if TYPE_CHECKING:
        from zcoder.relay.instance import Relay

    __getattr__, __dir__, __all__ = face(__name__, __file__)

``from zcoder.tools import Profile`` then imports only the module that defines ``Profile``,
not every module the package offers: start-up draws its first frame before the agent, the
tools and the model client are imported (tui/app.py), and the relay's listener process
imports only the modules it runs.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


class FaceError(ImportError):
    """A face's ``TYPE_CHECKING`` block is not a plain list of re-exports; says which line."""


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def face_names(package: str, source: str, filename: str = "<face>") -> dict[str, str]:
    """Each name the face of ``package`` offers → the submodule it comes from (relative to
    the package), read from the top-level ``if TYPE_CHECKING:`` blocks of ``source``.

    Every import there must be ``from <a submodule of package> import NAME``: a name
    renamed (``as``), offered twice or taken from outside the package raises FaceError."""
    where: dict[str, str] = {}
    for node in ast.parse(source, filename).body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for statement in node.body:
            line = f"{filename}:{statement.lineno}"
            if (
                not isinstance(statement, ast.ImportFrom)
                or statement.level
                or not (statement.module or "").startswith(f"{package}.")
            ):
                raise FaceError(f"{line}: a face offers only its own modules' names")
            module = str(statement.module)
            for alias in statement.names:
                if alias.asname is not None:
                    raise FaceError(f"{line}: {alias.name} is offered under its own name only")
                if alias.name in where:
                    raise FaceError(f"{line}: {alias.name} is offered twice")
                where[alias.name] = module.removeprefix(f"{package}.")
    return where


def face(
    package: str, init_file: str | None
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """The ``__getattr__``, ``__dir__`` and ``__all__`` of ``package``, whose ``__init__``
    is ``init_file`` (its ``__file__``): each name imported from its submodule on first
    use, then kept in the package's namespace."""
    if init_file is None:
        raise FaceError(f"{package} has no source file to read its face from")
    where = face_names(package, Path(init_file).read_text(encoding="utf-8"), init_file)

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__, sorted(where)
