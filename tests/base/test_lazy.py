"""Package faces read from one list: the ``if TYPE_CHECKING:`` block of the ``__init__``."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import zcoder.agent
import zcoder.model
import zcoder.relay
import zcoder.sessions
import zcoder.tools
from zcoder.base.lazy import FaceError, face_names

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


@pytest.mark.parametrize(
    "face", [zcoder.agent, zcoder.model, zcoder.relay, zcoder.sessions, zcoder.tools]
)
def test_every_name_of_zcoders_faces_comes_from_its_module(face: object) -> None:
    names = face.__all__  # type: ignore[attr-defined]
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
