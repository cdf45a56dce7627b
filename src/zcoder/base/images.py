"""What an image file is, read from its first bytes: PNG, JPEG, GIF or WebP, and its size
in pixels, from the format's own header (no imaging library: only the headers are read).

The format is told by its magic bytes, never by the file's name: a ``.png`` that holds
text is not an image, and a screenshot saved without an extension is one. Anything else
(BMP, TIFF, SVG, HEIC...) is not taken: it is not what both wire formats' servers decode.
"""

from __future__ import annotations

import base64
import struct
from dataclasses import dataclass
from typing import Final

__all__ = [
    "DEFAULT_IMAGE_MAX_BYTES",
    "HEAD_BYTES",
    "IMAGE_SUFFIXES",
    "ImageInfo",
    "data_url",
    "image_mime",
    "sniff_image",
]

IMAGE_SUFFIXES: Final = (".png", ".jpg", ".jpeg", ".gif", ".webp")
"""Names that look like an image's: what makes a bare word in a prompt worth a look."""
DEFAULT_IMAGE_MAX_BYTES: Final = 5 * 1024 * 1024
"""The largest image a prompt attaches (ZCODER_IMAGE_MAX_BYTES changes it)."""
HEAD_BYTES: Final = 64 * 1024
"""Enough of a file to find its size: a JPEG's frame header may follow its EXIF data."""

_PNG: Final = b"\x89PNG\r\n\x1a\n"
_JPEG: Final = b"\xff\xd8\xff"
_GIFS: Final = (b"GIF87a", b"GIF89a")
# JPEG markers that start a frame (SOF0-SOF15 but DHT, JPG and DAC): they hold the size.
_SOF: Final = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


@dataclass(frozen=True)
class ImageInfo:
    """An image's type (``image/png``...) and its size in pixels (0 when the header
    did not say: a JPEG whose frame header is past the bytes read)."""

    mime: str
    width: int
    height: int

    def dimensions(self) -> str:
        return f"{self.width}x{self.height}" if self.width and self.height else "size unknown"


def sniff_image(head: bytes) -> ImageInfo | None:
    """The image ``head`` (a file's first bytes) starts, or None when it is none of PNG,
    JPEG, GIF and WebP. Never raises, whatever the bytes."""
    if head.startswith(_PNG):
        return _png(head)
    if head.startswith(_JPEG):
        return ImageInfo("image/jpeg", *_jpeg_size(head))
    if head[:6] in _GIFS and len(head) >= 10:
        width, height = struct.unpack_from("<HH", head, 6)
        return ImageInfo("image/gif", width, height)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _webp(head)
    return None


def data_url(mime: str, data: bytes) -> str:
    """``data:image/png;base64,...``: an image as the OpenAI form's ``image_url`` takes it."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def image_mime(encoded: str) -> str:
    """The type of the base64 image ``encoded`` (``image/png``...), from its first bytes;
    ``image/png`` when they are no image's (the server will say what is wrong)."""
    try:
        head = base64.b64decode(encoded[:44] + "=" * (-len(encoded[:44]) % 4))
    except ValueError:
        return "image/png"
    info = sniff_image(head)
    return info.mime if info is not None else "image/png"


def _png(head: bytes) -> ImageInfo | None:
    # The first chunk is IHDR: its length (13), type, then width and height (big-endian).
    if len(head) < 24 or head[12:16] != b"IHDR":
        return None
    width, height = struct.unpack_from(">II", head, 16)
    return ImageInfo("image/png", width, height)


def _jpeg_size(head: bytes) -> tuple[int, int]:
    """Walk the JPEG's segments to its frame header; (0, 0) when it is not in ``head``."""
    at = 2
    while at + 4 <= len(head):
        if head[at] != 0xFF:
            return 0, 0
        marker = head[at + 1]
        if marker == 0xFF:  # fill bytes before a marker
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            at += 2
            continue
        (length,) = struct.unpack_from(">H", head, at + 2)
        if length < 2:
            return 0, 0
        if marker in _SOF:
            if at + 9 > len(head):
                return 0, 0
            height, width = struct.unpack_from(">HH", head, at + 5)
            return width, height
        if marker == 0xDA:  # the scan starts: no frame header came before it
            return 0, 0
        at += 2 + length
    return 0, 0


def _webp(head: bytes) -> ImageInfo:
    chunk = head[12:16]
    width = height = 0
    if chunk == b"VP8 " and len(head) >= 30 and head[23:26] == b"\x9d\x01\x2a":
        w, h = struct.unpack_from("<HH", head, 26)
        width, height = w & 0x3FFF, h & 0x3FFF
    elif chunk == b"VP8L" and len(head) >= 25 and head[20] == 0x2F:
        (bits,) = struct.unpack_from("<I", head, 21)
        width, height = (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    elif chunk == b"VP8X" and len(head) >= 30:
        width = int.from_bytes(head[24:27], "little") + 1
        height = int.from_bytes(head[27:30], "little") + 1
    return ImageInfo("image/webp", width, height)
