"""Images a prompt attaches by naming them: what counts as an image's path in the text,
and reading one safely.

A prompt names an image by a path that ends in ``.png``, ``.jpg``, ``.jpeg``, ``.gif`` or
``.webp`` (any case): a bare relative path (``shots/bug.png``), an absolute one
(``/home/me/Pictures/bug.png``, ``~/bug.png``), one in quotes or with its spaces escaped
(``'/tmp/my shot.png'``, ``/tmp/my\\ shot.png``, as terminals paste a dragged file), or
a ``file://`` URI (``file:///tmp/my%20shot.png``, whatever its name ends in). ``@path``
mentions are zcoder.agent.attachments' (it calls ``read_image`` for one that is an image).
Nothing inside a code span is a path.

Where it may be: a relative path is confined to the workspace as every tool's is (a link
out of it is refused); an absolute path the user typed is their consent to that file, so
it may be outside the workspace. Either way only a regular file is read (a device, a FIFO
or a socket is refused, opened without blocking), no more than the limit
(``ZCODER_IMAGE_MAX_BYTES``), and it must be PNG, JPEG, GIF or WebP by its bytes
(zcoder.base.images). A word that only looks like an image's path and names nothing
stays text, silently; a file named like an image that is refused is said.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final
from urllib.parse import unquote, urlsplit

from zcoder.agent.mentions import outside_code
from zcoder.base.images import (
    DEFAULT_IMAGE_MAX_BYTES,
    HEAD_BYTES,
    IMAGE_SUFFIXES,
    ImageInfo,
    sniff_image,
)
from zcoder.base.plural import byte_size
from zcoder.base.sanitize import visible
from zcoder.tools.confinement import (
    ConfinedPath,
    ConfinementError,
    kind_of,
    open_read,
    read_limited,
    resolve_path,
)

__all__ = [
    "DEFAULT_IMAGE_MAX_BYTES",
    "IMAGE_LIMIT_SETTING",
    "ImageFile",
    "ImagePath",
    "find_image_paths",
    "image_at",
    "read_image",
]

IMAGE_LIMIT_SETTING: Final = "ZCODER_IMAGE_MAX_BYTES"

# A word of the prompt: 'quoted', "quoted", or bare with backslash-escaped characters.
_WORD: Final = re.compile(r"""(?<![^\s(\[{<])(?:'([^'\n]+)'|"([^"\n]+)"|((?:\\.|[^\s'"`\\])+))""")
_TRAILING: Final = ".,;:!?)]}>"
_ESCAPED: Final = re.compile(r"\\(.)")


@dataclass(frozen=True)
class ImagePath:
    """A path in a prompt that may name an image: the readings to try (``shot.png.``
    ends a sentence: ``shot.png`` too), and whether it was typed absolute (or as a URI)."""

    paths: tuple[str, ...]
    absolute: bool

    @property
    def typed(self) -> str:
        return self.paths[-1]


@dataclass(frozen=True)
class ImageFile:
    """An image read for a prompt: its name as shown, its bytes and what they are."""

    display: str
    data: bytes
    info: ImageInfo

    def shown(self) -> str:
        """The transcript's line: ``🖼 shots/bug.png (640x480, 12.5 KiB)``."""
        return f"🖼 {visible(self.display)} ({self.info.dimensions()}, {byte_size(len(self.data))})"


def _named_image(path: str) -> bool:
    return path.lower().endswith(IMAGE_SUFFIXES)


def _reading(word: str) -> tuple[str, bool] | None:
    """The path ``word`` names and whether it is absolute, or None if it is no image's."""
    if word.startswith("file://"):
        parts = urlsplit(word)
        if parts.netloc not in ("", "localhost") or not parts.path:
            return None
        return unquote(parts.path), True
    if not _named_image(word):
        return None
    if word.startswith("~/"):
        return os.path.expanduser(word), True
    return word, word.startswith("/")


def find_image_paths(text: str) -> list[ImagePath]:
    """The paths in ``text`` that may name images, in order (see the module docstring)."""
    found: list[ImagePath] = []
    for match in outside_code(_WORD, text):
        quoted = match.group(1) or match.group(2)
        if quoted is not None:
            words = [quoted.strip()]
        else:
            bare = _ESCAPED.sub(r"\1", match.group(3))
            if bare.startswith("@"):
                continue  # a mention: zcoder.agent.attachments takes it
            stripped = bare.rstrip(_TRAILING)
            words = [bare, stripped] if stripped and stripped != bare else [bare]
        readings = [reading for word in words if (reading := _reading(word)) is not None]
        if readings:
            paths = tuple(dict.fromkeys(path for path, _ in readings))
            found.append(ImagePath(paths, readings[0][1]))
    return found


def too_big(display: str, size: int, limit: int) -> str:
    return (
        f"{display} is {byte_size(size)}, more than the {byte_size(limit)} an image may be "
        f"({IMAGE_LIMIT_SETTING} sets the limit)"
    )


def read_image(handle: BinaryIO, head: bytes, display: str, limit: int) -> ImageFile | None:
    """The image an open regular file holds (``head``: its first bytes, read already), or
    None when its bytes are no image's; ConfinementError when it passes ``limit``."""
    info = sniff_image(head[:HEAD_BYTES])
    if info is None:
        return None
    size = os.fstat(handle.fileno()).st_size
    if size > limit or len(head) > limit:
        raise ConfinementError(too_big(display, max(size, len(head)), limit))
    data = head + read_limited(handle, limit + 1 - len(head))
    if len(data) > limit:  # it grew while being read
        raise ConfinementError(too_big(display, len(data), limit))
    return ImageFile(display, data, info)


def _open_typed(path: str) -> BinaryIO:
    """Open a path the user typed (absolute, maybe outside the workspace): a regular file
    only, opened without blocking so a FIFO cannot hang zcoder."""
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ConfinementError(f"{path} is {kind_of(mode)}; only an image file is attached")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def image_at(workspace: Path, candidate: ImagePath, limit: int) -> ImageFile | str | None:
    """The image ``candidate`` names; a notice when one named like an image is refused;
    None when it names nothing (it stays text, silently). Blocking: run it in a thread."""
    for raw in candidate.paths:
        shown = visible(raw)
        if not os.path.lexists(os.path.join(workspace, raw)):
            continue
        try:
            target: ConfinedPath | None = resolve_path(workspace, raw)
        except ConfinementError:
            if not candidate.absolute:
                return f"{shown} was not attached: it is outside the workspace"
            target = None
        try:
            handle = open_read(target) if target is not None else _open_typed(raw)
            with handle:
                display = target.display if target is not None else raw
                image = read_image(handle, read_limited(handle, HEAD_BYTES), display, limit)
        except ConfinementError as exc:
            return f"{shown} was not attached: {visible(str(exc))}"
        except OSError as exc:
            return f"{shown} was not attached: {visible(exc.strerror or str(exc))}"
        if image is None:
            return f"{shown} was not attached: it is not a PNG, JPEG, GIF or WebP image"
        return image
    return None
