"""The listener in a process of its own, as the design draws it.

zcoder's process checks the registry, reserves its instance, creates the spool and binds
the listening socket; then it spawns the listener process (``python -P -m
zcoder.relay.listener_service``), hands it the socket and closes its own copy. From then on
the listener process alone accepts, decides and acknowledges, on its own interpreter: a
busy foreground (a reply streaming, a long tool) never delays an answer.

The child inherits exactly three descriptors (the listening socket and two private socket
pairs to its parent) besides /dev/null for stdin and stdout and a pipe for stderr; it runs
in a session of its own (no terminal signal reaches it) with ``/`` as its working
directory (nothing in a workspace can be imported by it).

Two channels, newline-delimited JSON objects (zcoder.relay.control):

* commands, parent to child, each answered by one reply: ``config`` (first, once),
  ``state`` (ready, busy, paused; applied before the reply, so a message that arrives after
  ``pause()`` returned is answered ``paused``), ``sent`` and ``forget`` (the messages a
  receipt may answer), ``store`` (messages recovered from a dead instance), ``stats``
  and ``stop``;
* events, child to parent, never answered: ``accepted`` (a nudge: messages wait),
  ``forwarded`` (a request accepted for the parent, as its payload: a receipt for a message
  the parent sent), ``log`` (a line for the parent's log) and ``died`` (why the loop
  stopped).

Each is a dataclass of zcoder.relay.control, dispatched by a table on each side
(``ListenerProcess.HANDLERS`` here, ``ListenerService.HANDLERS`` in the child).

The child ends when told to stop, when its loop fails (after a ``died`` event) and when
its parent goes away (end of file on the command channel): it never outlives zcoder by
more than a moment, and never holds the socket open for nobody. The parent reaps it on
every path (``ListenerProcess.stop``), and when it dies on its own the parent is told
(``on_death``) and stops advertising.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar, Final

from zcoder.relay.control import (
    Accepted,
    Configure,
    Died,
    Event,
    Forwarded,
    LineReader,
    ListenerCommand,
    Log,
    SetState,
    Stats,
    Stop,
    Sync,
    Synced,
    decode,
)

log = logging.getLogger("zcoder.relay.listener")

MODULE: Final = "zcoder.relay.listener_service"  # the child's main
# How long a command may take to be answered before the child counts as gone.
COMMAND_TIMEOUT: Final = 5.0
# How long the first (the configuration) may take: the child's interpreter starts and
# imports meanwhile, which a loaded machine (a build, a test suite) can slow many times.
START_TIMEOUT: Final = 30.0
# How long stop() waits for the child to exit by itself before it is killed.
STOP_WAIT: Final = 2.0
STDERR_KEPT: Final = 2000  # characters of a dead child's stderr quoted in the reason


class ListenerGone(Exception):
    """The listener process did not answer: it died, or never started."""


# -- the parent's side ------------------------------------------------------------------


@dataclass(eq=False)
class ListenerProcess:
    """The parent's handle on its listener process."""

    _server: socket.socket  # handed to the child by ``start`` (closed here then)
    _config: dict[str, Any]
    _: KW_ONLY
    on_accepted: Callable[[], None]
    # The other side's rows for the requests the listener hands on (Forwarded): wire type
    # -> handler of its payload (zcoder.relay.instance.Relay.FORWARDED).
    on_forwarded: Mapping[str, Callable[[bytes], None]]
    on_death: Callable[[str], None]

    def __post_init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self._commands: socket.socket | None = None
        self._command_lines: LineReader | None = None
        self._events: socket.socket | None = None
        self._command_lock = threading.Lock()
        self._reader: threading.Thread | None = None
        self._stopping = False
        self._died_reason: str | None = None
        self._synced = threading.Condition()
        self._sync_seen = 0
        self._sync_sent = 0
        self.error: str | None = None  # why it ended on its own
        self.configured = False  # the child took its configuration: commands may follow

    def start(self) -> None:
        """Spawn the child and hand it the socket (closed here afterwards); ``configure``
        next."""
        parent_commands, child_commands = socket.socketpair()
        parent_events, child_events = socket.socketpair()
        child_fds = (self._server.fileno(), child_commands.fileno(), child_events.fileno())
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-P", "-m", MODULE, *map(str, child_fds)],
                pass_fds=child_fds,
                close_fds=True,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                cwd="/",
                start_new_session=True,
                env=_child_env(),
            )
        except BaseException:
            for sock in (parent_commands, parent_events):
                sock.close()
            raise
        finally:
            for sock in (child_commands, child_events, self._server):
                sock.close()  # the child owns its ends, and the listening socket
        self._commands, self._events = parent_commands, parent_events
        self._command_lines = LineReader(parent_commands)
        self._reader = threading.Thread(
            target=self._read_events, name="zcoder-relay-events", daemon=True
        )
        self._reader.start()

    def configure(self, state: Callable[[], str]) -> None:
        """Send the configuration, with the state as it is now, and wait for the child to
        take it (its interpreter starts meanwhile: most of a start's time). Raises
        ListenerGone."""
        with self._command_lock:
            self._exchange(Configure({**self._config, "state": state()}), START_TIMEOUT)
            self.configured = True

    def set_state(self, state: Callable[[], str]) -> None:
        """Tell the child the state (once configured; until then the configuration will
        carry it). Raises ListenerGone."""
        with self._command_lock:
            if self.configured:
                self._exchange(SetState(state()))

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def alive(self) -> bool:
        """Not dead: running, or not spawned yet (``start`` comes once the app is drawn)."""
        if self._stopping:
            return False
        return self.process is None or self.process.poll() is None

    # -- commands -----------------------------------------------------------------------

    def command(self, command: ListenerCommand) -> dict[str, Any]:
        """Send one command and wait for its reply. Raises ListenerGone."""
        with self._command_lock:
            if not self.configured:
                raise ListenerGone("the listener process is not running yet")
            return self._exchange(command)

    def _exchange(
        self, command: ListenerCommand, timeout: float = COMMAND_TIMEOUT
    ) -> dict[str, Any]:
        if self._commands is None or self._command_lines is None:
            raise ListenerGone("the listener process is not running")
        try:
            self._commands.settimeout(timeout)
            self._commands.sendall(command.line())
            while True:
                replies = self._command_lines.lines()
                if replies:
                    reply = replies[0]
                    break
                if self._command_lines.closed:
                    raise ListenerGone("the listener process closed its channel")
        except (OSError, ValueError) as exc:
            raise ListenerGone(f"the listener process did not answer ({exc})") from None
        if "error" in reply:
            raise ListenerGone(f"the listener process refused {command.OP}: {reply['error']}")
        return reply

    def sync(self, timeout: float = COMMAND_TIMEOUT) -> bool:
        """Wait until every event the child sent before now has been handled here (its
        log lines, nudges and receipts). False when that did not happen in time."""
        with self._synced:
            self._sync_sent += 1
            token = self._sync_sent
        self.command(Sync(token))
        with self._synced:
            return self._synced.wait_for(lambda: self._sync_seen >= token, timeout)

    def stats(self) -> dict[str, int]:
        reply = self.command(Stats())
        return {key: int(reply.get(key, 0)) for key in ("served", "open", "refused_peers")}

    @property
    def served(self) -> int:
        return self.stats()["served"]

    @property
    def open_connections(self) -> int:
        return self.stats()["open"]

    @property
    def refused_peers(self) -> int:
        return self.stats()["refused_peers"]

    # -- events -------------------------------------------------------------------------

    def _read_events(self) -> None:
        assert self._events is not None
        reader = LineReader(self._events)
        try:
            while not reader.closed:
                for event in reader.lines():
                    self._event(event)
        except (OSError, ValueError) as exc:
            self._died_reason = self._died_reason or f"its event channel failed ({exc})"
        if self._stopping:
            return
        reason = self._death_reason()
        self.error = reason
        log.warning("relay listener process ended: %s", reason)
        with contextlib.suppress(Exception):
            self.on_death(reason)

    def _event(self, line: dict[str, Any]) -> None:
        event = decode(line, Event.BY_OP)
        if event is not None:  # an event this side has no class for is ignored
            self.HANDLERS[type(event)](self, event)

    def _on_accepted(self, event: Accepted) -> None:
        self.on_accepted()

    def _on_forwarded(self, event: Forwarded) -> None:
        handler = self.on_forwarded.get(event.kind)
        if handler is None:
            log.warning("relay listener handed on a %r, which nothing here takes", event.kind)
        else:
            handler(event.payload.encode())

    def _on_log(self, event: Log) -> None:
        level = event.level
        logging.getLogger(event.name or log.name).log(
            level if isinstance(level, int) else logging.WARNING, "%s", event.message
        )

    def _on_synced(self, event: Synced) -> None:
        token = event.token
        with self._synced:
            if isinstance(token, int):
                self._sync_seen = max(self._sync_seen, token)
            self._synced.notify_all()

    def _on_died(self, event: Died) -> None:
        self._died_reason = event.reason[:STDERR_KEPT]

    # Each event the listener process sends (zcoder.relay.control), and what takes it
    # here (on the event thread). One row per Event class.
    HANDLERS: ClassVar[Mapping[type[Event], Callable[[ListenerProcess, Any], None]]] = {
        Accepted: _on_accepted,
        Forwarded: _on_forwarded,
        Log: _on_log,
        Synced: _on_synced,
        Died: _on_died,
    }

    def _death_reason(self) -> str:
        assert self.process is not None
        try:
            code = self.process.wait(STOP_WAIT)
        except subprocess.TimeoutExpired:
            self._kill()
            code = self.process.returncode
        if self._died_reason:
            return self._died_reason
        ended = (
            f"killed by {_signal_name(-code)}" if code is not None and code < 0 else f"exit {code}"
        )
        tail = self._stderr_tail()
        return f"the listener process ended ({ended})" + (f": {tail}" if tail else "")

    def _stderr_tail(self) -> str:
        if self.process is None or self.process.stderr is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            os.set_blocking(self.process.stderr.fileno(), False)
            data = self.process.stderr.read(65536) or b""
            lines = data.decode("utf-8", "replace").strip().splitlines()
            return lines[-1][:STDERR_KEPT] if lines else ""
        return ""

    # -- the end ------------------------------------------------------------------------

    def stop(self) -> None:
        """Tell the child to stop, wait for it (killed after STOP_WAIT) and reap it."""
        if self._stopping:
            return
        self._stopping = True
        if self.process is None:
            self._server.close()  # never handed over
        elif self.process.poll() is None:
            with contextlib.suppress(ListenerGone):
                self._stopping_command()
            try:
                self.process.wait(STOP_WAIT)
            except subprocess.TimeoutExpired:
                self._kill()
        for sock in (self._commands, self._events):
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(STOP_WAIT)
        if self.process is not None and self.process.stderr is not None:
            with contextlib.suppress(OSError):
                self.process.stderr.close()

    def _stopping_command(self) -> None:
        if self._commands is None:
            return
        with self._command_lock:
            try:
                self._commands.settimeout(STOP_WAIT)
                self._commands.sendall(Stop().line())
            except OSError as exc:
                raise ListenerGone(str(exc)) from None

    def _kill(self) -> None:
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(STOP_WAIT)


def _child_env() -> dict[str, str]:
    """The child's environment: this one, minus what would make Python run other code."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHONSTARTUP")}
    env.pop("PYTHONINSPECT", None)
    return env


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
