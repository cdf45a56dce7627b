"""One HTTP(S) GET, to an address checked by the rules: no redirect followed, the body read
up to a cap, the whole bounded in time.

httpcore (httpx's own engine, a dependency of httpx) takes a network backend: here it is
``PinnedBackend``, which resolves the host itself, checks every address the name
resolves to (zcoder.tools.web.rules), connects to them by address (the first that answers),
and checks the address the socket is actually connected to before a byte is sent. The URL keeps its
host name, so the Host header, TLS's SNI and the certificate check are the name's. No
proxy is read from the environment (a proxy would make the address checks meaningless),
and a redirect is returned, not followed: the caller checks its target again.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import typing
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final

import anyio
import certifi
import httpcore

from zcoder import __version__
from zcoder.tools.web.rules import CONNECT_TIMEOUT, Address, WebRules, as_address, unmapped

__all__ = ["FetchError", "Fetched", "PinnedBackend", "Resolver", "fetch_once", "system_resolve"]

Resolver = Callable[[str, int], Awaitable[list[Address]]]
"""A host name and port → its addresses (tests give their own)."""

CHUNK: Final = 64 * 1024
HEADERS: Final = [
    (b"User-Agent", f"zcoder/{__version__} (fetch_url)".encode()),
    (b"Accept", b"text/html, text/markdown, text/plain, application/pdf;q=0.9, */*;q=0.5"),
    (b"Accept-Encoding", b"gzip, deflate"),
]


class FetchError(Exception):
    """The page could not be fetched; the message says why, for the model and the user."""


@dataclass
class Fetched:
    """One response: its status, headers (names in lower case) and body (capped)."""

    url: str
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    truncated: bool = False
    """The body was longer than the cap; ``body`` is its beginning."""

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    @property
    def charset(self) -> str | None:
        for param in self.headers.get("content-type", "").split(";")[1:]:
            key, _, value = param.partition("=")
            if key.strip().lower() == "charset" and value.strip():
                return value.strip().strip("\"'")
        return None


async def system_resolve(host: str, port: int) -> list[Address]:
    """Every address ``host`` resolves to, in the resolver's order, each once."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise FetchError(f"the host {host!r} could not be resolved ({exc})") from None
    found: dict[Address, None] = {}
    for _family, _type, _proto, _name, sockaddr in infos:
        address = as_address(str(sockaddr[0]))
        if address is not None:
            found.setdefault(address)
    return list(found)


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects only to addresses the rules allow, and only to the one it checked."""

    def __init__(
        self,
        rules: WebRules,
        resolve: Resolver,
        inner: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._rules = rules
        self._resolve = resolve
        self._inner = inner or httpcore.AnyIOBackend()
        """What opens the socket (tests give one that lands elsewhere than asked)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        literal = as_address(host)
        addresses = [literal] if literal is not None else await self._resolve(host, port)
        if not addresses:
            raise FetchError(f"the host {host!r} resolves to no address")
        for address in addresses:  # every one: the connection must not pick a bad one
            refusal = self._rules.address_refusal(host, address)
            if refusal is not None:
                raise FetchError(refusal)
        failure: httpcore.ConnectError | None = None
        for chosen in addresses:  # in the resolver's order, the next when one cannot connect
            try:
                stream = await self._inner.connect_tcp(
                    str(chosen), port, timeout, local_address, socket_options
                )
            except httpcore.ConnectError as exc:
                failure = exc
                continue
            refusal = self._connected_refusal(host, chosen, stream.get_extra_info("server_addr"))
            if refusal is not None:
                await stream.aclose()
                raise FetchError(refusal)
            return stream
        assert failure is not None
        raise failure

    def _connected_refusal(self, host: str, chosen: Address, peer: object) -> str | None:
        try:
            assert isinstance(peer, tuple)
            connected = unmapped(ipaddress.ip_address(str(peer[0]).split("%", 1)[0]))
        except (AssertionError, IndexError, ValueError):
            return f"the address connected to for {host!r} could not be read ({peer!r})"
        if connected != unmapped(chosen):
            return f"connected to {connected}, not to the address checked ({chosen})"
        return self._rules.address_refusal(host, connected)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise FetchError("fetch_url never connects to a Unix socket")

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


def _ssl_context() -> ssl.SSLContext:
    """Certificates checked against the CA bundle httpx itself uses (certifi)."""
    return ssl.create_default_context(cafile=certifi.where())


async def fetch_once(url: str, rules: WebRules, *, seconds: float, resolve: Resolver) -> Fetched:
    """GET ``url`` (its host already checked by the lists), within ``seconds``; the body
    is read up to ``rules.max_bytes``. FetchError says what went wrong."""
    timeouts = {
        "connect": min(CONNECT_TIMEOUT, seconds),
        "read": seconds,
        "write": seconds,
        "pool": seconds,
    }
    pool = httpcore.AsyncConnectionPool(
        ssl_context=_ssl_context(),
        network_backend=PinnedBackend(rules, resolve),
        max_connections=1,
        retries=0,
    )
    try:
        async with (
            pool,
            asyncio.timeout(seconds),
            pool.stream("GET", url, headers=HEADERS, extensions={"timeout": timeouts}) as response,
        ):
            fetched = Fetched(url, response.status, _headers(response.headers))
            await _read_body(response, fetched, rules.max_bytes)
            return fetched
    except TimeoutError:
        raise FetchError(
            f"the page did not arrive within {seconds:g} s (ZCODER_WEB_TIMEOUT)"
        ) from None
    except httpcore.TimeoutException as exc:
        raise FetchError(f"the server did not answer in time ({type(exc).__name__})") from None
    except httpcore.UnsupportedProtocol as exc:
        raise FetchError(f"the URL cannot be fetched: {exc}") from None
    except (httpcore.NetworkError, httpcore.ProtocolError) as exc:
        raise FetchError(f"the connection failed: {exc or type(exc).__name__}") from None


def _headers(raw: list[tuple[bytes, bytes]]) -> dict[str, str]:
    return {
        name.decode("latin-1").lower(): value.decode("latin-1", errors="replace")
        for name, value in raw
    }


async def _read_body(response: httpcore.Response, fetched: Fetched, cap: int) -> None:
    """The body, decompressed (gzip, deflate) and cut at ``cap`` bytes, either way."""
    encoding = fetched.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("identity", "gzip", "x-gzip", "deflate", ""):
        raise FetchError(f"the server sent the page in an encoding zcoder cannot read: {encoding}")
    inflate = None
    if encoding in ("gzip", "x-gzip", "deflate"):
        inflate = zlib.decompressobj(47)  # 32 + 15: a gzip or a zlib header, either
    body = bytearray()
    stream = typing.cast(typing.AsyncIterable[bytes], response.stream)
    async for chunk in stream:
        try:
            data = chunk if inflate is None else inflate.decompress(chunk, cap + 1 - len(body))
        except zlib.error as exc:
            raise FetchError(f"the page's {encoding} data is broken ({exc})") from None
        body.extend(data[: cap + 1 - len(body)])
        if len(body) > cap:
            fetched.truncated = True
            del body[cap:]
            break
    fetched.body = bytes(body)
