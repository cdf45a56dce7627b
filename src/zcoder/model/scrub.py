"""Server text made safe to show and store: bounded, and scrubbed of secrets.

A server's error body is text zcoder did not write. It may repeat the API key (some
proxies echo the request's headers), reversed, upper-cased, split by spaces or
punctuation, base64- or URL-encoded, or it may hold some other bearer secret. Every path
that shows or stores server text (error messages, mid-stream errors, quotes of a
malformed reply, transport errors) goes through :func:`scrub_server_text`, usually by way
of :func:`server_error_summary`, so the session database and the screen get a short
summary with ``***`` where a secret was.

What counts as a secret:

* the key zcoder sent (``secrets``), in any case, reversed, with up to
  ``MAX_SEPARATOR_RUN`` blanks or punctuation between any two of its characters, and its
  base64 (standard and URL-safe, with or without padding), URL-encoded and hex forms, alone
  or as ``Bearer KEY``;
* any value after ``Bearer`` or ``Basic``, or after a name such as ``api_key``, ``token``,
  ``password`` or ``secret`` and ``=`` or ``:``;
* a token that looks like a key: a known key prefix (``sk-``, ``hf_``, ``ghp_``, ...)
  with ``MIN_PREFIXED_TOKEN`` characters after it, or a run of ``MIN_OPAQUE_TOKEN``
  letters and digits (both) without separators, which words, paths and model names
  never are.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Final
from urllib.parse import quote, quote_plus

__all__ = [
    "MASK",
    "QUOTE_LIMIT",
    "SCAN_LIMIT",
    "SERVER_TEXT_LIMIT",
    "quote_server_text",
    "scrub_server_text",
    "server_error_summary",
]

MASK: Final = "***"
SERVER_TEXT_LIMIT: Final = 500
"""The most characters of a server's text an error message quotes."""
SCAN_LIMIT: Final = 64 * 1024
"""The most characters of a server's body read for its summary (the rest is dropped)."""
QUOTE_LIMIT: Final = 200
"""The most characters of a bad piece of a reply (a line, a tool call's arguments) that a
message quotes."""
MAX_SEPARATOR_RUN: Final = 8
"""Blanks or punctuation allowed between two characters of a split-up key."""
MIN_SPLIT_KEY: Final = 8
"""Keys shorter than this (letters and digits) are matched only whole, not split up."""
MIN_PREFIXED_TOKEN: Final = 12
MIN_OPAQUE_TOKEN: Final = 24

_KEY_PREFIXES: Final = (
    "sk-",
    "sk_",
    "pk-",
    "pk_",
    "rk-",
    "xai-",
    "hf_",
    "ghp_",
    "gho_",
    "ghs_",
    "github_pat_",
    "glpat-",
    "xox",
    "AKIA",
    "AIza",
)
_PREFIXED = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    + "|".join(re.escape(prefix) for prefix in _KEY_PREFIXES)
    + rf")[A-Za-z0-9_\-]{{{MIN_PREFIXED_TOKEN},}}",
    re.IGNORECASE,
)
_NAMED = re.compile(
    r"(?P<name>\b(?:bearer|basic)\s+|"
    r"\b(?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|secret|password|passwd"
    r"|authorization|x-api-key)\b[\"']?\s*[:=]\s*[\"']?(?:bearer\s+|basic\s+)?)"
    r"(?P<value>[^\s\"',;}&]{6,})",
    re.IGNORECASE,
)
_OPAQUE = re.compile(rf"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/=_\-]{{{MIN_OPAQUE_TOKEN},}}")
_SEGMENT = re.compile(r"[A-Za-z0-9]+")


def _looks_opaque(token: str) -> bool:
    """A long run of letters and digits (both) with no word structure: a key, a digest."""
    for segment in _SEGMENT.findall(token):
        if (
            len(segment) >= MIN_OPAQUE_TOKEN
            and any(c.isdigit() for c in segment)
            and any(c.isalpha() for c in segment)
        ):
            return True
    return False


def _encodings(secret: str) -> set[str]:
    """The forms a server may repeat ``secret`` in, besides the plain text."""
    forms = {secret, quote(secret, safe=""), quote_plus(secret)}
    for plain in (secret, f"Bearer {secret}"):
        raw = plain.encode()
        for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
            text = encoded.decode()
            forms.add(text)
            forms.add(text.rstrip("="))
        forms.add(binascii.hexlify(raw).decode())
    return {form for form in forms if form}


@lru_cache(maxsize=16)
def _secret_patterns(secret: str) -> tuple[re.Pattern[str], ...]:
    patterns = []
    for form in sorted(_encodings(secret), key=len, reverse=True):
        patterns.append(re.compile(re.escape(form), re.IGNORECASE))
        patterns.append(re.compile(re.escape(form[::-1]), re.IGNORECASE))
    core = "".join(c for c in secret if c.isalnum())
    if len(core) >= MIN_SPLIT_KEY:
        gap = rf"[\W_]{{0,{MAX_SEPARATOR_RUN}}}"
        for chars in (core, core[::-1]):
            patterns.append(re.compile(gap.join(re.escape(c) for c in chars), re.IGNORECASE))
    return tuple(patterns)


def scrub_server_text(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every form of ``secrets`` and every token that looks like a secret
    replaced by ``***`` (see the module docstring). Not bounded: see server_error_summary."""
    for secret in secrets:
        if secret and secret.strip():
            for pattern in _secret_patterns(secret.strip()):
                text = pattern.sub(MASK, text)
    text = _NAMED.sub(lambda m: m.group("name") + MASK, text)
    text = _PREFIXED.sub(MASK, text)
    return _OPAQUE.sub(lambda m: MASK if _looks_opaque(m.group()) else m.group(), text)


def quote_server_text(text: str, secrets: Iterable[str | None] = ()) -> str:
    """A bad piece of the server's reply, scrubbed and bounded, quoted (``repr``) for a
    message."""
    text = scrub_server_text(text[: QUOTE_LIMIT * 4], secrets)
    if len(text) > QUOTE_LIMIT:
        text = text[:QUOTE_LIMIT] + "…"
    return repr(text)


def _message_of(payload: object) -> str | None:
    """The human message of an error body in the forms servers use, if it has one."""
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict):
            found = _message_of(error)
            if found is not None:
                return found
        if isinstance(error, str) and error.strip():
            return error
        for key in ("message", "detail", "msg"):
            value = payload.get(key)
            if isinstance(value, str) and value.strip():
                return value
            if isinstance(value, list | dict):
                inner = _message_of(value)
                if inner is not None:
                    return inner
    if isinstance(payload, list):
        for item in payload:
            inner = _message_of(item)
            if inner is not None:
                return inner
    return None


def server_error_summary(
    body: object, secrets: Iterable[str | None] = (), *, limit: int = SERVER_TEXT_LIMIT
) -> str:
    """A short, scrubbed summary of what a server said: its message field when the body
    is JSON (text or decoded), else the text; on one line, at most ``limit`` characters."""
    payload = body
    if isinstance(body, bytes):
        body = body[: SCAN_LIMIT * 4].decode("utf-8", errors="replace")
    if isinstance(body, str):
        text = body[:SCAN_LIMIT]
        try:
            payload = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            payload = None
    else:
        text = ""
    message = _message_of(payload)
    if message is not None:
        text = message
    elif payload is not None and not isinstance(body, str):
        text = json.dumps(payload, ensure_ascii=False, default=str)
    text = " ".join(scrub_server_text(text[:SCAN_LIMIT], secrets).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text
