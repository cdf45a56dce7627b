"""The real program in a real terminal: zcoder in a tmux pane, keys sent as raw bytes.

Pilot tests press Textual key names and skip the terminal parser, so they cannot show that a
key, a paste or a wheel turn works. Here the bytes a terminal sends go through tmux, which
is a terminal emulator, to zcoder's own input parser; the screen is read back from tmux
(``capture-pane``), which knows where every character really is.

Each ``TmuxInstance`` has a tmux server of its own (a private socket in the test's world),
so tests never touch the user's tmux and server options (``extended-keys``) stay local.
``extended_keys`` chooses what tmux does with modified keys: ``"off"`` (tmux's default:
Shift+Enter arrives as a plain CR), ``"on"`` (tmux sends ``CSI 27;mod;key~`` to a program
that asks for it) or ``"always"``. The pane's shell writes zcoder's pid when it starts it
and its exit status when it ends (tmux 3.3a does not always record a dead pane's status),
and just before that the terminal's modes (``stty -a``: ``terminal_modes``).

Keys: ``send_hex("1b 0d")`` writes bytes in one burst (one ``send-keys -H``), as a terminal
does for one key or a paste; ``send_slowly`` writes them one at a time. Everything zcoder
writes to its terminal is also kept raw (``pipe-pane``) for tests of escape sequences.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from tests.e2e.harness import (
    DEFAULT_TIMEOUT,
    EXIT_TIMEOUT,
    START_TIMEOUT,
    Instance,
    wait_until,
)
from tests.fixtures.processes import pid_alive

TMUX = shutil.which("tmux")
# The terminal tmux tells programs it is: what users inside tmux usually have.
PANE_TERM = "screen-256color"
SLOW_KEY_GAP = 0.02  # seconds between bytes sent one at a time
SLOW_BATCH = 100  # bytes per tmux command sequence (one tmux call must end in its timeout)

# Keys as terminals send them (hex for ``send_hex``).
ENTER = "0d"
SHIFT_ENTER_KITTY = "1b 5b 31 33 3b 32 75"  # CSI 13;2u
SHIFT_ENTER_XTERM = "1b 5b 32 37 3b 32 3b 31 33 7e"  # CSI 27;2;13~ (modifyOtherKeys)
ALT_ENTER = "1b 0d"  # ESC CR
CTRL_J = "0a"
PASTE_START = "1b 5b 32 30 30 7e"  # ESC [200~
PASTE_END = "1b 5b 32 30 31 7e"  # ESC [201~


REPO = Path(__file__).resolve().parents[2]


def patched_zcoder(*settings: str, gate: Path | None = None) -> tuple[str, ...]:
    """``python_args`` for zcoder with constants set (``"zcoder.tui.state.interrupt:
    QUIT_WINDOW_SECONDS=600"``) and, with ``gate``, held before its app starts until that
    file exists (tests/fixtures/zcoder_patched.py)."""
    args = ["-m", "tests.fixtures.zcoder_patched"]
    for setting in settings:
        args += ["--set", setting]
    if gate is not None:
        args += ["--gate", str(gate)]
    return (*args, "--")


def to_hex(data: bytes | str) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return " ".join(f"{byte:02x}" for byte in raw)


def paste_hex(text: str) -> str:
    """A bracketed paste of ``text``, as a terminal sends it."""
    return f"{PASTE_START} {to_hex(text)} {PASTE_END}"


def wheel_hex(*, up: bool, x: int = 10, y: int = 10) -> str:
    """One wheel notch at column ``x``, row ``y`` (1-based), SGR mouse encoding."""
    button = 64 if up else 65
    return to_hex(f"\x1b[<{button};{x};{y}M")


class TmuxInstance(Instance):
    """One ``python -m zcoder`` in a tmux pane of its own tmux server.

    The registry, manifest and spool helpers are Instance's; the keyboard and the screen are
    tmux's. ``wait_text`` looks at the screen as it is now (``since`` is ignored: a screen
    has no history here), ``screen_text`` is the screen's rows.
    """

    def __init__(
        self,
        name: str,
        workspace: Path,
        env: dict[str, str],
        registry: Path,
        *,
        socket: Path,
        args: tuple[str, ...] = (),
        size: tuple[int, int] = (120, 35),
        extended_keys: str = "off",
        python_args: tuple[str, ...] = ("-m", "zcoder"),
    ) -> None:
        """``python_args``: what Python runs (a launcher from tests/fixtures in place of
        ``-m zcoder``: zcoder_patched sets constants and holds the start-up)."""
        super().__init__(name, workspace, env, registry, args=args, dimensions=size[::-1])
        self.python_args = python_args
        if TMUX is None:
            raise RuntimeError("tmux is not installed: `make test` installs it (see Makefile)")
        if extended_keys not in ("off", "on", "always"):
            raise ValueError(f"extended_keys must be off, on or always, not {extended_keys!r}")
        self.socket = socket
        self.size = size
        self.extended_keys = extended_keys
        self.raw_log = socket.with_suffix(".raw")
        self._pid: int | None = None  # zcoder's
        self._pane_pid = 0  # the pane's shell, which waits for zcoder
        self.pid_file = socket.with_suffix(".pid")
        self.status_file = socket.with_suffix(".status")
        self.stty_file = socket.with_suffix(".stty")  # the terminal's modes after zcoder

    # -- tmux itself --------------------------------------------------------------------

    def tmux(self, *args: str, check: bool = True) -> str:
        assert TMUX is not None
        done = subprocess.run(
            [TMUX, "-S", str(self.socket), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout

    def _display(self, fmt: str) -> str:
        return self.tmux("display-message", "-p", "-t", "zc", fmt).strip()

    def server_option(self, name: str) -> str:
        """A tmux server option's value (``extended-keys`` say), as zcoder would read it."""
        return self.tmux("show-options", "-sv", name).strip()

    # -- start and stop -----------------------------------------------------------------

    def start(self) -> TmuxInstance:
        width, height = self.size
        env = {key: value for key, value in self.env.items() if key != "TERM"}
        if self.python_args[:2] != ("-m", "zcoder"):  # a launcher of tests/fixtures
            env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
        script = self.socket.with_suffix(".sh")
        # The pane's command: a shell that runs zcoder with exactly this environment
        # (tmux's own TMUX, TMUX_PANE and TERM kept), writes zcoder's pid first and its
        # exit status last: tmux 3.3a does not always record a dead pane's status.
        assignments = " ".join(shlex.quote(f"{key}={value}") for key, value in env.items())
        command = " ".join(shlex.quote(part) for part in (sys.executable, *self.python_args))
        args = " ".join(shlex.quote(arg) for arg in self.args)
        inner = (
            f"echo $$ > {shlex.quote(str(self.pid_file))}; "
            f'exec env -i TMUX="$TMUX" TMUX_PANE="$TMUX_PANE" TERM="$TERM" {assignments} '
            f"{command} {args}"
        )
        script.write_text(
            "#!/bin/sh\n"
            f"cd {shlex.quote(str(self.workspace))} || exit 99\n"
            f"sh -c {shlex.quote(inner)}\n"
            "status=$?\n"
            f"stty -a > {shlex.quote(str(self.stty_file))} 2>&1\n"
            f"echo $status > {shlex.quote(str(self.status_file))}\n",
            encoding="utf-8",
        )
        script.chmod(0o700)
        # Server options are read from a file of our own (never the user's ~/.tmux.conf)
        # before the pane exists: the pane's TERM comes from default-terminal. The pane's
        # shell waits for a go-ahead, so the raw output is captured from the first byte.
        conf = self.socket.with_suffix(".conf")
        conf.write_text(
            f"set -s extended-keys {self.extended_keys}\n"
            "set -s escape-time 0\n"  # ESC CR reaches zcoder as sent
            f"set -g default-terminal {PANE_TERM}\n"
            "set -g status off\n",
            encoding="utf-8",
        )
        self.tmux(
            "-f",
            str(conf),
            "new-session",
            "-d",
            "-s",
            "zc",
            "-x",
            str(width),
            "-y",
            str(height),
            "sh -c 'read go; exec \"$0\"' " + shlex.quote(str(script)),
        )
        self.tmux("set-option", "-t", "zc", "remain-on-exit", "on")
        self.tmux("pipe-pane", "-O", "-t", "zc", f"cat >> {shlex.quote(str(self.raw_log))}")
        self.tmux("send-keys", "-t", "zc", "go", "Enter")
        self._pane_pid = int(self._display("#{pane_pid}"))
        self._pid = wait_until(self._read_pid, timeout=START_TIMEOUT, what="zcoder to start")
        return self

    def _read_pid(self) -> int | None:
        try:
            text = self.pid_file.read_text(encoding="ascii").strip()
        except FileNotFoundError:
            return None
        return int(text) if text.isdigit() else None

    @property
    def pid(self) -> int:
        assert self._pid is not None, "not started"
        return self._pid

    def terminal_modes(self) -> set[str]:
        """After zcoder exited: the terminal's modes as ``stty -a`` names them (``echo``,
        ``-echo``, ``icanon``...), what the shell gets back."""
        return set(self.stty_file.read_text(encoding="utf-8").replace(";", " ").split())

    def _exit_status(self) -> str | None:
        """None while zcoder runs; its exit status (as text) once it has exited."""
        try:
            return self.status_file.read_text(encoding="ascii").strip() or None
        except FileNotFoundError:
            pass
        if self._pid is not None and not pid_alive(self._pid):
            # Gone without its shell writing the status (the pane was killed): unknown.
            return "" if not pid_alive(self._pane_pid) else None
        return None

    def alive(self) -> bool:
        if self._pid is None:
            return False
        return self._exit_status() is None

    def wait_exit(self, timeout: float = EXIT_TIMEOUT) -> int | None:
        try:
            status = wait_until(
                lambda: (value,) if (value := self._exit_status()) is not None else None,
                timeout=timeout,
                what=f"{self.name} to exit",
            )[0]
        except TimeoutError as exc:
            raise AssertionError(
                f"{exc}; the screen:\n{self.screen_text}\n{_stacks(self.pid)}"
            ) from None
        return int(status) if status.lstrip("-").isdigit() else None

    def close(self) -> None:
        if self._pid is None:
            return
        if self.alive():
            with contextlib.suppress(RuntimeError, subprocess.SubprocessError):
                self.send_key("\x11")
            deadline = time.monotonic() + 3.0
            while self.alive() and time.monotonic() < deadline:
                time.sleep(0.05)
        for signum in (signal.SIGTERM, signal.SIGKILL):
            for pid in (self._pid, self._pane_pid):
                with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
                    os.kill(pid, signum)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._pane_pid, signum)  # the pane's process group: its commands
        with contextlib.suppress(RuntimeError, subprocess.SubprocessError):
            self.tmux("kill-server", check=False)

    # -- the keyboard -------------------------------------------------------------------

    def send_hex(self, *groups: str) -> None:
        """The bytes, in one burst: ``send_hex("1b 0d")``, ``send_hex(ENTER)``."""
        octets = " ".join(groups).split()
        if octets:
            self.tmux("send-keys", "-t", "zc", "-H", *octets)

    def send_slowly(self, *groups: str, gap: float = SLOW_KEY_GAP) -> None:
        """The bytes one at a time, as a very slow typist's terminal would send them.

        One tmux command sequence: each byte is its own send-keys, with a pause between
        them kept by the tmux server (``run-shell -d``, which runs nothing). Not a tmux
        client per byte: starting one can take longer than ESCDELAY on a loaded machine,
        and then ESC [ A arrives as Escape and "[A" (seen under a full ``make test``)."""
        octets = " ".join(groups).split()
        for start in range(0, len(octets), SLOW_BATCH):
            commands: list[str] = []
            for octet in octets[start : start + SLOW_BATCH]:
                commands += ["send-keys", "-t", "zc", "-H", octet, ";"]
                commands += ["run-shell", "-d", f"{gap:.3f}", ";"]
            self.tmux(*commands[:-1])

    def send_key(self, data: str) -> None:
        self.send_hex(to_hex(data))

    def type_text(self, text: str, *, one_at_a_time: bool = False) -> None:
        """Printable text as typed keys (not a paste)."""
        if one_at_a_time:
            self.send_slowly(to_hex(text))
        else:
            self.send_hex(to_hex(text))

    def paste(self, text: str) -> None:
        self.send_hex(paste_hex(text))

    # -- the screen ---------------------------------------------------------------------

    def screen(self) -> list[str]:
        """The screen's rows as they are now (trailing blanks removed)."""
        text = self.tmux("capture-pane", "-p", "-t", "zc")
        rows = [row.rstrip() for row in text.split("\n")]
        return rows[: self.size[1]]

    @property
    def screen_text(self) -> str:
        return "\n".join(self.screen())

    @property
    def raw_output(self) -> str:
        """Everything zcoder wrote to its terminal, escape sequences included."""
        try:
            return self.raw_log.read_bytes().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    def mark(self) -> int:
        return 0

    def _text_after(self, since: int) -> str:
        return self.screen_text  # the screen as it is now: it has no history to mark

    def _shown(self, since: int) -> str:
        return f"the screen:\n{self.screen_text}"

    def wait_gone(self, fragment: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Wait until ``fragment`` is no longer on the screen."""
        try:
            wait_until(
                lambda: fragment not in self.screen_text,
                timeout=timeout,
                what=f"{fragment!r} to leave {self.name}'s screen",
            )
        except TimeoutError as exc:
            raise AssertionError(f"{exc}; the screen:\n{self.screen_text}")

    def rows_with(self, fragment: str) -> list[int]:
        """The numbers (0-based) of the screen rows holding ``fragment``."""
        return [number for number, row in enumerate(self.screen()) if fragment in row]

    def wait_ready(self, timeout: float = START_TIMEOUT) -> None:
        super().wait_ready(timeout)


def _stacks(pid: int) -> str:
    """The Python stacks of a process that will not exit (py-spy, when installed)."""
    spy = shutil.which("py-spy") or shutil.which("py-spy", path=os.path.dirname(sys.executable))
    if spy is None:
        return "(install py-spy to see where it is stuck)"
    done = subprocess.run(
        [spy, "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=30, check=False
    )
    return done.stdout[-6000:] or done.stderr[-2000:]


def start_in_tmux(
    world: object,
    name: str,
    server: object,
    *,
    args: Iterable[str] = (),
    size: tuple[int, int] = (120, 35),
    extended_keys: str = "off",
    wait: bool = True,
    python_args: tuple[str, ...] = ("-m", "zcoder"),
    **extra_env: str,
) -> TmuxInstance:
    """Start zcoder in the workspace ``name`` of ``world`` (a harness.World), in tmux."""
    from tests.e2e.harness import World
    from tests.fixtures.fake_ollama import FakeOllama

    assert isinstance(world, World)
    assert server is None or isinstance(server, FakeOllama)
    index = sum(1 for instance in world.instances if isinstance(instance, TmuxInstance))
    instance = TmuxInstance(
        name,
        world.workspace(name),
        world.env(name, server, **extra_env),
        world.registry,
        socket=world.root / f"tmux{index}",
        args=tuple(args),
        size=size,
        extended_keys=extended_keys,
        python_args=python_args,
    )
    world.instances.append(instance)
    instance.start()
    if wait:
        instance.wait_ready()
    return instance
