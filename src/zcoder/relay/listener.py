"""The listener: one loop that owns the listening socket and serves every connection.

Connections are multiplexed with a selector, each with its own deadline for the whole
request, so a stalled, slow, oversized or vanished client can only ever cost itself. The
loop accepts, reads one bounded frame, asks the Receiver for a decision, writes one ack
and closes. It never touches the agent, the session or the terminal.

zcoder runs it in a process of its own (zcoder.relay.listener_process), on that process's
main thread (``serve_forever``); ``start`` runs it on a thread instead (tests, tools).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Final

from zcoder.base.sanitize import visible
from zcoder.relay.framing import MAX_HEADER_BYTES, encode_frame, parse_header
from zcoder.relay.peercred import PeerCredentials, peer_credentials
from zcoder.relay.protocol import (
    Envelope,
    FrameError,
)
from zcoder.relay.receiver import Decision, Receiver

log = logging.getLogger(__name__)

# At most this many connections are open at once; past it the oldest is answered
# `invalid` and closed, so a flood of stalled clients cannot lock healthy ones out.
MAX_OPEN_CONNECTIONS: Final = 64
LISTEN_BACKLOG: Final = 128
READ_CHUNK: Final = 65536
# How long stop() waits for the thread; the loop wakes at once on the stop signal.
JOIN_TIMEOUT: Final = 5.0
# A refusal's log line quotes what the peer sent, cut to this many characters a field.
LOG_FIELD_LIMIT: Final = 120
# A connection's socket stays in blocking mode (one fcntl less per request); every read
# and write on it asks not to wait instead.
_SEND_FLAGS: Final = socket.MSG_NOSIGNAL | socket.MSG_DONTWAIT


@dataclass(slots=True)
class _Connection:
    sock: socket.socket
    deadline: float
    peer: PeerCredentials | None
    buffer: bytearray = field(default_factory=bytearray)
    header_len: int = 0
    expected: int | None = None  # total bytes (header + payload) once the header is parsed
    outgoing: memoryview | None = None
    waiting_to_write: bool = False  # registered for EVENT_WRITE
    watched: bool = False  # registered with the selector at all
    accepted: Decision | None = None  # told to on_accepted once its ack is on its way


@dataclass(eq=False)
class Listener:
    server: socket.socket
    receiver: Receiver
    _: KW_ONLY
    max_bytes: int
    io_timeout: float
    on_accepted: Callable[[Decision], None] | None = None
    on_death: Callable[[BaseException], None] | None = None
    # Called before each wait for events (after every ack was written): work that must
    # not delay an answer. Returns the longest wait it allows (None: no limit).
    on_idle: Callable[[], float | None] | None = None

    def __post_init__(self) -> None:
        self._readers: dict[int, Callable[[], None]] = {}
        self._closed = False
        self._uid = os.geteuid()
        self._kind = (self.server.family, self.server.type, self.server.proto)  # of accepted
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._stopping = threading.Event()
        self._connections: dict[int, _Connection] = {}
        self._thread = threading.Thread(target=self._run, name="zcoder-relay-listener", daemon=True)
        self.error: BaseException | None = None
        self.served = 0
        self.refused_peers = 0

    # -- lifecycle ----------------------------------------------------------------------

    def _prepare(self) -> None:
        self.server.setblocking(False)
        self._wake_r.setblocking(False)
        self._selector.register(self.server, selectors.EVENT_READ, None)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)

    def start(self) -> None:
        """Serve on a thread of this process."""
        self._prepare()
        self._thread.start()

    def serve_forever(self) -> None:
        """Serve on the calling thread until ``stop`` (or a fault, kept in ``error``)."""
        self._prepare()
        self._run()

    def watch(self, sock: socket.socket, on_readable: Callable[[], None]) -> None:
        """Call ``on_readable`` in the loop whenever ``sock`` is readable (before any
        connection's events of the same round). Register before serving."""
        self._readers[sock.fileno()] = on_readable
        self._selector.register(sock, selectors.EVENT_READ, None)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    @property
    def open_connections(self) -> int:
        return len(self._connections)

    def stop(self) -> None:
        self._stopping.set()
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(JOIN_TIMEOUT)
        self._close_all()

    def _close_all(self) -> None:
        if self._closed:
            return
        self._closed = True
        for conn in list(self._connections.values()):
            self._drop(conn)
        for fd in list(self._readers):
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._selector.unregister(fd)
        self._readers.clear()
        for sock in (self.server, self._wake_r, self._wake_w):
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._selector.unregister(sock)
            with contextlib.suppress(OSError):
                sock.close()
        with contextlib.suppress(OSError):
            self._selector.close()

    # -- the loop -----------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._stopping.is_set():
                self._expire(time.monotonic())
                timeout = self._next_timeout()
                if self.on_idle is not None:
                    allowed = self.on_idle()
                    if allowed is not None:
                        timeout = allowed if timeout is None else min(timeout, allowed)
                ready = self._selector.select(timeout)
                if len(ready) > 1 and self._readers:
                    # The owner's channels first: a state change (pause) sent before a
                    # request arrived is applied before that request is decided.
                    ready.sort(key=lambda item: item[0].fd not in self._readers)
                for key, events in ready:
                    if self._stopping.is_set():
                        break
                    reader = self._readers.get(key.fd)
                    if reader is not None:
                        reader()
                    elif key.fileobj is self._wake_r:
                        with contextlib.suppress(OSError):
                            self._wake_r.recv(64)
                    elif key.fileobj is self.server:
                        self._accept_ready()
                    else:
                        conn = self._connections.get(key.fd)
                        if conn is not None:
                            self._service(conn, events)
        except BaseException as exc:  # the thread must report any death, whatever it is
            if not self._stopping.is_set():
                self.error = exc
                log.exception("relay listener stopped unexpectedly")
                if self.on_death is not None:
                    with contextlib.suppress(Exception):
                        self.on_death(exc)
        finally:
            for conn in list(self._connections.values()):
                self._drop(conn)

    def _next_timeout(self) -> float | None:
        if not self._connections:
            return None
        soonest = min(conn.deadline for conn in self._connections.values())
        return max(0.0, soonest - time.monotonic())

    def _expire(self, now: float) -> None:
        for conn in list(self._connections.values()):
            if conn.deadline <= now:
                if conn.outgoing is None:
                    self._answer_unreadable(conn, "the request did not arrive in time")
                    self._flush_once(conn)
                self._drop(conn)

    def _accept_ready(self) -> None:
        """One connection per readiness: more waiting make the (level-triggered) selector
        report the socket again at once, and a lone request costs no failed accept."""
        try:
            # socket.accept() converts the family and type to enums and asks for the
            # default timeout on every call: a tenth of a spaced enqueue's listener time.
            fd, _addr = self.server._accept()  # type: ignore[attr-defined]
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                log.warning("relay listener cannot accept: %s", exc.strerror)
                return
            if exc.errno in (errno.ECONNABORTED, errno.EPROTO):
                return
            raise
        try:
            sock = socket.socket(*self._kind, fileno=fd)
        except BaseException:
            os.close(fd)
            raise
        conn = self._admit(sock)
        if conn is not None:
            # Clients write right after connecting, so the request is usually there
            # already: serving it now saves a trip through the selector per request.
            self._service(conn, selectors.EVENT_READ)
            if self._connections.get(conn.sock.fileno()) is conn and not conn.watched:
                conn.watched = True
                events = selectors.EVENT_WRITE if conn.waiting_to_write else selectors.EVENT_READ
                self._selector.register(conn.sock, events, None)

    def _admit(self, sock: socket.socket) -> _Connection | None:
        try:
            peer = peer_credentials(sock)
            if peer is not None and peer.uid != self._uid:
                # Another user: closed without a word, whatever the file modes say.
                self.refused_peers += 1
                log.info(
                    "relay refused a connection from another user: uid=%d pid=%d",
                    peer.uid,
                    peer.pid,
                )
                sock.close()
                return None
            if sock.gettimeout() is not None:  # a default timeout in this process
                sock.setblocking(False)
            if len(self._connections) >= MAX_OPEN_CONNECTIONS:
                oldest = min(self._connections.values(), key=lambda c: c.deadline)
                self._answer_unreadable(oldest, "too many open connections")
                self._flush_once(oldest)
                self._drop(oldest)
            conn = _Connection(sock, time.monotonic() + self.io_timeout, peer)
            self._connections[sock.fileno()] = conn
            # Registered with the selector only if the first read does not finish it
            # (_accept_ready): most requests are served without a trip through it.
        except BaseException:
            sock.close()
            raise
        return conn

    def _service(self, conn: _Connection, events: int) -> None:
        try:
            if conn.outgoing is None and events & selectors.EVENT_READ:
                self._read(conn)
            if conn.outgoing is not None:
                self._write(conn)
        except OSError:
            self._drop(conn)
        except Exception:  # one request's bug must not stop the listener
            log.exception("relay listener failed on one connection; it was closed")
            self._drop(conn)
        accepted, conn.accepted = conn.accepted, None
        if accepted is not None and self.on_accepted is not None:
            # After the ack was written: the sender never waits for this.
            try:
                self.on_accepted(accepted)
            except Exception:
                log.exception("relay message callback failed")

    def _read(self, conn: _Connection) -> None:
        want = READ_CHUNK if conn.expected is None else conn.expected - len(conn.buffer)
        try:
            chunk = conn.sock.recv(max(1, min(READ_CHUNK, want)), socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return
        if not chunk:
            # EOF before a whole request. The peer may still read: tell it why.
            self._answer_unreadable(conn, "the connection closed before a whole request")
            return
        conn.buffer += chunk
        if conn.expected is None:
            try:
                header = parse_header(bytes(conn.buffer[:MAX_HEADER_BYTES]), self.max_bytes)
            except FrameError as exc:
                self._answer_unreadable(conn, str(exc))
                return
            if header is None:
                return
            length, conn.header_len = header
            conn.expected = conn.header_len + length
        if len(conn.buffer) >= conn.expected:
            payload = bytes(conn.buffer[conn.header_len : conn.expected])
            decision = self.receiver.decide(payload, conn.peer)
            self._respond(conn, decision)
            if decision.accepted:
                conn.accepted = decision

    def _answer_unreadable(self, conn: _Connection, reason: str) -> None:
        self._respond(conn, self.receiver.unreadable(reason))

    def _respond(self, conn: _Connection, decision: Decision) -> None:
        self.served += 1
        status = decision.ack.status
        if status == "invalid" or (
            decision.request_type == Envelope.TYPE and status not in ("accepted", "duplicate")
        ):
            _log_refusal(conn.peer, decision)
        conn.buffer.clear()
        conn.outgoing = memoryview(encode_frame(decision.ack.to_payload(), self.max_bytes))

    def _write(self, conn: _Connection) -> None:
        assert conn.outgoing is not None
        try:
            sent = conn.sock.send(conn.outgoing, _SEND_FLAGS)
        except (BlockingIOError, InterruptedError):
            sent = 0
        conn.outgoing = conn.outgoing[sent:]
        if not conn.outgoing:
            self._drop(conn)
        elif not conn.waiting_to_write:
            # The ack did not fit at once (it nearly always does): finish when writable.
            conn.waiting_to_write = True
            if conn.watched:
                with contextlib.suppress(KeyError, ValueError, OSError):
                    self._selector.modify(conn.sock, selectors.EVENT_WRITE, None)

    def _flush_once(self, conn: _Connection) -> None:
        """Best-effort immediate write for a connection about to be closed."""
        if conn.outgoing is None:
            return
        with contextlib.suppress(OSError):
            conn.sock.send(conn.outgoing, _SEND_FLAGS)

    def _drop(self, conn: _Connection) -> None:
        fd = conn.sock.fileno()
        if fd >= 0:
            self._connections.pop(fd, None)
            if conn.watched:
                with contextlib.suppress(KeyError, ValueError, OSError):
                    self._selector.unregister(conn.sock)
        else:
            for key, value in list(self._connections.items()):
                if value is conn:
                    del self._connections[key]
        with contextlib.suppress(OSError):
            conn.sock.close()


def _shown(text: str) -> str:
    """What a peer sent, bounded and with control characters escaped, for one log line."""
    if len(text) > LOG_FIELD_LIMIT:
        text = text[:LOG_FIELD_LIMIT] + "..."
    return visible(text)


def _log_refusal(peer: PeerCredentials | None, decision: Decision) -> None:
    """One line in the user's log (see docs/relay.md) for each request answered with a
    refusal: which id, which claimed sender, which process, and why."""
    if not log.isEnabledFor(logging.INFO):
        return
    log.info(
        "relay refused %s: status=%s message_id='%s' sender_instance_id='%s' peer_pid=%s "
        "reason: %s",
        _shown(decision.request_type) or "a request",
        decision.ack.status,
        _shown(decision.message_id),
        _shown(decision.sender_instance_id),
        peer.pid if peer is not None else "unknown",
        _shown(decision.reason) or decision.ack.status,
    )
