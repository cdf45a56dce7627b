"""Images named in a prompt: what counts as an image's path, what its bytes must be, and
every path a hostile prompt or repository would use refused with a clear notice."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fixtures.images import gif_bytes, jpeg_head, png_bytes, webp_head
from zcoder.agent.attachments import MAX_IMAGES, attach
from zcoder.agent.image_attach import find_image_paths
from zcoder.base.images import IMAGE_SUFFIXES, ImageInfo, sniff_image

# -- what an image is, by its bytes -------------------------------------------------------


def test_each_format_is_told_by_its_bytes_with_its_size() -> None:
    assert sniff_image(png_bytes(3, 2)) == ImageInfo("image/png", 3, 2)
    assert sniff_image(gif_bytes(5, 6)) == ImageInfo("image/gif", 5, 6)
    assert sniff_image(jpeg_head(640, 480)) == ImageInfo("image/jpeg", 640, 480)
    # A camera's EXIF data before the frame header is walked over.
    assert sniff_image(jpeg_head(4000, 3000, exif=60000)) == ImageInfo("image/jpeg", 4000, 3000)
    for kind in (b"VP8 ", b"VP8L", b"VP8X"):
        assert sniff_image(webp_head(kind, 321, 123)) == ImageInfo("image/webp", 321, 123)


def test_text_a_bmp_or_an_svg_is_no_image_whatever_its_name() -> None:
    for data in (b"just text\n", b"BM\x00\x00", b"<svg xmlns='http://www.w3.org/2000/svg'/>"):
        assert sniff_image(data) is None


@given(st.sampled_from([b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF89a", b"RIFF"]), st.binary())
def test_the_header_reader_never_raises_on_any_bytes(magic: bytes, rest: bytes) -> None:
    sniff_image(magic + rest)
    sniff_image(rest)


# -- what counts as an image's path in a prompt ----------------------------------------


def typed(text: str) -> list[tuple[str, ...]]:
    return [candidate.paths for candidate in find_image_paths(text)]


def test_paths_as_users_type_and_terminals_paste_them() -> None:
    text = (
        "see shots/a.png, '/tmp/my shot.JPG' and /tmp/b\\ c.webp "
        'and "rel dir/d.gif" and file:///tmp/e%20f and ~/g.png'
    )
    assert typed(text) == [
        ("shots/a.png",),
        ("/tmp/my shot.JPG",),
        ("/tmp/b c.webp",),
        ("rel dir/d.gif",),
        ("/tmp/e f",),
        (os.path.expanduser("~/g.png"),),
    ]
    assert [c.absolute for c in find_image_paths(text)] == [False, True, True, False, True, True]


def test_words_mentions_code_and_other_hosts_are_not_image_paths() -> None:
    text = "fix main.py and @shot.png in `x.png` and file://host/y.png, not a png"
    assert typed(text) == []


# -- what is attached ---------------------------------------------------------------------


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "shots").mkdir(parents=True)
    (root / "shots" / "bug.png").write_bytes(png_bytes(3, 2))
    return root.resolve()


def test_a_bare_path_and_a_mention_attach_the_image_once(ws: Path) -> None:
    got = attach("why is shots/bug.png red? see @shots/bug.png", ws, window=None)
    assert [image.shown() for image in got.images] == ["🖼 shots/bug.png (3x2, 73 bytes)"]
    assert got.images[0].data == png_bytes(3, 2)
    assert got.items == [] and got.notices == []


def test_a_dragged_file_outside_the_workspace_is_the_users_consent(
    ws: Path, tmp_path: Path
) -> None:
    (tmp_path / "Pictures").mkdir()
    (tmp_path / "Pictures" / "my shot.png").write_bytes(png_bytes(8, 8))
    uri = "file://" + str(tmp_path / "Pictures" / "my%20shot.png")
    got = attach(f"look: {uri}", ws, window=None)
    assert [image.display for image in got.images] == [str(tmp_path / "Pictures" / "my shot.png")]


def test_a_name_that_names_nothing_stays_text_silently(ws: Path) -> None:
    got = attach("rename shots/bug.png to shots/new.png", ws, window=None)
    assert [image.display for image in got.images] == ["shots/bug.png"]
    assert got.notices == []


def test_a_file_named_like_an_image_that_is_not_one_is_refused(ws: Path) -> None:
    (ws / "fake.png").write_text("not an image\n")
    got = attach("what is fake.png and @fake.png", ws, window=None)
    assert got.images == []
    assert got.notices[-1] == "fake.png was not attached: it is not a PNG, JPEG, GIF or WebP image"


def test_an_image_past_the_limit_is_refused_naming_the_setting(ws: Path) -> None:
    got = attach("see shots/bug.png and @shots/bug.png", ws, window=None, image_limit=50)
    assert got.images == []
    expected = (
        "shots/bug.png is 73 bytes, more than the 50 bytes an image may be "
        "(ZCODER_IMAGE_MAX_BYTES sets the limit)"
    )
    assert got.notices == [
        f"@shots/bug.png was not attached: {expected}",
        f"shots/bug.png was not attached: {expected}",
    ]


def test_more_images_than_a_prompt_takes_are_said(ws: Path) -> None:
    names = [f"i{n}.png" for n in range(MAX_IMAGES + 1)]
    for name in names:
        (ws / name).write_bytes(png_bytes(1, 1))
    got = attach(" ".join(names), ws, window=None)
    assert len(got.images) == MAX_IMAGES
    assert got.notices == [
        f"{names[-1]} was not attached: a prompt attaches at most {MAX_IMAGES} images"
    ]


# -- attacks ------------------------------------------------------------------------------


def test_a_link_out_of_the_workspace_is_refused_bare_or_mentioned(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.png").write_bytes(png_bytes(2, 2))
    (ws / "evil.png").symlink_to(tmp_path / "secret.png")
    (ws / "zero.png").symlink_to("/dev/zero")
    got = attach("evil.png zero.png @evil.png ../secret.png", ws, window=None)
    assert got.images == []
    assert got.notices == [
        "@evil.png was not attached: it is outside the workspace",
        "evil.png was not attached: it is outside the workspace",
        "zero.png was not attached: it is outside the workspace",
        "../secret.png was not attached: it is outside the workspace",
    ]


def test_a_fifo_or_a_device_is_refused_without_hanging(ws: Path) -> None:
    os.mkfifo(ws / "pipe.png")
    got = attach("pipe.png and file:///dev/zero and '/dev/null.png'", ws, window=None)
    assert got.images == []
    assert got.notices == [
        "pipe.png was not attached: pipe.png is a named pipe (FIFO); zcoder reads only "
        "regular files",
        "/dev/zero was not attached: /dev/zero is a device; only an image file is attached",
    ]


@given(st.text(alphabet=st.sampled_from(list("ab/.~'\"\\ `@:png%20file")), max_size=60))
def test_every_path_found_names_an_image_or_came_as_a_file_uri(text: str) -> None:
    for candidate in find_image_paths(text):
        assert candidate.paths
        assert all(path.lower().endswith(IMAGE_SUFFIXES) for path in candidate.paths) or (
            "file://" in text
        )
