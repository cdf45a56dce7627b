"""Package faces read from one list: the ``if TYPE_CHECKING:`` block of the ``__init__``."""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import zcoder
from zcoder.base.lazy import FaceError, face_names

SRC = Path(zcoder.__file__).parent


def package_faces() -> list[str]:
    """Every package of zcoder whose ``__init__`` offers names (not a docstring alone)."""
    found = []
    for init in sorted(SRC.rglob("__init__.py")):
        body = ast.parse(init.read_text(encoding="utf-8")).body
        if init.parent != SRC and any(not isinstance(node, ast.Expr) for node in body):
            found.append(".".join(init.parent.relative_to(SRC.parent).parts))
    return found


FACE = '''"""A face."""
from typing import TYPE_CHECKING

from zcoder.base.lazy import face

if TYPE_CHECKING:
    from {name}.heavy import Heavy, make_heavy
    from {name}.light import LIGHT

__getattr__, __dir__, __all__ = face(__name__, __file__)
'''


@pytest.fixture
def package(tmp_path: Path) -> Iterator[str]:
    name = "facepkg_under_test"
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text(FACE.format(name=name))
    (root / "heavy.py").write_text(
        "class Heavy:\n    pass\n\n\ndef make_heavy() -> Heavy:\n    return Heavy()\n"
    )
    (root / "light.py").write_text("LIGHT = 1\n")
    sys.path.insert(0, str(tmp_path))
    try:
        yield name
    finally:
        sys.path.remove(str(tmp_path))
        for module in [m for m in sys.modules if m.split(".")[0] == name]:
            del sys.modules[module]


def test_a_face_offers_its_list_and_imports_a_module_only_when_a_name_of_it_is_used(
    package: str,
) -> None:
    face = importlib.import_module(package)
    assert face.__all__ == ["Heavy", "LIGHT", "make_heavy"]
    assert {"Heavy", "LIGHT", "make_heavy"} <= set(dir(face))
    assert f"{package}.heavy" not in sys.modules
    assert face.LIGHT == 1
    assert f"{package}.heavy" not in sys.modules
    assert isinstance(face.make_heavy(), face.Heavy)
    assert f"{package}.heavy" in sys.modules
    with pytest.raises(AttributeError, match="no attribute 'Missing'"):
        _ = face.Missing


@pytest.mark.parametrize(
    ("block", "why"),
    [
        ("from pkg.heavy import Heavy as Other", "under its own name only"),
        ("from other.heavy import Heavy", "only its own modules"),
        ("from .heavy import Heavy", "only its own modules"),
        ("import pkg.heavy", "only its own modules"),
        ("from pkg.heavy import Heavy\n    from pkg.light import Heavy", "offered twice"),
    ],
)
def test_a_face_that_is_not_a_plain_list_of_its_own_names_is_refused(block: str, why: str) -> None:
    source = f"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    {block}\n"
    with pytest.raises(FaceError, match=why):
        face_names("pkg", source, "pkg/__init__.py")


def test_every_package_that_offers_names_does_so_through_one_list() -> None:
    """Issue 28, item 5: a face lists each name once (its TYPE_CHECKING block), nothing
    else: no code of its own, no second list to keep in step."""
    faces = package_faces()
    assert {"zcoder.agent", "zcoder.hooks", "zcoder.mcp", "zcoder.tui"} <= set(faces)
    for package in faces:
        init = SRC.parent.joinpath(*package.split("."), "__init__.py")
        source = init.read_text(encoding="utf-8")
        assert source.rstrip().endswith(
            "__getattr__, __dir__, __all__ = face(__name__, __file__)"
        ), package
        names = face_names(package, source, str(init))
        assert names, package
        # A name that is also a submodule's would become the module once that is imported.
        clashes = [
            n for n in names if (init.parent / f"{n}.py").exists() or (init.parent / n).is_dir()
        ]
        assert not clashes, (package, clashes)


@pytest.mark.parametrize("package", package_faces())
def test_every_name_of_zcoders_faces_comes_from_its_module(package: str) -> None:
    face = importlib.import_module(package)
    names = face.__all__
    assert names
    for name in names:
        assert getattr(face, name) is not None


def test_the_relay_face_offers_no_wire_builder() -> None:
    from zcoder.relay import protocol  # white-box: the module the builders live in

    builders = {
        name
        for name in vars(protocol)
        if name.startswith(("encode_", "decode_")) or name.endswith("_request")
    }
    assert builders  # the protocol module still has them
    assert not builders & set(zcoder.relay.__all__)
