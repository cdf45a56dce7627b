"""Real zcoder processes in pseudo-terminals, for the end-to-end tests.

There is no terminal emulator here (pyte is not a dependency), so the screen is read as
text: a reader thread drains each pty (a child must never block on a full pty buffer),
strips the escape sequences and keeps the rest. ``wait_text`` looks for a fragment in that
text. Fragments should be short and fit on one screen row; the ground truth of a test
comes from the relay registry, the fake Ollama's recorded requests and the session store.

Every process is started in its own session (pexpect does that) and is killed as a whole
process group by ``close``, so a failing test leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pexpect

from tests.fixtures.fake_ollama import DEFAULT_MODELS, FakeOllama

SRC = Path(__file__).resolve().parents[2] / "src"
# Everything a terminal may send that is not text: CSI, OSC, DCS/APC/PM strings and the
# two-byte escapes.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[PX^_][^\x1b]*\x1b\\"
    r"|\x1b[ -/]*[0-~]"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# The keys line of an approval or send-confirmation dialog once it takes answers.
DIALOG_ARMED = re.compile(r"\[n\]/Esc deny|\[N\]/Esc/Enter do not send")
START_TIMEOUT = 20.0
EXIT_TIMEOUT = 10.0
DEFAULT_TIMEOUT = 15.0

T = TypeVar("T")


def strip_terminal(text: str) -> str:
    """The printable text of terminal output, rows still separated only by what was sent."""
    return _CONTROL.sub("", _ESCAPES.sub("", text))


def wait_until(
    check: Callable[[], T | None], *, timeout: float = DEFAULT_TIMEOUT, what: str = "condition"
) -> T:
    """Poll ``check`` until it returns something truthy; that value is returned."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.05)


def found_in(text: str, fragment: str | re.Pattern[str]) -> str | None:
    """``fragment`` (text or a compiled pattern) as it stands in ``text``; None if absent."""
    if isinstance(fragment, re.Pattern):
        match = fragment.search(text)
        return match.group(0) if match else None
    return fragment if fragment in text else None


def private_root() -> Path:
    """A fresh private directory with a short path: socket paths must fit in ~100 bytes."""
    path = Path(tempfile.mkdtemp(prefix="ze", dir="/tmp"))
    path.chmod(0o700)
    return path


def _joined(parts: list[str]) -> str:
    """``parts`` as one string, which is then their only item (read often, joined once)."""
    joined = "".join(parts)
    parts[:] = [joined]
    return joined


class ScreenReader(threading.Thread):
    """Drains one pty; keeps the raw output and its text (escape sequences removed)."""

    def __init__(self, child: pexpect.spawn, log: Path | None) -> None:
        super().__init__(daemon=True, name=f"pty-reader-{child.pid}")
        self.child = child
        self._lock = threading.Lock()
        self._pending = ""
        self._text: list[str] = []
        self._raw: list[str] = []
        self._length = 0
        self.eof = threading.Event()
        self._log = log.open("w", encoding="utf-8") if log is not None else None

    def run(self) -> None:
        try:
            while True:
                try:
                    chunk = self.child.read_nonblocking(65536, timeout=0.1)
                except pexpect.TIMEOUT:
                    continue
                except (pexpect.EOF, OSError, ValueError):
                    break
                self._add(chunk)
        finally:
            self._add("", final=True)
            if self._log is not None:
                self._log.close()
            self.eof.set()

    def _add(self, chunk: str, *, final: bool = False) -> None:
        if self._log is not None and chunk:
            self._log.write(chunk)
        with self._lock:
            self._raw.append(chunk)
            data = self._pending + chunk
            self._pending = ""
            cut = data.rfind("\x1b")
            if not final and cut != -1 and _ESCAPES.match(data, cut) is None:
                # An escape sequence split between two reads: keep it for the next one.
                data, self._pending = data[:cut], data[cut:]
            text = strip_terminal(data)
            self._text.append(text)
            self._length += len(text)

    @property
    def text(self) -> str:
        with self._lock:
            return _joined(self._text)

    @property
    def raw(self) -> str:
        """Everything the process wrote to its terminal, escape sequences included."""
        with self._lock:
            return _joined(self._raw)

    @property
    def length(self) -> int:
        with self._lock:
            return self._length


