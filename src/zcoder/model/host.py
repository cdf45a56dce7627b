"""Turning what a user types for ``--host`` or ``$OLLAMA_HOST`` into a base URL.

The rules follow Ollama's own reading of ``OLLAMA_HOST``, so one value means the same
thing to ``ollama`` and to zcoder: without a scheme the default is ``http`` on port
11434; with an explicit ``http://`` or ``https://`` and no port, the scheme's own port
(80 or 443) is used, as Ollama does.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "normalize_host"]

DEFAULT_PORT = 11434
DEFAULT_HOST = f"http://127.0.0.1:{DEFAULT_PORT}"
_DEFAULT_HOSTNAME = "127.0.0.1"
_SCHEME_PORTS = {"http": 80, "https": 443}


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
