"""Flat JSON objects, the relay's payloads: one object of scalar members, decoded with
every member name unique and every string valid Unicode, encoded compactly in the given
key order with non-ASCII as raw UTF-8 (as zcoder.zsh writes it). Pure: no sockets, no
files. zcoder.relay.protocol builds the wire's requests and acks on it.
"""

from __future__ import annotations

import json
import json.encoder
import json.scanner
from collections.abc import Mapping
from typing import Final

from zcoder.base.errors import ZcoderError

Scalar = str | int | float | bool | None
FlatObject = dict[str, Scalar]


class FrameError(ZcoderError, ValueError):
    """The bytes are not a well-formed frame or flat JSON object."""


def _reject_constant(name: str) -> object:
    raise FrameError(f"{name} is not valid JSON")


def _unique_pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise FrameError(f"duplicate member {key!r}")
        result[key] = value
    return result


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


# One decoder for every payload (building one per call cost a tenth of a client's round trip).
_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs, parse_constant=_reject_constant)


# The same decoder's C scanner, handing each object's members over as a tuple of pairs (a
# C call, where _unique_pairs is a Python loop): decode_flat_object's first try.
_SCAN_PAIRS: Final = json.scanner.make_scanner(
    json.JSONDecoder(object_pairs_hook=tuple, parse_constant=_reject_constant)  # type: ignore[arg-type]
)
_NESTED: Final = frozenset((tuple, list))  # a nested object (as pairs) or array


def _flat_object_in_c(payload: bytes) -> FlatObject | None:
    """The payload's members when it is plainly a flat object (no escape that could hold
    a surrogate, no space around it, no duplicate, scalars only), checked in C; else None,
    and the caller decides it the slower way, which says what is wrong."""
    if b"\\u" in payload:
        return None
    try:
        text = payload.decode("utf-8")
        pairs, end = _SCAN_PAIRS(text, 0)
    except (ValueError, StopIteration, RecursionError):  # the slower way names the fault
        return None
    if end != len(text) or type(pairs) is not tuple:
        return None
    value: FlatObject = dict(pairs)
    if len(value) != len(pairs) or not _NESTED.isdisjoint(map(type, value.values())):
        return None
    return value


def decode_flat_object(payload: bytes) -> FlatObject:
    """Decode a payload that must be one flat JSON object of scalar members."""
    value = _flat_object_in_c(payload)
    return value if value is not None else _decode_checked(payload)


def _decode_checked(payload: bytes) -> FlatObject:
    """decode_flat_object member by member: what is wrong with the payload, or its members."""
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FrameError(f"payload is not UTF-8: {exc.reason}") from None
    try:
        value = _DECODER.decode(text)
    except FrameError:
        raise
    except (ValueError, RecursionError) as exc:
        raise FrameError(f"payload is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise FrameError("payload is not a JSON object")
    if b"\\u" not in payload:
        # Decoded UTF-8 never holds a lone surrogate: only a JSON \u escape can make one.
        for key, member in value.items():
            if isinstance(member, dict | list):
                raise FrameError(f"member {key!r} is not a scalar; the object must be flat")
        return value
    result: FlatObject = {}
    for key, member in value.items():
        if _has_lone_surrogate(key):
            raise FrameError("member name is not valid Unicode")
        if isinstance(member, str):
            if _has_lone_surrogate(member):
                raise FrameError(f"member {key!r} is not valid Unicode")
        elif isinstance(member, dict | list):
            raise FrameError(f"member {key!r} is not a scalar; the object must be flat")
        result[key] = member
    return result


# json.dumps(..., ensure_ascii=False)'s own string quoting (its C version where built).
_quote: Final = json.encoder.encode_basestring


def encode_flat_object(members: Mapping[str, Scalar]) -> bytes:
    """Compact JSON in the given key order; non-ASCII as raw UTF-8, as zcoder.zsh writes it."""
    return json.dumps(dict(members), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
