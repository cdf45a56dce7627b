"""Turning what a user types for ``--host``, ``$OLLAMA_HOST`` or ``--base-url`` into a URL.

The rules follow Ollama's own reading of ``OLLAMA_HOST``, so one value means the same
thing to ``ollama`` and to zcoder: without a scheme the default is ``http`` on port
11434; with an explicit ``http://`` or ``https://`` and no port, the scheme's own port
(80 or 443) is used, as Ollama does. An OpenAI-compatible server's base URL gets
``/v1`` when it names no path.

No HTTP library is imported here: the settings are read at start-up, before the first
frame, and the model clients later.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "normalize_base_url",
    "normalize_host",
]

DEFAULT_PORT = 11434
DEFAULT_HOST = f"http://127.0.0.1:{DEFAULT_PORT}"
_DEFAULT_HOSTNAME = "127.0.0.1"
_SCHEME_PORTS = {"http": 80, "https": 443}
DEFAULT_BASE_URL = "http://127.0.0.1:8080/v1"
"""Where an OpenAI-compatible server (llama-server, LM Studio, vLLM) is looked for."""


def normalize_host(value: str) -> str:
    """Return ``scheme://host:port[/path]`` for ``value``; raise ``ValueError`` if invalid.

    Accepted: ``""`` (the default), ``host``, ``host:port``, ``:port``, ``[v6]:port``,
    a bare IPv6 address, and ``http://`` or ``https://`` URLs with an optional path
    prefix (for a reverse proxy). The result always names its port.
    """
    text = value.strip()
    if not text:
        return DEFAULT_HOST
    scheme, sep, rest = text.partition("://")
    if sep:
        scheme = scheme.lower()
        if scheme not in _SCHEME_PORTS:
            raise ValueError(f"unsupported scheme in Ollama host {value!r}; use http or https")
        default_port = _SCHEME_PORTS[scheme]
    else:
        scheme, rest, default_port = "http", text, DEFAULT_PORT
    if _is_bare_ipv6(rest):
        address, slash, path = rest.partition("/")
        rest = f"[{address}]{slash}{path}"
    elif not rest or rest.startswith(("/", ":")):
        rest = _DEFAULT_HOSTNAME + rest
    try:
        parts = urlsplit(f"{scheme}://{rest}")
    except ValueError:
        raise ValueError(f"invalid Ollama host {value!r}") from None
    if parts.query or parts.fragment:
        raise ValueError(f"Ollama host {value!r} must not have a query or fragment")
    if parts.username is not None or parts.password is not None:
        raise ValueError(f"Ollama host {value!r} must not contain credentials")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"invalid port in Ollama host {value!r}") from None
    if parts.netloc.endswith(":"):
        raise ValueError(f"missing port after ':' in Ollama host {value!r}")
    hostname = parts.hostname or _DEFAULT_HOSTNAME
    if port == 0:
        raise ValueError(f"invalid port in Ollama host {value!r}")
    if ":" in hostname:
        hostname = f"[{hostname}]"
    elif not _valid_hostname(hostname):
        raise ValueError(f"invalid host name in Ollama host {value!r}")
    path = parts.path.rstrip("/")
    return f"{scheme}://{hostname}:{port or default_port}{path}"


def _is_bare_ipv6(text: str) -> bool:
    address = text.split("/", 1)[0]
    if address.count(":") < 2 or address.startswith("["):
        return False
    try:
        ipaddress.IPv6Address(address)
    except ValueError:
        return False
    return True


def _valid_hostname(name: str) -> bool:
    if len(name) > 253:
        return False
    labels = name.rstrip(".").split(".")
    return all(
        0 < len(label) <= 63
        and not label.startswith("-")
        and not label.endswith("-")
        and all(ch.isascii() and (ch.isalnum() or ch in "-_") for ch in label)
        for label in labels
    )


# -- the base URL -----------------------------------------------------------------------


def normalize_base_url(value: str) -> str:
    """``scheme://host:port/path`` for what a user typed; raise ``ValueError`` if unusable.

    ``host:port`` gets ``http://``; an empty path gets ``/v1`` (the OpenAI convention all
    three servers follow); a trailing slash is dropped. Credentials in the URL are refused:
    the key belongs in ZCODER_API_KEY, where it is never shown.
    """
    text = value.strip()
    if not text:
        return DEFAULT_BASE_URL
    if "://" not in text:
        text = "http://" + text
    if "@" in text.split("://", 1)[1].split("/", 1)[0]:
        # Checked first, so no message below ever repeats a password.
        raise ValueError("the base URL must not contain credentials; set ZCODER_API_KEY instead")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise ValueError(f"invalid base URL {value!r}") from None
    scheme = parts.scheme.lower()
    if scheme not in _SCHEME_PORTS:
        raise ValueError(f"unsupported scheme in base URL {value!r}; use http or https")
    if parts.query or parts.fragment:
        raise ValueError(f"base URL {value!r} must not have a query or fragment")
    hostname = parts.hostname
    if not hostname:
        raise ValueError(f"base URL {value!r} names no host")
    if port == 0:
        raise ValueError(f"invalid port in base URL {value!r}")
    if ":" in hostname:
        hostname = f"[{hostname}]"
    path = parts.path.rstrip("/") or "/v1"
    return f"{scheme}://{hostname}:{port or _SCHEME_PORTS[scheme]}{path}"
