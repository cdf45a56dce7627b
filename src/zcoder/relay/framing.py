"""The frame around every payload on the wire: ``ZCODER-AGENT/1 <length>\\n`` and the bytes
(the wire spec's "Framing"); a header is judged as soon as its bytes cannot start a valid one."""

from __future__ import annotations

from typing import Final

from zcoder.relay.protocol import FrameError

__all__ = ["MAGIC", "MAX_HEADER_BYTES", "encode_frame", "parse_header"]

MAGIC: Final = b"ZCODER-AGENT/1 "
# Room for the magic, a generous run of leading zeros and the LF. A header that has not
# ended by then can never be valid, so the reader stops waiting for it.
MAX_HEADER_BYTES: Final = 64


def encode_frame(payload: bytes, max_bytes: int) -> bytes:
    if not 1 <= len(payload) <= max_bytes:
        raise FrameError(f"payload of {len(payload)} bytes is outside 1..{max_bytes}")
    return MAGIC + str(len(payload)).encode("ascii") + b"\n" + payload


def parse_header(buffer: bytes, max_bytes: int) -> tuple[int, int] | None:
    """Parse a frame header at the start of ``buffer``.

    Returns ``(payload_length, header_length)``, or ``None`` when more bytes are needed.
    Raises FrameError as soon as the bytes seen cannot start a valid header.
    """
    prefix = buffer[: len(MAGIC)]
    if not MAGIC.startswith(prefix):
        raise FrameError("frame does not start with ZCODER-AGENT/1")
    if len(buffer) <= len(MAGIC):
        return None
    end = buffer.find(b"\n", len(MAGIC), MAX_HEADER_BYTES)
    digits = buffer[len(MAGIC) : end if end >= 0 else MAX_HEADER_BYTES]
    if not digits.isdigit() and digits:
        raise FrameError("frame length is not a decimal number")
    if end < 0:
        if len(buffer) >= MAX_HEADER_BYTES:
            raise FrameError("frame header is too long")
        return None
    if not digits:
        raise FrameError("frame length is missing")
    length = int(digits)
    if length < 1:
        raise FrameError("frame length must be at least 1")
    if length > max_bytes:
        raise FrameError(f"frame of {length} bytes exceeds the limit of {max_bytes}")
    return length, end + 1
