"""The relay endpoint's lifecycle: start, readiness, state, health and stop.

This is the part of the relay that owns things: the registry entry, the lock, the socket,
the listener process, the private spool and the manifest. It keeps the one lock they are
changed under, and it alone decides when the relay is available; the inbox, outbox and
leftovers parts (zcoder.relay.inbox, .outbox, .leftovers) only use what it owns.

``start`` never raises for an ordinary failure (an unsafe directory, an overlong socket
path, a missing capability); it leaves a ``reason`` saying why the relay is off, and zcoder
carries on without it. Once started, anything that breaks it (the listener dies, the socket
or the spool goes) stops it for good, unadvertised first, so no peer is told ``accepted``
for a message nobody will run.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import stat
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Final

from zcoder.relay.advert import Advert
from zcoder.relay.client import TransportError, request
from zcoder.relay.control import ListenerCommand
from zcoder.relay.listener_process import ListenerGone, ListenerProcess
from zcoder.relay.protocol import ping_request
from zcoder.relay.registry import (
    RegistryError,
    check_socket_path_length,
    choose_registry_dir,
    new_instance_id,
    prepare_registry_dir,
    socket_path,
    unlink_own,
)
from zcoder.relay.reservation import Reservation, bind_listening_socket
from zcoder.relay.settings import RelayMode, RelaySettings
from zcoder.relay.spares import SpareKeeper
from zcoder.relay.spool import Spool, SpoolError
from zcoder.relay.sweep import LockRecord, SweepResult, sweep_dead_instances

log = logging.getLogger("zcoder.relay.instance")  # one log for all of Relay, as before its split

STATE_READY: Final = "ready"
STATE_BUSY: Final = "busy"
STATE_PAUSED: Final = "paused"


@dataclass(frozen=True)
class RelayStatus:
    available: bool
    state: str  # ready, busy, paused, or "off" when unavailable
    reason: str | None
    instance_id: str | None
    registry: Path | None
    socket: Path | None
    queued: int  # accepted and not completed: waiting to run, running or held
    running: int = 0  # of those, being run now
    held: int = 0  # of those, held for the user (ZCODER_RELAY_INBOUND=hold)

    @property
    def waiting(self) -> int:
        """Messages waiting their turn to run: neither running nor held."""
        return self.queued - self.running - self.held


@dataclass(eq=False)
class Endpoint:
    """One process's relay endpoint, from start to stop (see the module docstring).

    ``on_accepted`` and ``on_forwarded`` are the listener process's events, and
    ``on_unavailable`` and ``on_ready`` (the listener answers and the manifest is
    published, after ``finish_start``) are called on relay threads."""

    settings: RelaySettings
    _: KW_ONLY
    workspace: Path
    env: Mapping[str, str]
    runtime_dir: Path | None
    home: Path | None
    interactive: bool
    advert: Advert
    on_accepted: Callable[[], None]
    on_forwarded: Mapping[str, Callable[[bytes], None]]
    on_unavailable: Callable[[str], None] | None = None
    on_ready: Callable[[], None] | None = None

    def __post_init__(self) -> None:
        self._lock = threading.RLock()
        self._paused = self.settings.mode is RelayMode.PAUSED
        self._busy = False
        self._started = False
        self._reason: str | None = self.settings.disabled_reason or (
            "the relay is off (ZCODER_RELAY=off)" if self.settings.mode is RelayMode.OFF else None
        )
        self.instance_id: str | None = None
        self.registry: Path | None = None
        self.socket_path: Path | None = None
        self._reservation = Reservation()
        self.sweep = SweepResult()  # what the start-up sweep found (dead instances' spools)
        self.spool: Spool | None = None
        self._spares: SpareKeeper | None = None
        self.listener: ListenerProcess | None = None
        self._ready = False  # the listener answered its readiness ping

    # -- state --------------------------------------------------------------------------

    @property
    def state(self) -> str:
        if self._paused:
            return STATE_PAUSED
        return STATE_BUSY if self._busy else STATE_READY

    @property
    def available(self) -> bool:
        return self._started and self._reason is None

    @property
    def ready(self) -> bool:
        """Available, its listener answering, and its manifest published: peers see it."""
        return self.available and self._ready

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def reason(self) -> str | None:
        """Why the relay is off (None while it is available or not yet started)."""
        return self._reason

    def status(self) -> RelayStatus:
        with self._lock:
            if self._started and self._reason is None:
                problem = self._health_problem()
                if problem is not None:
                    self.mark_unavailable(problem)
            waiting, running, held = (
                self.spool.counts() if self.spool is not None and self.available else (0, 0, 0)
            )
            return RelayStatus(
                available=self.available,
                state=self.state if self.available else "off",
                reason=self._reason,
                instance_id=self.instance_id,
                registry=self.registry,
                socket=self.socket_path,
                queued=waiting + running + held,
                running=running,
                held=held,
            )

    def _health_problem(self) -> str | None:
        if self.listener is None or not self.listener.alive:
            error = self.listener.error if self.listener is not None else None
            return error or "the relay listener stopped"
        assert self.spool is not None and self.socket_path is not None
        if not (self.spool.root / "inbox").is_dir():
            return f"the private relay spool {self.spool.root} disappeared"
        try:
            if not stat.S_ISSOCK(os.lstat(self.socket_path).st_mode):
                return f"the relay socket {self.socket_path} was replaced"
        except OSError:
            return f"the relay socket {self.socket_path} disappeared"
        return None

    def mark_unavailable(self, reason: str) -> None:
        """The relay stops itself: unadvertised, then its socket closed and removed, so no
        peer is told `accepted` for a message nobody will run."""
        with self._lock:
            if self._reason is not None:
                return
            self._reason = reason
            self.advert.remove(self.registry, self.instance_id)
            listener, self.listener = self.listener, None
        if listener is not None:
            listener.stop()  # the process (and with it the listening socket) ends and is reaped
        self._remove_socket()
        log.warning("relay unavailable: %s", reason)
        if self.on_unavailable is not None:
            with contextlib.suppress(Exception):
                self.on_unavailable(reason)

    def _remove_socket(self) -> None:
        registry, instance_id, path = self.registry, self.instance_id, self.socket_path
        if registry is not None and instance_id is not None and path is not None:
            try:
                unlink_own(path, registry, instance_id, stat.S_IFSOCK)
            except (RegistryError, OSError) as exc:
                log.warning("relay socket not removed: %s", exc)

    def set_state(self, state: str) -> None:
        """``busy`` while any turn runs, ``ready`` after; pause with pause()."""
        if state not in (STATE_READY, STATE_BUSY):
            raise ValueError(f"set_state takes ready or busy, not {state!r}")
        with self._lock:
            if self._busy != (state == STATE_BUSY):
                self._busy = state == STATE_BUSY
                self._state_changed()

    def set_paused(self, paused: bool) -> None:
        with self._lock:
            if self._paused != paused:
                self._paused = paused
                self._state_changed()

    def _state_changed(self) -> None:
        """The listener first (its answers say the state; once this returns, a message is
        answered ``paused`` when paused), then the manifest."""
        if self.listener is not None and self.available:
            try:
                self.listener.set_state(lambda: self.state)
            except ListenerGone as exc:
                self.mark_unavailable(str(exc))
                return
        self._publish()

    def refresh_manifest(self, update: Callable[[Advert], bool]) -> None:
        """``update`` changes the manifest's mutable fields (zcoder.relay.advert) under this
        endpoint's lock and says whether one changed; the manifest is then published when
        one did, or when it is not written yet."""
        with self._lock:
            if update(self.advert) or not self.advert.written:
                self._publish()

    def _publish(self) -> None:
        if not self.available or not self._ready:
            return
        self._write_manifest()

    def _go_live(self) -> None:
        """Publish the manifest, and only then say ready: whoever sees ``ready`` (another
        thread, a test) can already find this instance in the registry."""
        if self.available:
            self._write_manifest()
            self._ready = self.available

    def _write_manifest(self) -> None:
        assert self.registry is not None
        assert self.instance_id is not None and self.socket_path is not None
        manifest = self.advert.manifest(
            self.instance_id, self.socket_path, self.workspace, self.state
        )
        try:
            self.advert.write(self.registry, manifest)
        except OSError as exc:
            self.mark_unavailable(f"could not publish the relay manifest: {exc.strerror or exc}")

    # -- the listener process -----------------------------------------------------------

    def command(self, command: ListenerCommand) -> dict[str, object] | None:
        """A command whose failure means the listener is gone: the relay stops itself."""
        listener = self.listener
        if listener is None or not listener.configured:
            return None  # not running yet: it has accepted nothing, so there is nothing to say
        try:
            return listener.command(command)
        except ListenerGone as exc:
            self.mark_unavailable(str(exc))
            return None

    def sync(self) -> None:
        """Every event the listener process sent before this call has been handled."""
        listener = self.listener
        if listener is not None and self.available:
            with contextlib.suppress(ListenerGone):
                listener.sync()

    def _accepted(self) -> None:
        """The listener process accepted a message (on its event thread)."""
        self.on_accepted()
        if self._spares is not None:
            self._spares.want()

    # -- start --------------------------------------------------------------------------

    def start(self, *, wait: bool = True) -> RelayStatus:
        """Start the relay. ``wait=False`` (the app) returns once the registry is checked
        and the socket bound; ``finish_start`` (called once the screen is drawn) then
        spawns the listener process, which becomes ready (and the manifest published) on a
        thread. A listener that never answers stops the relay as any later death does."""
        with self._lock:
            if self._started or self._reason is not None:
                return self.status()
            try:
                self._start()
                if wait:
                    self._spawn()
                    self._become_ready()
            except (RegistryError, SpoolError, OSError) as exc:
                reason = str(exc) if not isinstance(exc, OSError) else _os_reason(exc)
                self._teardown()
                self._reason = reason
                return self.status()
            self._started = True
            if wait:
                self._go_live()
                if not self.available:
                    self._teardown()
            return self.status()

    def finish_start(self) -> None:
        """After ``start(wait=False)``: spawn the listener and make it ready, on a thread
        (connections made meanwhile wait in the socket's backlog)."""
        if self.listener is None or self.listener.process is not None:
            return
        threading.Thread(
            target=self._ready_in_background, name="zcoder-relay-ready", daemon=True
        ).start()

    def _ready_in_background(self) -> None:
        try:
            with self._lock:
                if not self.available:
                    return  # stopped before it was finished
                self._spawn()
            self._become_ready()
        except (RegistryError, OSError) as exc:
            self.mark_unavailable(str(exc) if isinstance(exc, RegistryError) else _os_reason(exc))
            return
        with self._lock:
            self._go_live()
        if self.on_ready is not None and self.ready:
            self.on_ready()

    def _become_ready(self) -> None:
        """The listener configured, then answering a ping on the real socket: only then
        does the manifest make this instance visible to anybody."""
        listener, sock_path, instance_id = self.listener, self.socket_path, self.instance_id
        if listener is None or sock_path is None or instance_id is None:
            raise RegistryError("the relay was stopped while it started")
        try:
            listener.configure(lambda: self.state)
        except ListenerGone as exc:
            raise RegistryError(f"the relay listener did not start: {exc}") from None
        try:
            ack = request(
                sock_path,
                ping_request(f"ready-{os.getpid()}", instance_id, instance_id),
                timeout=self.settings.io_timeout,
                max_bytes=self.settings.max_bytes,
            )
        except TransportError as exc:
            raise RegistryError(f"the relay listener did not become ready: {exc.reason}") from None
        if ack.status != "pong":
            raise RegistryError(f"the relay listener answered {ack.status} to its readiness ping")

    def _start(self) -> None:
        if not hasattr(socket, "AF_UNIX"):
            raise RegistryError("this platform has no Unix-domain sockets")
        registry = prepare_registry_dir(
            choose_registry_dir(self.env, self.settings.directory), self.env.get("HOME")
        )
        instance_id = new_instance_id()
        sock_path = socket_path(registry, instance_id)
        check_socket_path_length(sock_path)
        self.registry, self.instance_id, self.socket_path = registry, instance_id, sock_path
        self.advert.started_at = int(time.time())

        self._reservation.lock_instance(registry, instance_id)
        if self.interactive:
            self._reservation.lock_workspace(self.workspace)
        # Dead instances' files go (proven dead: their lock can be taken; see sweep.py).
        self.sweep = sweep_dead_instances(registry, skip=instance_id)
        for problem in self.sweep.problems:
            log.warning("registry sweep: %s", problem)
        if self.sweep.removed:
            log.info("registry sweep removed %d dead instance(s)", len(self.sweep.removed))

        runtime = self._reservation.runtime_dir(self.runtime_dir, self.env)
        spool = Spool(
            runtime / "relay",
            instance_id,
            self.settings.max_bytes,
            self.settings.max_message_chars,
        )
        spool.create()
        self.spool = spool
        self._spares = SpareKeeper(spool, self.settings.max_queue)
        self._reservation.record(
            LockRecord(instance_id, os.getpid(), str(self.workspace), str(runtime))
        )
        self.listener = ListenerProcess(
            bind_listening_socket(sock_path),
            {
                "instance_id": instance_id,
                "registry": str(registry),
                "spool": str(spool.root),
                "max_bytes": self.settings.max_bytes,
                "max_message_chars": self.settings.max_message_chars,
                "max_queue": self.settings.max_queue,
                "io_timeout": self.settings.io_timeout,
                "state": self.state,
                "home": str(self.home) if self.home is not None else None,
                "inbound": self.settings.inbound.value,
                # Only an interactive zcoder lands steers in its turns (frontend/peer_steering).
                "steers": self.interactive,
                "log_level": logging.getLogger("zcoder").getEffectiveLevel(),
            },
            on_accepted=self._accepted,
            on_forwarded=self.on_forwarded,
            on_death=self.mark_unavailable,
        )

    def _spawn(self) -> None:
        assert self.listener is not None and self._spares is not None
        self.listener.start()  # it owns the socket from here: closed in this process
        self._spares.start()

    # -- stop ---------------------------------------------------------------------------

    def stop(self) -> None:
        """Manifest first, then the listener (joined), then own socket and lock, then spool."""
        with self._lock:
            self._teardown()
            if self._started:
                self._started = False
                if self._reason is None:
                    self._reason = "the relay was stopped"

    def _teardown(self) -> None:
        if self._spares is not None:
            self._spares.stop()  # before the spool goes: no file made in a directory removed
        self.advert.remove(self.registry, self.instance_id)
        if self.listener is not None:
            self.listener.stop()
            self.listener = None
        self._remove_socket()
        self._reservation.release(self.registry, self.instance_id)
        if self.spool is not None:
            self.spool.remove()
        self._reservation.remove_runtime()


def _os_reason(exc: OSError) -> str:
    where = f" ({exc.filename})" if exc.filename else ""
    return f"the relay could not start: {exc.strerror or exc}{where}"
