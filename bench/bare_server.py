"""The baselines: a bare AF_UNIX request/response server in plain Python, no zcoder code.

``python -m bench.bare_server SOCKET RESPONSE_BYTES`` accepts one connection at a time,
reads a ``<header>\\n<payload>`` frame, answers RESPONSE_BYTES bytes and closes — what the
relay does at minimum, without validation, peer checks, spool or selector.

``python -m bench.bare_server SOCKET RESPONSE_BYTES SPOOL`` is the **floor** of an enqueue:
the same server, but before it answers it does what an acknowledgement of ``accepted``
promises, and nothing else: it writes the payload to a new file in ``SPOOL/tmp/`` and
renames it into ``SPOOL/inbox/`` (no fsync, as the relay). No validation, no peer check.

Either prints ``ready`` once listening and exits when its stdin closes.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import sys
from collections.abc import Callable

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _read_frame(conn: socket.socket) -> bytes | None:
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    header, _, payload = data.partition(b"\n")
    need = int(header.rsplit(b" ", 1)[-1]) - len(payload)
    while need > 0:
        chunk = conn.recv(min(65536, need))
        if not chunk:
            return None
        payload += chunk
        need -= len(chunk)
    return payload


def _serve_one(conn: socket.socket, response: bytes, store: Callable[[bytes], None]) -> None:
    with conn:
        conn.settimeout(5)
        payload = _read_frame(conn)
        if payload is None:
            return
        store(payload)
        conn.sendall(response)


def file_store(spool: str) -> Callable[[bytes], None]:
    """Write a payload to a new file in ``spool/tmp`` and rename it into ``spool/inbox``."""
    tmp, inbox = os.path.join(spool, "tmp"), os.path.join(spool, "inbox")
    for directory in (tmp, inbox):
        os.makedirs(directory, mode=0o700, exist_ok=True)
    counter = [0]

    def store(payload: bytes) -> None:
        counter[0] += 1
        name = f"{counter[0]:09d}.json"
        temporary = f"{tmp}/{name}"
        fd = os.open(temporary, _CREATE, 0o600)
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.rename(temporary, f"{inbox}/{name}")

    return store


def main(argv: list[str]) -> int:
    path, size = argv[0], int(argv[1])
    store = file_store(argv[2]) if len(argv) > 2 else (lambda payload: None)
    response = b"ZCODER-AGENT/1 " + b"x" * max(0, size - 15)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path)
        server.listen(128)
        selector = selectors.DefaultSelector()
        selector.register(server, selectors.EVENT_READ)
        selector.register(sys.stdin, selectors.EVENT_READ)
        print('{"event":"ready","instance_id":"bare","socket":"' + path + '"}', flush=True)
        try:
            while True:
                for key, _ in selector.select():
                    if key.fileobj is server:
                        conn, _addr = server.accept()
                        with contextlib.suppress(OSError):
                            _serve_one(conn, response, store)
                    elif not os.read(sys.stdin.fileno(), 4096):
                        return 0
        finally:
            selector.close()
            os.unlink(path)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
