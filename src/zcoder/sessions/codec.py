"""How user-derived values are written into the store's columns, and read back.

Every user-derived string is stored as a JSON string literal and every message or metadata
document as a JSON object (see zcoder.sessions.schema): any Python str, NUL and lone
surrogates included, comes back exactly as it went in. A column that does not decode means
the file was damaged or edited by hand; :class:`MalformedRow` says so, and the store's one
transaction helper turns it into a StoreCorruptError naming the file.
"""

from __future__ import annotations

import json
from typing import Any, cast


class MalformedRow(Exception):
    """A row this code cannot decode: the file was damaged or edited by hand."""


def enc(text: str) -> str:
    return json.dumps(text)


def _load(stored: object, kind: type, column: str) -> object:
    try:
        value = json.loads(cast(str, stored))
    except (TypeError, ValueError) as exc:
        raise MalformedRow(f"{column} column holds {stored!r:.80}") from exc
    if not isinstance(value, kind):
        raise MalformedRow(f"{column} column holds {stored!r:.80}")
    return value


def dec(stored: object) -> str:
    return cast(str, _load(stored, str, "text"))


def enc_doc(value: dict[str, Any], what: str) -> str:
    if not isinstance(value, dict):
        raise TypeError(f"{what} must be a dict, not {type(value).__name__}")
    try:
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{what} must hold JSON values only: {exc}") from exc


def dec_doc(stored: object) -> dict[str, Any]:
    return cast(dict[str, Any], _load(stored, dict, "JSON"))
