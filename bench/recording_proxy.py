"""A loopback proxy between zcoder and a real llama.cpp server that records each chat request.

zcoder talks to it as to the server itself. For every ``/v1/chat/completions`` request it
keeps what the server alone knows: the ``timings`` of its streamed answer (``prompt_n``, the
tokens it had to read; ``cache_n``, the tokens it found in its cache; ``predicted_n``) and the
time from the request to the first streamed token, measured here, next to the server. With
``defeat_cache`` it adds ``"cache_prompt": false`` to every request, so the same session can
be timed with the server's prompt cache and without it.

Nothing of zcoder is changed to be measured: the requests are zcoder's own.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

CHAT_PATH = "/v1/chat/completions"


@dataclass
class Recorded:
    """One chat request and what its answer said."""

    body: dict[str, Any]
    timings: dict[str, Any] = field(default_factory=dict)
    first_token_s: float | None = None  # from the request to the first content or reasoning
    total_s: float = 0.0

    @property
    def prompt_tokens(self) -> int:
        return int(self.timings.get("prompt_n", 0)) + int(self.timings.get("cache_n", 0))

    @property
    def cached(self) -> int:
        return int(self.timings.get("cache_n", 0))

    @property
    def evaluated(self) -> int:
        return int(self.timings.get("prompt_n", 0))

    @property
    def predicted(self) -> int:
        return int(self.timings.get("predicted_n", 0))


def _first_token(line: bytes) -> bool:
    """Whether an SSE line carries generated text (content, reasoning or a tool call)."""
    if not line.startswith(b"data: ") or line.startswith(b"data: [DONE]"):
        return False
    try:
        chunk = json.loads(line[6:])
    except ValueError:
        return False
    for choice in chunk.get("choices") or []:
        delta = choice.get("delta") or {}
        if delta.get("content") or delta.get("reasoning_content") or delta.get("tool_calls"):
            return True
    return False


class RecordingProxy:
    """``with RecordingProxy(upstream) as proxy:`` then point zcoder at ``proxy.base_url``."""

    def __init__(self, upstream: str, *, defeat_cache: bool = False, key: str = "") -> None:
        self.upstream = upstream.rstrip("/")
        self.defeat_cache = defeat_cache
        self.key = key  # the embedded server's API key, added to what goes upstream
        self.records: list[Recorded] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def take(self) -> list[Recorded]:
        """The records so far, and start a new list."""
        with self._lock:
            taken, self.records = self.records, []
        return taken

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._forward("GET", None)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self._forward("POST", self.rfile.read(length))

            def _forward(self, method: str, raw: bytes | None) -> None:
                record: Recorded | None = None
                if method == "POST" and self.path.endswith(CHAT_PATH) and raw:
                    body = json.loads(raw)
                    if proxy.defeat_cache:
                        body["cache_prompt"] = False
                        raw = json.dumps(body).encode()
                    record = Recorded(body)
                    with proxy._lock:  # listed at once: its figures arrive with its stream,
                        proxy.records.append(record)  # each before the client reads it
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() not in ("host", "content-length", "connection")
                }
                if proxy.key:
                    headers["Authorization"] = f"Bearer {proxy.key}"
                started = time.perf_counter()
                with (
                    httpx.Client(timeout=None) as client,
                    client.stream(
                        method, proxy.upstream + self.path, content=raw, headers=headers
                    ) as answer,
                ):
                    self.send_response(answer.status_code)
                    for key, value in answer.headers.items():
                        if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                            self.send_header(key, value)
                    self.send_header("Transfer-Encoding", "chunked")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    pending = b""
                    for chunk in answer.iter_raw():
                        if record is not None:
                            pending += chunk
                            *lines, pending = pending.split(b"\n")
                            for line in lines:
                                self._read(record, line.strip(), started)
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                    if record is not None:
                        record.total_s = time.perf_counter() - started
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()

            @staticmethod
            def _read(record: Recorded, line: bytes, started: float) -> None:
                if record.first_token_s is None and _first_token(line):
                    record.first_token_s = time.perf_counter() - started
                if b'"timings"' in line and line.startswith(b"data: "):
                    try:
                        timings = json.loads(line[6:]).get("timings")
                    except ValueError:
                        return
                    if isinstance(timings, dict):
                        record.timings = timings

        return Handler