@dataclass(eq=False)
class Instance:
    """One ``python -m zcoder`` in a pty of its own."""

    name: str
    workspace: Path
    env: dict[str, str]
    registry: Path
    _: KW_ONLY
    args: tuple[str, ...] = ()
    log_dir: Path | None = None
    dimensions: tuple[int, int] = (50, 160)
    child: pexpect.spawn | None = field(default=None, init=False)
    reader: ScreenReader | None = field(default=None, init=False)

    # -- start and stop -----------------------------------------------------------------

    def start(self) -> Instance:
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "zcoder", *self.args],
            cwd=str(self.workspace),
            env=self.env,
            dimensions=self.dimensions,
            encoding="utf-8",
            codec_errors="replace",
            echo=False,
        )
        log = None
        if self.log_dir is not None:
            log = self.log_dir / f"{_slug(self.name)}-{self.child.pid}.pty.txt"
        self.reader = ScreenReader(self.child, log)
        self.reader.start()
        return self

    @property
    def pid(self) -> int:
        assert self.child is not None, "not started"
        return int(self.child.pid)

    def alive(self) -> bool:
        return self.child is not None and bool(self.child.isalive())

    def wait_exit(self, timeout: float = EXIT_TIMEOUT) -> int | None:
        """Wait for the process to end; its exit status (None when a signal ended it)."""
        child = self.child
        assert child is not None
        wait_until(lambda: not child.isalive(), timeout=timeout, what=f"{self.name} to exit")
        if self.reader is not None:
            self.reader.eof.wait(2.0)
        status: int | None = child.exitstatus
        return status

    def quit(self, timeout: float = EXIT_TIMEOUT) -> int | None:
        """Ctrl+Q, the way a user leaves."""
        self.send_key("\x11")
        return self.wait_exit(timeout)

    def signal(self, signum: int) -> None:
        os.kill(self.pid, signum)

    def close(self) -> None:
        """Make sure the process and anything it started are gone (idempotent)."""
        child = self.child
        if child is None:
            return
        if child.isalive():
            with contextlib.suppress(OSError):
                child.sendcontrol("q")
            deadline = time.monotonic() + 3.0
            while child.isalive() and time.monotonic() < deadline:
                time.sleep(0.05)
        for signum in (signal.SIGTERM, signal.SIGKILL):
            if not child.isalive():
                break
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, signum)
            deadline = time.monotonic() + 3.0
            while child.isalive() and time.monotonic() < deadline:
                time.sleep(0.05)
        # The session's process group may outlive its leader (a command it ran).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            child.close(force=True)
        if self.reader is not None:
            self.reader.join(timeout=2.0)

    # -- the keyboard -------------------------------------------------------------------

    def send_key(self, data: str) -> None:
        assert self.child is not None
        self.child.send(data)

    def answer_dialog(self, key: str, *, since: int = 0) -> None:
        """Press ``key`` in the open dialog once it takes answers (it is armed after it has
        been on screen for half a second with no key pressed; earlier keys go back to the
        prompt)."""
        self.wait_text(DIALOG_ARMED, since=since)
        self.send_key(key)

    def submit(self, text: str) -> None:
        """Type a line and press Enter (typed first, so a paste is not detected)."""
        self.send_key(text)
        time.sleep(0.15)
        self.send_key("\r")

    def submit_and_wait(self, text: str, *shown: str | re.Pattern[str]) -> int:
        """Submit ``text`` and wait until each of ``shown`` is on screen after it; the mark
        taken before it was typed, for the waits that follow."""
        mark = self.mark()
        self.submit(text)
        for fragment in shown:
            self.wait_text(fragment, since=mark)
        return mark

    # -- the screen ---------------------------------------------------------------------

    @property
    def screen_text(self) -> str:
        assert self.reader is not None
        return self.reader.text

    @property
    def raw_output(self) -> str:
        assert self.reader is not None
        return self.reader.raw

    def mark(self) -> int:
        """A position in the screen text: ``wait_text(..., since=mark)`` looks after it."""
        assert self.reader is not None
        return self.reader.length

    def wait_text(
        self, fragment: str | re.Pattern[str], *, since: int = 0, timeout: float = DEFAULT_TIMEOUT
    ) -> str:
        """Wait until ``fragment`` (text or a compiled pattern) appears after ``since``."""
        try:
            return wait_until(
                lambda: found_in(self._text_after(since), fragment),
                timeout=timeout,
                what=f"{fragment!r} on {self.name}",
            )
        except TimeoutError as exc:
            raise AssertionError(f"{exc}; alive={self.alive()}; {self._shown(since)}") from None

    def _text_after(self, since: int) -> str:
        """What ``wait_text`` looks in: the screen text after the mark ``since``."""
        assert self.reader is not None
        return self.reader.text[since:]

    def _shown(self, since: int) -> str:
        """What a failed wait reports of the screen."""
        tail = re.sub(r"[ \t]{3,}", "  ", self._text_after(since))[-3000:]
        return f"screen text after the mark ends with:\n{tail}"

    # -- the relay registry -------------------------------------------------------------

    def relay_files(self) -> list[Path]:
        """This process's files in the registry (a-<pid>-*: manifest, socket, lock)."""
        return sorted(self.registry.glob(f"a-{self.pid}-*"))

    def manifest_path(self) -> Path | None:
        found = sorted(self.registry.glob(f"a-{self.pid}-*.json"))
        return found[0] if found else None

    def manifest(self) -> dict[str, Any] | None:
        path = self.manifest_path()
        if path is None:
            return None
        try:
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # between the rename of two versions, or removed just now
        return data

    def wait_manifest(self, timeout: float = START_TIMEOUT) -> dict[str, Any]:
        return wait_until(self.manifest, timeout=timeout, what=f"{self.name}'s manifest")

    def wait_state(self, state: str, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        def check() -> dict[str, Any] | None:
            manifest = self.manifest()
            return manifest if manifest is not None and manifest.get("state") == state else None

        return wait_until(check, timeout=timeout, what=f"{self.name}'s manifest state {state}")

    def wait_ready(self, timeout: float = START_TIMEOUT) -> None:
        """Until the app is mounted and takes keys (its header shows the relay state)."""
        mode = self.env.get("ZCODER_RELAY", "on").strip().lower() or "on"
        if mode == "off":
            self.wait_text("relay: off", timeout=timeout)
        else:
            self.wait_manifest(timeout)
            self.wait_text("relay: paused" if mode == "paused" else "relay: ready", timeout=timeout)

    def spool(self) -> Path:
        """This process's private relay spool (inbox, processing, done, ...)."""
        runtime = Path(self.env["XDG_RUNTIME_DIR"])
        (found,) = runtime.glob(f"zcoder-{self.pid}-*/relay")
        return found

    def spool_counts(self) -> dict[str, int]:
        root = self.spool()
        return {
            name: sum(1 for _ in (root / name).iterdir())
            for name in ("inbox", "processing", "held", "done", "rejected")
        }

    @property
    def instance_id(self) -> str:
        manifest = self.wait_manifest()
        return str(manifest["instance_id"])


def _slug(name: str) -> str:
    return name.replace("/", "-")


class World:
    """One test's private world: a registry, workspaces, homes and the processes started."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or private_root()
        self.registry = self.root / "r"
        self.registry.mkdir(mode=0o700)
        # ZCODER_E2E_KEEP=1 keeps the world (with every pty's raw output) for a post-mortem.
        self.keep = bool(os.environ.get("ZCODER_E2E_KEEP"))
        self.logs: Path | None = None
        if self.keep:
            self.logs = self.root / "logs"
            self.logs.mkdir()
        self.instances: list[Instance] = []
        self.servers: list[FakeOllama] = []

    def server(self, *, demo: bool = True, models: tuple[str, ...] | None = None) -> FakeOllama:
        server = FakeOllama(demo=demo, models=models or DEFAULT_MODELS).start()
        self.servers.append(server)
        return server

    def workspace(self, name: str) -> Path:
        """``name`` may be a relative path (``x/proj``): workspaces with equal basenames."""
        path = self.root / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def home(self, name: str) -> Path:
        return self.root / f"h-{_slug(name)}"

    def env(self, name: str, server: FakeOllama | None, **extra: str) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("ZCODER_", "OLLAMA_", "TEXTUAL", "XDG_", "PYTEST_"))
            and key not in ("NO_COLOR", "TMPDIR", "COLUMNS", "LINES", "TMUX", "TMUX_PANE")
        }
        runtime = self.root / f"t-{_slug(name)}"
        runtime.mkdir(mode=0o700, exist_ok=True)
        env.update(
            TERM="xterm-256color",
            PYTHONUTF8="1",
            PYTHONPATH=os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])),
            ZCODER_HOME=str(self.home(name)),
            ZCODER_RELAY_DIR=str(self.registry),
            XDG_RUNTIME_DIR=str(runtime),
            TMPDIR=str(runtime),
            ZCODER_MODEL="qwen3-coder",
        )
        if server is not None:
            env["OLLAMA_HOST"] = server.url
        env.update(extra)
        return env

    def start(
        self,
        name: str,
        server: FakeOllama | None,
        *,
        args: tuple[str, ...] = (),
        wait: bool = True,
        **extra_env: str,
    ) -> Instance:
        """Start zcoder in the workspace ``name``; with ``wait``, until it is usable."""
        instance = Instance(
            name,
            self.workspace(name),
            self.env(name, server, **extra_env),
            self.registry,
            args=args,
            log_dir=self.logs,
        )
        self.instances.append(instance)
        instance.start()
        if wait:
            instance.wait_ready()
        return instance

    def start_all(self, *specs: tuple[str, FakeOllama | None]) -> list[Instance]:
        """Start several instances at once, then wait until each is usable."""
        started = [self.start(name, server, wait=False) for name, server in specs]
        for instance in started:
            instance.wait_ready()
        return started

    def close(self) -> None:
        for instance in self.instances:  # all at once: each then has its time to exit
            if instance.alive():
                with contextlib.suppress(OSError, RuntimeError):  # tmux may be gone
                    instance.send_key("\x11")
        for instance in self.instances:
            instance.close()
        for server in self.servers:
            server.stop()
        if self.keep:
            print(f"e2e world kept in {self.root}", file=sys.stderr)
        else:
            shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def world() -> Iterator[World]:
    """A World, closed when the block ends, however it ends."""
    w = World()
    try:
        yield w
    finally:
        w.close()
