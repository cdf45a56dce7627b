"""Which hosts and addresses ``fetch_url`` may reach: the allow and deny lists, and the
address rule.

The lists are the user's (ZCODER_WEB_ALLOW, ZCODER_WEB_DENY: zcoder.options). Each entry
is a host name (``docs.python.org``), a name with its subdomains (``*.python.org`` or
``.python.org``), an address (``127.0.0.1``, ``::1``) or a network (``10.0.0.0/8``). The
deny list may also be ``*``: every host not on the allow list.

* A host on the deny list is never fetched (the allow list does not lift it, except over
  ``*``).
* An address that is not public (private, loopback, link-local, multicast, reserved,
  unspecified, shared) is never connected to, unless the allow list names it: its network
  or address, or the host name it was found for (the user vouches for that name). Every
  address a name resolves to is checked, and so is the address actually connected to
  (zcoder.tools.web.connect): a name cannot resolve to a public address when checked and
  to a private one when connected (DNS rebinding).

This module imports nothing heavy: the options table reads its parser at start-up.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

__all__ = [
    "DEFAULT_WEB_MAX_BYTES",
    "DEFAULT_WEB_TIMEOUT",
    "Address",
    "HostEntry",
    "WebRules",
    "parse_host_list",
]

DEFAULT_WEB_MAX_BYTES: Final = 2 * 1024 * 1024
"""The most bytes of one response body fetch_url reads (ZCODER_WEB_MAX_BYTES): a page of
documentation is far less; converting megabytes of HTML takes seconds of a core, and the
model gets at most the tool output limit of it anyway."""
DEFAULT_WEB_TIMEOUT: Final = 30.0
"""Seconds one fetch_url call may spend on the network, redirects included
(ZCODER_WEB_TIMEOUT); connecting gets at most CONNECT_TIMEOUT of it."""
CONNECT_TIMEOUT: Final = 10.0
"""Seconds one connection may take to open."""

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
ANY_HOST: Final = "*"


@dataclass(frozen=True)
class HostEntry:
    """One entry of a list: a name (``subdomains``: the name's too), or a network."""

    name: str = ""
    subdomains: bool = False
    network: Network | None = None

    def matches_name(self, host: str) -> bool:
        if not self.name:
            return False
        if host == self.name:
            return True
        return self.subdomains and host.endswith("." + self.name)

    def matches_address(self, address: Address) -> bool:
        return self.network is not None and address in self.network

    def __str__(self) -> str:
        if self.network is not None:
            return str(self.network)
        return f"*.{self.name}" if self.subdomains else self.name


def normal_host(host: str) -> str:
    """A host as the lists compare it: lower case, no brackets, no trailing dot."""
    return host.strip().strip("[]").rstrip(".").lower()


def as_address(host: str) -> Address | None:
    """``host`` as an address when it is one (IPv4-mapped IPv6 read as the IPv4)."""
    try:
        address = ipaddress.ip_address(normal_host(host).split("%", 1)[0])
    except ValueError:
        return None
    return unmapped(address)


def unmapped(address: Address) -> Address:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def parse_entry(raw: str) -> HostEntry:
    """One entry of a list; ValueError says what is wrong with it."""
    text = normal_host(raw)
    if not text:
        raise ValueError("an empty entry")
    if "://" in text:
        raise ValueError(f"{raw.strip()!r} is a URL: give its host only")
    if "/" in text:
        try:
            return HostEntry(network=ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ValueError(f"{raw.strip()!r} is not a network (like 10.0.0.0/8)") from None
    address = as_address(text)
    if address is not None:
        return HostEntry(network=ipaddress.ip_network(address))
    subdomains = text.startswith(("*.", "."))
    name = text.removeprefix("*").removeprefix(".")
    if not name or any(not part for part in name.split(".")) or any(c in name for c in " :/*@"):
        raise ValueError(f"{raw.strip()!r} is not a host name, address or network")
    return HostEntry(name=name, subdomains=subdomains)


def parse_host_list(raw: str) -> tuple[str, ...]:
    """A comma- or space-separated list, checked; ValueError names the bad entry. Kept as
    text (``*`` included), read into entries by WebRules."""
    entries = tuple(part for part in raw.replace(",", " ").split() if part)
    for entry in entries:
        if entry != ANY_HOST:
            parse_entry(entry)
    return entries


def is_public(address: Address) -> bool:
    """Whether ``address`` is an ordinary public unicast address."""
    address = unmapped(address)
    return address.is_global and not address.is_multicast and not address.is_reserved


@dataclass(frozen=True)
class WebRules:
    """The lists and the caps of fetch_url, as the user set them."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    max_bytes: int = DEFAULT_WEB_MAX_BYTES
    timeout: float = DEFAULT_WEB_TIMEOUT

    @property
    def allowed(self) -> list[HostEntry]:
        return _entries(self.allow)

    @property
    def denied(self) -> list[HostEntry]:
        return _entries(self.deny)

    def _on(self, entries: Iterable[HostEntry], host: str) -> bool:
        address = as_address(host)
        if address is not None:
            return any(entry.matches_address(address) for entry in entries)
        return any(entry.matches_name(normal_host(host)) for entry in entries)

    def host_refusal(self, host: str) -> str | None:
        """Why ``host`` may not be fetched by the lists, or None."""
        if self._on(self.denied, host):
            return f"the host {normal_host(host)!r} is on the deny list (ZCODER_WEB_DENY)"
        if ANY_HOST in self.deny and not self._on(self.allowed, host):
            return (
                f"the host {normal_host(host)!r} is not on the allow list (ZCODER_WEB_ALLOW), "
                "and ZCODER_WEB_DENY=* refuses every other host"
            )
        return None

    def address_refusal(self, host: str, address: Address) -> str | None:
        """Why connecting to ``address`` for ``host`` is refused, or None."""
        address = unmapped(address)
        if any(entry.matches_address(address) for entry in self.denied):
            return f"the address {address} of {normal_host(host)!r} is on the deny list"
        if is_public(address):
            return None
        allowed = self.allowed
        if any(entry.matches_address(address) for entry in allowed):
            return None
        if as_address(host) is None and self._on(allowed, host):
            return None
        return (
            f"{normal_host(host)!r} is at {address}, a {_kind(address)} address, which is "
            "never fetched unless the allow list (ZCODER_WEB_ALLOW) names it"
        )


def _entries(raw: Iterable[str]) -> list[HostEntry]:
    return [parse_entry(entry) for entry in raw if entry != ANY_HOST]


def _kind(address: Address) -> str:
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if address.is_unspecified:
        return "unspecified"
    if address.is_private:
        return "private"
    return "reserved"
