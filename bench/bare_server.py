"""The baseline: a bare AF_UNIX request/response server in plain Python, no zcoder code.

``python -m bench.bare_server SOCKET RESPONSE_BYTES`` accepts one connection at a time,
reads a ``<header>\\n<payload>`` frame, answers RESPONSE_BYTES bytes and closes — what the
relay does at minimum, without validation, peer checks, spool or selector. It prints
``ready`` once listening and exits when its stdin closes.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import sys


def _serve_one(conn: socket.socket, response: bytes) -> None:
    with conn:
        conn.settimeout(5)
        data = b""
        while b"\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        header, _, rest = data.partition(b"\n")
        need = int(header.rsplit(b" ", 1)[-1]) - len(rest)
        while need > 0:
            chunk = conn.recv(min(65536, need))
            if not chunk:
                return
            need -= len(chunk)
        conn.sendall(response)


def main(argv: list[str]) -> int:
    path, size = argv[0], int(argv[1])
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
                            _serve_one(conn, response)
                    elif not os.read(sys.stdin.fileno(), 4096):
                        return 0
        finally:
            selector.close()
            os.unlink(path)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
