"""Talking to other instances: one request per connection, discovery, sending.

Discovery is the one function behind both the model's ``list_agents`` tool and the
user's ``/list-agents`` command, so liveness, sorting and bounds cannot drift apart.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import itertools
import os
import selectors
import socket
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from zcoder.base.errors import ZcoderError
from zcoder.relay.framing import encode_frame, parse_header
from zcoder.relay.peercred import peer_credentials
from zcoder.relay.protocol import (
    Ack,
    FrameError,
    parse_ack,
    ping_request,
)
from zcoder.relay.registry import (
    Manifest,
    ManifestError,
    RegistryError,
    check_registry_dir,
    list_manifest_names,
    read_manifest_file,
    socket_path,
)

# A reply larger than this is not an ack of ours or of zcoder.zsh.
MAX_ACK_BYTES: Final = 4096
_ping_counter = itertools.count(1)
CONNECT_RETRY_INTERVAL: Final = 0.005


class TransportError(ZcoderError):
    """A request that got no well-formed acknowledgement.

    ``ambiguous`` is True when the request may have reached the receiver (it was written,
    at least in part), so the sender may retry once with the same message_id.
    """

    def __init__(self, reason: str, *, ambiguous: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.ambiguous = ambiguous


def _check_listener_socket(path: Path) -> None:
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise TransportError(f"socket {path.name} is missing ({exc.strerror})", ambiguous=False)
    if not stat.S_ISSOCK(st.st_mode):
        raise TransportError(f"{path.name} is not a socket", ambiguous=False)
    if st.st_uid != os.geteuid():
        raise TransportError(f"socket {path.name} belongs to another user", ambiguous=False)


def _read_response(sock: socket.socket, deadline: float) -> Ack:
    buffer = bytearray()
    expected: int | None = None
    header_len = 0
    first = True
    while expected is None or len(buffer) < expected:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TransportError("no acknowledgement before the deadline", ambiguous=True)
        if not first:  # the first read keeps the timeout the connect set (the usual case)
            sock.settimeout(remaining)
        first = False
        try:
            chunk = sock.recv(MAX_ACK_BYTES)
        except TimeoutError:
            raise TransportError("no acknowledgement before the deadline", ambiguous=True)
        except OSError as exc:
            raise TransportError(f"connection failed: {exc.strerror}", ambiguous=True)
        if not chunk:
            raise TransportError("connection closed before the acknowledgement", ambiguous=True)
        buffer += chunk
        if expected is None:
            try:
                header = parse_header(bytes(buffer[:64]), MAX_ACK_BYTES)
            except FrameError as exc:
                raise TransportError(f"malformed acknowledgement: {exc}", ambiguous=True)
            if header is not None:
                length, header_len = header
                expected = header_len + length
    try:
        return parse_ack(bytes(buffer[header_len:expected]))
    except FrameError as exc:
        raise TransportError(f"malformed acknowledgement: {exc}", ambiguous=True) from None


def _connect(sock: socket.socket, path: Path, deadline: float) -> None:
    """Connect before ``deadline``. A listener whose backlog is full refuses at once with
    EAGAIN (nothing was sent): that is tried again, with short growing pauses, until the
    deadline. Any other failure is final."""
    pause = CONNECT_RETRY_INTERVAL
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TransportError(
                "connection timed out (the peer's queue of connections stayed full)",
                ambiguous=False,
            )
        sock.settimeout(remaining)
        try:
            sock.connect(os.fspath(path))
            return
        except TimeoutError:
            raise TransportError("connection timed out", ambiguous=False)
        except BlockingIOError:
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, 0.05)
        except OSError as exc:
            raise TransportError(f"cannot connect: {exc.strerror}", ambiguous=False)


def request(path: Path, payload: bytes, *, timeout: float, max_bytes: int) -> Ack:
    """Send one framed request to the socket at ``path`` and return its acknowledgement.

    Nothing is sent before the kernel says the listener is this user's (SO_PEERCRED; where
    it cannot say, the socket file's owner is checked instead). Otherwise the socket file
    is looked at only when the connection fails, to say why."""
    frame = encode_frame(payload, max_bytes)
    deadline = time.monotonic() + timeout
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            _connect(sock, path, deadline)
        except TransportError:
            _check_listener_socket(path)  # a clearer reason, when the file gives one
            raise
        creds = peer_credentials(sock)
        if creds is None:
            _check_listener_socket(path)
        elif creds.uid != os.geteuid():
            raise TransportError("the listener belongs to another user", ambiguous=False)
        try:
            sock.sendall(frame)
        except TimeoutError:
            raise TransportError("the request could not be written in time", ambiguous=True)
        except OSError as exc:
            raise TransportError(
                f"the request could not be written: {exc.strerror}", ambiguous=True
            )
        return _read_response(sock, deadline)
    finally:
        sock.close()


# --- discovery ---------------------------------------------------------------------------


# A live peer is its manifest, with ``state`` as its pong said (not as the manifest said).
Peer = Manifest


@dataclass
class DiscoveryResult:
    peers: list[Peer] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # file name -> why
    error: str | None = None  # the registry itself was unusable


@dataclass
class _Ping:
    name: str
    manifest_peer: Peer
    message_id: str
    sock: socket.socket
    outgoing: memoryview
    path: Path
    buffer: bytearray = field(default_factory=bytearray)


def _sort_key(peer: Peer) -> tuple[str, int, str]:
    return (peer.project.casefold(), peer.pid, peer.instance_id)


def discover(
    registry: Path,
    *,
    self_instance_id: str | None,
    timeout: float,
) -> DiscoveryResult:
    """Live peers in ``registry`` other than ``self_instance_id``, sorted for display.

    Every candidate manifest is checked, then all are pinged at once under one overall
    deadline; only a pong with the same message_id makes a peer live.
    """
    result = DiscoveryResult()
    try:
        check_registry_dir(registry)
        names = list_manifest_names(registry)
    except (RegistryError, OSError) as exc:
        result.error = str(exc) if isinstance(exc, RegistryError) else f"{registry}: {exc}"
        return result
    sender = self_instance_id or f"discover-{os.getpid()}"
    candidates: list[tuple[str, Peer]] = []
    for name in names:
        try:
            manifest = read_manifest_file(registry, name)
        except ManifestError as exc:
            result.skipped[name] = str(exc)
            continue
        if manifest.instance_id == self_instance_id:
            continue
        candidates.append((name, manifest))
    live = _ping_all(registry, candidates, sender, timeout, result.skipped)
    result.peers = sorted(live, key=_sort_key)
    return result


def _ping_all(
    registry: Path,
    candidates: list[tuple[str, Peer]],
    sender: str,
    timeout: float,
    skipped: dict[str, str],
) -> list[Peer]:
    deadline = time.monotonic() + timeout
    selector = selectors.DefaultSelector()
    pending: dict[int, _Ping] = {}
    # A Unix-socket connect that finds the listener's backlog full fails with EAGAIN and
    # does not go on in the background; those are simply tried again until the deadline.
    unconnected: list[_Ping] = []
    live: list[Peer] = []
    try:
        for name, peer in candidates:
            path = socket_path(registry, peer.instance_id)
            try:
                _check_listener_socket(path)
            except TransportError as exc:
                skipped[name] = exc.reason
                continue
            message_id = f"ping-{os.getpid()}-{next(_ping_counter)}"
            frame = encode_frame(ping_request(message_id, peer.instance_id, sender), 65536)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.setblocking(False)
            unconnected.append(_Ping(name, peer, message_id, sock, memoryview(frame), path))
        while pending or unconnected:
            retry: list[_Ping] = []
            for ping in unconnected:
                try:
                    ping.sock.connect(os.fspath(ping.path))
                except (BlockingIOError, InterruptedError):
                    retry.append(ping)
                    continue
                except OSError as exc:
                    ping.sock.close()
                    skipped[ping.name] = f"stale: {exc.strerror}"
                    continue
                pending[ping.sock.fileno()] = ping
                selector.register(ping.sock, selectors.EVENT_WRITE, None)
            unconnected = retry
            if not pending and not unconnected:
                break  # every candidate refused at once: nothing left to wait for
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            wait = min(remaining, CONNECT_RETRY_INTERVAL) if unconnected else remaining
            if not pending:
                time.sleep(wait)
                continue
            for key, events in selector.select(wait):
                ping = pending[key.fd]
                done, pong = _advance(ping, events, selector)
                if done:
                    del pending[key.fd]
                    selector.unregister(ping.sock)
                    ping.sock.close()
                    if pong is None:
                        skipped[ping.name] = "no pong"
                    else:
                        live.append(pong)
        for ping in [*pending.values(), *unconnected]:
            skipped[ping.name] = "no pong before the deadline"
    finally:
        for ping in pending.values():
            with contextlib.suppress(KeyError, ValueError, OSError):
                selector.unregister(ping.sock)
            ping.sock.close()
        for ping in unconnected:
            ping.sock.close()
        selector.close()
    return live


def _advance(
    ping: _Ping, events: int, selector: selectors.BaseSelector
) -> tuple[bool, Peer | None]:
    """Move one ping along; (finished, live peer or None)."""
    try:
        if ping.outgoing:
            err = ping.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                return True, None
            creds = peer_credentials(ping.sock)
            if creds is not None and creds.uid != os.geteuid():
                return True, None
            sent = ping.sock.send(ping.outgoing, socket.MSG_NOSIGNAL)
            ping.outgoing = ping.outgoing[sent:]
            if not ping.outgoing:
                selector.modify(ping.sock, selectors.EVENT_READ, None)
            return False, None
        chunk = ping.sock.recv(MAX_ACK_BYTES)
    except (BlockingIOError, InterruptedError):
        return False, None
    except OSError as exc:
        if exc.errno == errno.EAGAIN:
            return False, None
        return True, None
    if not chunk:
        return True, _pong_peer(ping)
    ping.buffer += chunk
    if len(ping.buffer) > MAX_ACK_BYTES + 64:
        return True, None
    peer = _pong_peer(ping)
    return (peer is not None), peer


def _pong_peer(ping: _Ping) -> Peer | None:
    try:
        header = parse_header(bytes(ping.buffer[:64]), MAX_ACK_BYTES)
    except FrameError:
        return None
    if header is None:
        return None
    length, header_len = header
    if len(ping.buffer) < header_len + length:
        return None
    try:
        ack = parse_ack(bytes(ping.buffer[header_len : header_len + length]))
    except FrameError:
        return None
    if ack.status != "pong" or ack.message_id != ping.message_id:
        return None
    peer = ping.manifest_peer
    return dataclasses.replace(peer, state=ack.state)
