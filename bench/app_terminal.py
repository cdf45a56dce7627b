"""The real ``zcoder`` in a pseudo-terminal, read back through a terminal emulator (pyte).

A reader thread does nothing but read the pty and stamp each chunk with the time ``read``
returned it, so the emulator's own cost (pyte is pure Python) never shows in a figure: a
condition is checked after feeding each chunk, and it is timed at that chunk's stamp.
The fake model runs in its own process (``python -m tests.fixtures.fake_ollama``) so its
streaming thread never competes with this process's reader for the GIL.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pyte
from ptyprocess import PtyProcess

from bench.harness import REPO_ROOT, Workspace

ROWS, COLUMNS = 40, 120
SERVER_TIMEOUT = 20.0
EXIT_TIMEOUT = 5.0
_URL = re.compile(r"http://127\.0\.0\.1:\d+")


def zcoder_argv(*args: str) -> list[str]:
    """The installed ``zcoder`` script beside this interpreter, as a user runs it."""
    script = Path(sys.executable).parent / "zcoder"
    if script.exists():
        return [str(script), *args]
    return [sys.executable, "-m", "zcoder", *args]


class FakeModel:
    """The fake Ollama in its own process, on 127.0.0.1 with a free port."""

    def __init__(self, space: Workspace, script: Path | None = None) -> None:
        self._log = space.root / f"fake-ollama-{time.monotonic_ns()}.log"
        argv = [sys.executable, "-m", "tests.fixtures.fake_ollama", "--port", "0", "--quiet"]
        if script is not None:
            argv += ["--script", str(script)]
        with open(self._log, "wb") as log:
            self.proc = subprocess.Popen(
                argv,
                cwd=REPO_ROOT,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=space.env,
            )
        deadline = time.monotonic() + SERVER_TIMEOUT
        while True:
            found = _URL.search(self._log.read_text(encoding="utf-8", errors="replace"))
            if found:
                self.url = found.group(0)
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"the fake Ollama did not start: {self._log.read_text()}")
            time.sleep(0.02)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(EXIT_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def app_env(space: Workspace, model_url: str) -> dict[str, str]:
    """The environment zcoder runs in: private homes and registry, the fake model."""
    env = {
        key: value
        for key, value in space.env.items()
        if not key.startswith(("OLLAMA_", "TEXTUAL", "PYTEST_"))
        and key not in ("NO_COLOR", "COLUMNS", "LINES", "TMUX", "TMUX_PANE")
    }
    env.update(
        TERM="xterm-256color",
        PYTHONUTF8="1",
        ZCODER_MODEL="qwen3-coder",
        OLLAMA_HOST=model_url,
    )
    return env


class AppTerminal:
    """One zcoder process in a pty of ROWS x COLUMNS; ``started`` is just before spawn."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.screen = pyte.Screen(COLUMNS, ROWS)
        self._stream = pyte.ByteStream(self.screen)
        self._chunks: list[tuple[float, bytes]] = []
        self._fed = 0
        self._cond = threading.Condition()
        self.eof = False
        self.started = time.monotonic()
        self.proc = PtyProcess.spawn(argv, cwd=str(cwd), env=env, dimensions=(ROWS, COLUMNS))
        self._reader = threading.Thread(target=self._read, name="pty-reader", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return int(self.proc.pid)

    def _read(self) -> None:
        fd = self.proc.fd
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            stamp = time.monotonic()
            with self._cond:
                if not data:
                    self.eof = True
                    self._cond.notify_all()
                    return
                self._chunks.append((stamp, data))
                self._cond.notify_all()

    def send(self, data: bytes) -> float:
        """Write keys; returns the time just before the write."""
        stamp = time.monotonic()
        os.write(self.proc.fd, data)
        return stamp

    def display(self) -> list[str]:
        return list(self.screen.display)

    def wait_for(self, check: Callable[[AppTerminal], bool], timeout: float, what: str) -> float:
        """Feed chunks to the emulator until ``check`` holds; the stamp of that chunk."""
        deadline = time.monotonic() + timeout
        while True:
            with self._cond:
                while self._fed >= len(self._chunks) and not self.eof:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise TimeoutError(f"timed out waiting for {what}")
                    self._cond.wait(left)
                pending = self._chunks[self._fed :]
                self._fed = len(self._chunks)
                ended = self.eof
            for stamp, data in pending:
                self._stream.feed(data)
                if check(self):
                    return stamp
            if ended and not pending:
                raise RuntimeError(f"zcoder's terminal closed while waiting for {what}")

    def wait_text(self, *fragments: str, timeout: float = 30.0) -> float:
        """Until every fragment is on screen at once; the stamp of the chunk that did it."""

        def shown(term: AppTerminal) -> bool:
            screen = "\n".join(term.display())
            return all(fragment in screen for fragment in fragments)

        return self.wait_for(shown, timeout, " and ".join(repr(f) for f in fragments))

    def drain(self) -> None:
        """Feed whatever has arrived (keeps the emulator current without waiting)."""
        with self._cond:
            pending = self._chunks[self._fed :]
            self._fed = len(self._chunks)
        for _, data in pending:
            self._stream.feed(data)

    def close(self) -> None:
        """Ctrl+Q, then the process group is ended if it does not exit in time."""
        if self.proc.isalive():
            with contextlib.suppress(OSError):
                self.send(b"\x11")
            deadline = time.monotonic() + EXIT_TIMEOUT
            while self.proc.isalive() and time.monotonic() < deadline:
                time.sleep(0.02)
        for signum in (signal.SIGTERM, signal.SIGKILL):
            if not self.proc.isalive():
                break
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signum)
            time.sleep(0.2)
        with contextlib.suppress(Exception):
            self.proc.close(force=True)
        self._reader.join(timeout=2.0)


def process_tree(pid: int) -> list[int]:
    """``pid`` and every descendant, from /proc's parent links."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                stat = handle.read()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0
