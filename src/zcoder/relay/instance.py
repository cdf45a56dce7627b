"""The relay facade: one object per zcoder process that owns its relay endpoint.

``start`` never raises for an ordinary failure (an unsafe directory, an overlong socket
path, a missing capability); it returns a status whose ``reason`` says why the relay is
off, and zcoder carries on without it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import itertools
import logging
import os
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from zcoder.relay.client import (
    DiscoveryResult,
    Peer,
    TransportError,
    discover,
    request,
)
from zcoder.relay.listener import LISTEN_BACKLOG
from zcoder.relay.listener_process import ListenerGone, ListenerProcess
from zcoder.relay.names import display_names, name_of
from zcoder.relay.protocol import (
    Ack,
    Envelope,
    EnvelopeError,
    FrameError,
    decode_flat_object,
    ping_request,
    validate_envelope,
)
from zcoder.relay.receipts import (
    Receipt,
    ReceiptBook,
    ReceiptError,
    SentMessage,
    clip_summary,
    validate_receipt,
)
from zcoder.relay.registry import (
    Manifest,
    ManifestError,
    RegistryError,
    check_socket_path_length,
    choose_registry_dir,
    lock_path,
    manifest_path,
    new_instance_id,
    prepare_registry_dir,
    read_manifest_file,
    socket_path,
    unlink_own,
    write_manifest,
)
from zcoder.relay.safefile import UnsafeFile, read_own_file
from zcoder.relay.sanitize import visible
from zcoder.relay.settings import RelayMode, RelaySettings
from zcoder.relay.spool import (
    ClaimedMessage,
    ClaimResult,
    QuarantinedMessage,
    Sequences,
    Spool,
    SpoolError,
)
from zcoder.relay.standing import is_live_instance
from zcoder.relay.sweep import (
    Leftover,
    LockRecord,
    SweepResult,
    forget_leftover,
    leftovers_for,
    recoverable_entries,
    sweep_dead_instances,
)
from zcoder.relay.trust import TrustBook

log = logging.getLogger(__name__)

# Spare files are made after this long without a stored message (see _keep_spares).
SPARES_QUIET_SECONDS: Final = 0.05
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


@dataclass(frozen=True)
class SendResult:
    """The outcome of one delivery; ``text`` is the spec's result text for the model."""

    status: str | None  # the ack status, or None for a transport or lookup failure
    text: str
    peer: Peer | None
    message_id: str | None

    @property
    def accepted(self) -> bool:
        return self.status in ("accepted", "duplicate")


def result_text(project: str, instance_id: str, ack: Ack) -> str:
    if ack.status == "accepted":
        return (
            f"Message accepted by {project} ({instance_id}); queued at position "
            f"{ack.queue_position}. Delivery does not imply task completion."
        )
    if ack.status == "duplicate":
        return (
            f"Message was already accepted by {project} ({instance_id}). "
            "Delivery does not imply task completion."
        )
    if ack.status == "paused":
        return f"{project} is paused and did not accept the message"
    if ack.status == "full":
        return f"{project}'s relay queue is full"
    if ack.reason:  # the receiver said why (a message whose sender fields were refused)
        return f"{project} rejected the message: {ack.status} ({visible(ack.reason)})"
    return f"{project} rejected the message: {ack.status}"


class Relay:
    """Start, stop, pause, resume, status, discover, send, claim_one, complete."""

    def __init__(
        self,
        settings: RelaySettings,
        *,
        workspace: Path,
        env: Mapping[str, str] | None = None,
        runtime_dir: Path | None = None,
        session_id: str = "",
        profile: str = "coding",
        model: str = "",
        name: str = "",
        home: Path | None = None,
        on_message: Callable[[], None] | None = None,
        on_unavailable: Callable[[str], None] | None = None,
        on_ready: Callable[[], None] | None = None,
        interactive: bool = False,
    ) -> None:
        """``on_message``, ``on_unavailable`` and ``on_ready`` (the listener answers and
        the manifest is published, after ``finish_start``) are called on relay threads.

        ``interactive``: this is an interactive zcoder (the TUI), which holds a shared lock
        on its workspace directory for as long as its relay runs: the fact receivers check
        (zcoder.relay.standing) before they give its messages a trusted peer's standing.
        ``zcoder send`` and the relay-only peer are not interactive."""
        self.settings = settings
        self.workspace = workspace
        self.env = dict(os.environ if env is None else env)
        self._runtime_dir = runtime_dir
        self._session_id = session_id
        self._profile = profile
        self._model = model
        self._name = name
        self.on_message = on_message
        self.on_unavailable = on_unavailable
        self.on_ready = on_ready
        self._lock = threading.RLock()
        self._paused = settings.mode is RelayMode.PAUSED
        self._busy = False
        self._started = False
        self._reason: str | None = settings.disabled_reason or (
            "the relay is off (ZCODER_RELAY=off)" if settings.mode is RelayMode.OFF else None
        )
        self.instance_id: str | None = None
        self.registry: Path | None = None
        self.socket_path: Path | None = None
        self._lock_fd: int | None = None
        self.interactive = interactive
        self._workspace_fd: int | None = None  # the workspace lock (interactive only)
        self.sweep = SweepResult()  # what the start-up sweep found (dead instances' spools)
        self._created_runtime: Path | None = None
        self.spool: Spool | None = None
        self.listener: ListenerProcess | None = None
        self._started_at = 0
        self._send_counter = itertools.count(1)
        self._manifest_written = False
        # Messages sent (awaiting a receipt) and receipts received (zcoder.relay.receipts).
        self.receipts = ReceiptBook()
        # Told of every message sent, on the sending thread (the app's history, /inbox).
        self.on_sent: Callable[[SendResult, str], None] | None = None
        self._home = home
        self.trust = TrustBook(home, settings.inbound)
        self._last_accepted = 0  # the listener's last store sequence, as last asked
        self._ready = False  # the listener answered its readiness ping
        self._spares_wanted = threading.Event()
        self._spares_stop = threading.Event()
        self._spares_thread: threading.Thread | None = None
        self._receipt_counter = itertools.count(1)

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

    def status(self) -> RelayStatus:
        with self._lock:
            if self._started and self._reason is None:
                problem = self._health_problem()
                if problem is not None:
                    self._mark_unavailable(problem)
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

    def _mark_unavailable(self, reason: str) -> None:
        """The relay stops itself: unadvertised, then its socket closed and removed, so no
        peer is told `accepted` for a message nobody will run."""
        with self._lock:
            if self._reason is not None:
                return
            self._reason = reason
            self._remove_manifest()
            listener, self.listener = self.listener, None
        if listener is not None:
            listener.stop()  # the process (and with it the listening socket) ends and is reaped
        registry, instance_id, path = self.registry, self.instance_id, self.socket_path
        if registry is not None and instance_id is not None and path is not None:
            try:
                unlink_own(path, registry, instance_id, stat.S_IFSOCK)
            except (RegistryError, OSError) as exc:
                log.warning("relay socket not removed: %s", exc)
        log.warning("relay unavailable: %s", reason)
        if self.on_unavailable is not None:
            with contextlib.suppress(Exception):
                self.on_unavailable(reason)

    def set_state(self, state: str) -> None:
        """``busy`` while any turn runs, ``ready`` after; pause with pause()."""
        if state not in (STATE_READY, STATE_BUSY):
            raise ValueError(f"set_state takes ready or busy, not {state!r}")
        with self._lock:
            if self._busy != (state == STATE_BUSY):
                self._busy = state == STATE_BUSY
                self._state_changed()

    def pause(self) -> None:
        with self._lock:
            if not self._paused:
                self._paused = True
                self._state_changed()

    def resume(self) -> None:
        with self._lock:
            if self._paused:
                self._paused = False
                self._state_changed()

    def _state_changed(self) -> None:
        """The listener first (its answers say the state; once this returns, a message is
        answered ``paused`` when paused), then the manifest."""
        if self.listener is not None and self.available:
            try:
                self.listener.set_state(lambda: self.state)
            except ListenerGone as exc:
                self._mark_unavailable(str(exc))
                return
        self._publish()

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def name(self) -> str:
        return self._name

    def refresh_manifest(
        self,
        *,
        session_id: str | None = None,
        model: str | None = None,
        profile: str | None = None,
        name: str | None = None,
    ) -> None:
        with self._lock:
            changed = False
            for attr, value in (
                ("_session_id", session_id),
                ("_model", model),
                ("_profile", profile),
                ("_name", name),
            ):
                if value is not None and getattr(self, attr) != value:
                    setattr(self, attr, value)
                    changed = True
            if changed or not self._manifest_written:
                self._publish()

    def _manifest(self) -> Manifest:
        assert self.instance_id is not None and self.socket_path is not None
        return Manifest(
            instance_id=self.instance_id,
            pid=os.getpid(),
            project=self.workspace.name or str(self.workspace),
            workspace=str(self.workspace),
            session_id=self._session_id,
            profile=self._profile,
            model=self._model,
            socket=str(self.socket_path),
            state=self.state,
            started_at=self._started_at,
            name=self._name,
        )

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
        try:
            write_manifest(self.registry, self._manifest())
            self._manifest_written = True
        except OSError as exc:
            self._mark_unavailable(f"could not publish the relay manifest: {exc.strerror or exc}")

    # -- lifecycle ----------------------------------------------------------------------

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
            self._mark_unavailable(str(exc) if isinstance(exc, RegistryError) else _os_reason(exc))
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
        self._started_at = int(time.time())

        # Reserve the instance: an exclusive lock file held (flock) for the process
        # lifetime, so a dead instance's leftovers are recognisably stale.
        fd = os.open(
            lock_path(registry, instance_id),
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
        )
        self._lock_fd = fd
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held, listed = os.fstat(fd), os.lstat(lock_path(registry, instance_id))
        if (held.st_dev, held.st_ino) != (listed.st_dev, listed.st_ino):
            raise RegistryError("the relay lock file was replaced while it was being taken")
        if self.interactive:
            self._lock_workspace()
        # Dead instances' files go (proven dead: their lock can be taken; see sweep.py).
        self.sweep = sweep_dead_instances(registry, skip=instance_id)
        for problem in self.sweep.problems:
            log.warning("registry sweep: %s", problem)
        if self.sweep.removed:
            log.info("registry sweep removed %d dead instance(s)", len(self.sweep.removed))

        runtime = self._runtime_dir
        if runtime is None:
            base = self.env.get("XDG_RUNTIME_DIR") or self.env.get("TMPDIR") or "/tmp"
            runtime = Path(tempfile.mkdtemp(prefix=f"zcoder-{os.getpid()}-", dir=base))
            self._created_runtime = runtime
        spool = Spool(
            runtime / "relay",
            instance_id,
            self.settings.max_bytes,
            self.settings.max_message_chars,
        )
        spool.create()
        self.spool = spool
        # The lock file says where the spool is, for whoever sweeps after a crash.
        os.pwrite(
            fd,
            LockRecord(instance_id, os.getpid(), str(self.workspace), str(runtime)).to_bytes(),
            0,
        )

        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            old_umask = os.umask(0o177)  # the socket file is created 0600
            try:
                server.bind(os.fspath(sock_path))
            finally:
                os.umask(old_umask)
            server.listen(LISTEN_BACKLOG)
        except BaseException:
            server.close()
            raise
        self.listener = ListenerProcess(
            server,
            {
                "instance_id": instance_id,
                "registry": str(registry),
                "spool": str(spool.root),
                "max_bytes": self.settings.max_bytes,
                "max_message_chars": self.settings.max_message_chars,
                "max_queue": self.settings.max_queue,
                "io_timeout": self.settings.io_timeout,
                "state": self.state,
                "home": str(self._home) if self._home is not None else None,
                "inbound": self.settings.inbound.value,
                "log_level": logging.getLogger("zcoder").getEffectiveLevel(),
            },
            on_accepted=self._accepted,
            on_receipt=self._receipt,
            on_death=self._mark_unavailable,
        )

    def _lock_workspace(self) -> None:
        """A shared lock on the workspace directory, held for the relay's lifetime: the
        kernel lists it under this pid, which is how a receiver knows this process is an
        interactive instance working there (zcoder.relay.standing). Close-on-exec, so no
        command this instance runs holds it. Without it (an exclusive lock someone else
        holds) the relay works; peers just cannot trust this instance."""
        try:
            fd = os.open(self.workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            log.warning("relay: workspace not locked (%s); peers cannot trust it", exc)
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            log.warning("relay: workspace not locked (%s); peers cannot trust it", exc)
            return
        self._workspace_fd = fd

    def _spawn(self) -> None:
        assert self.listener is not None and self.spool is not None
        spool = self.spool
        self.listener.start()  # it owns the socket from here: closed in this process
        self._spares_wanted.set()
        self._spares_thread = threading.Thread(
            target=self._keep_spares, args=(spool,), name="zcoder-relay-spares", daemon=True
        )
        self._spares_thread.start()

    def _keep_spares(self, spool: Spool) -> None:
        """Keep the spool's spare files topped up (zcoder.relay.spool), off every path that
        waits: after start, and after each message the listener stored."""
        while not self._spares_stop.is_set():
            self._spares_wanted.wait()
            # Made once messages stop coming for a moment: a burst (up to a full queue)
            # is stored through the spares made before it, never competing with new ones
            # for the spool's directory.
            while True:
                self._spares_wanted.clear()
                if self._spares_stop.wait(SPARES_QUIET_SECONDS):
                    return
                if not self._spares_wanted.is_set():
                    break
            spool.top_up_spares(self.settings.max_queue)

    def _accepted(self) -> None:
        """The listener process accepted a message (on its event thread)."""
        if self.on_message is not None:
            self.on_message()
        self._spares_wanted.set()

    def _receipt(self, payload: bytes) -> None:
        """A receipt the listener process accepted: judged again against this book."""
        try:
            receipt = validate_receipt(decode_flat_object(payload))
        except (FrameError, ReceiptError) as exc:
            log.warning("relay listener passed on a receipt that does not validate: %s", exc)
            return
        status, reason = self.receipts.accept(receipt)
        if status != "accepted":
            log.info("relay receipt %s not recorded: %s", receipt.message_id, reason)
            return
        if self.on_message is not None:
            self.on_message()

    def leftovers(self) -> list[Leftover]:
        """Unrun messages a dead instance left in this workspace (found at start)."""
        return leftovers_for(self.sweep, str(self.workspace))

    def recover(self, leftover: Leftover) -> tuple[int, list[str]]:
        """Queue here the messages a dead instance accepted and never ran, oldest first,
        then remove its spool. Returns (messages queued, problems with the others)."""
        if self.spool is None or self.instance_id is None or self.registry is None:
            return 0, ["the relay is unavailable"]
        queued, problems = 0, []
        for entry in recoverable_entries(leftover.spool):
            try:
                data = read_own_file(entry, self.settings.max_bytes)
                envelope = validate_envelope(
                    decode_flat_object(data), self.settings.max_message_chars, stored=True
                )
                if envelope.target_instance_id != leftover.instance_id:
                    raise EnvelopeError("it was addressed to another instance")
            except (UnsafeFile, FrameError, EnvelopeError) as exc:
                problems.append(f"{entry.name}: {exc}")
                continue
            moved = dataclasses.replace(envelope, target_instance_id=self.instance_id)
            status = self._store_recovered(moved)
            if status == "accepted":
                queued += 1
            elif status != "duplicate":
                problems.append(f"{entry.name}: {status}")
        self.sweep.leftovers.remove(leftover)
        forget_leftover(self.registry, leftover)
        if queued and self.on_message is not None:
            self.on_message()
        return queued, problems

    def _store_recovered(self, envelope: Envelope) -> str:
        """Queue a recovered message through the listener process (the one that numbers
        the spool's entries)."""
        if self.listener is None:
            return "the relay is unavailable"
        try:
            reply = self.listener.command("store", payload=envelope.to_payload().decode())
        except ListenerGone as exc:
            return str(exc)
        status = str(reply.get("status", ""))
        return status if status in ("accepted", "duplicate") else str(reply.get("reason", status))

    def drop_leftover(self, leftover: Leftover) -> None:
        """The user declined a dead instance's unrun messages: remove its spool."""
        if self.registry is not None:
            self.sweep.leftovers.remove(leftover)
            forget_leftover(self.registry, leftover)

    def waiting(self) -> list[ClaimedMessage]:
        """Accepted messages waiting in the queue (not held), oldest first, unclaimed."""
        return self.spool.waiting() if self.spool is not None and self.available else []

    def held(self) -> list[ClaimResult]:
        """Messages that wait for the user (held by policy), oldest first."""
        if self.spool is None or not self.available:
            return []
        found = self.spool.held()
        for entry in found:
            if isinstance(entry, QuarantinedMessage):
                self._slot_freed(entry.name)
        return found

    def release(self, name: str) -> bool:
        """Run a held message: it joins the queue, next in line."""
        return self.spool.release(name) if self.spool is not None else False

    def discard(self, name: str) -> bool:
        if self.spool is None or not self.spool.discard(name):
            return False
        self._slot_freed(name)
        return True

    def _slot_freed(self, name: str) -> None:
        """Tell the listener a queue slot is free (an entry done, discarded or
        quarantined here): its queue positions and its ``full`` stay exact."""
        if self.listener is not None and self.available:
            self._listener_command("done", name=name)

    def stop(self) -> None:
        """Manifest first, then the listener (joined), then own socket and lock, then spool."""
        with self._lock:
            self._teardown()
            if self._started:
                self._started = False
                if self._reason is None:
                    self._reason = "the relay was stopped"

    def _remove_manifest(self) -> None:
        if self.registry is None or self.instance_id is None:
            return
        try:
            unlink_own(
                manifest_path(self.registry, self.instance_id),
                self.registry,
                self.instance_id,
                stat.S_IFREG,
            )
        except (RegistryError, OSError) as exc:
            log.warning("relay manifest not removed: %s", exc)
        self._manifest_written = False

    def _teardown(self) -> None:
        self._spares_stop.set()
        self._spares_wanted.set()
        if self.spool is not None:
            self.spool.stop_spares()
        spares, self._spares_thread = self._spares_thread, None
        if spares is not None and spares is not threading.current_thread():
            spares.join(2.0)  # before the spool goes: no file made in a directory removed
        self._remove_manifest()
        if self.listener is not None:
            self.listener.stop()
            self.listener = None
        if self.registry is not None and self.instance_id is not None:
            if self.socket_path is not None:
                try:
                    unlink_own(self.socket_path, self.registry, self.instance_id, stat.S_IFSOCK)
                except (RegistryError, OSError) as exc:
                    log.warning("relay socket not removed: %s", exc)
            if self._lock_fd is not None:
                try:
                    unlink_own(
                        lock_path(self.registry, self.instance_id),
                        self.registry,
                        self.instance_id,
                        stat.S_IFREG,
                    )
                except (RegistryError, OSError) as exc:
                    log.warning("relay lock not removed: %s", exc)
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._lock_fd)
            self._lock_fd = None
        if self._workspace_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._workspace_fd)
            self._workspace_fd = None
        if self.spool is not None:
            self.spool.remove()
        if self._created_runtime is not None:
            with contextlib.suppress(OSError):
                os.rmdir(self._created_runtime)
            self._created_runtime = None

    # -- discovery and sending ----------------------------------------------------------

    def discover(self) -> DiscoveryResult:
        """Live peers; when this relay never started, an error with the reason instead."""
        if self.registry is None:
            return DiscoveryResult(error=self._reason or "the relay has not been started")
        return discover(
            self.registry, self_instance_id=self.instance_id, timeout=self.settings.io_timeout
        )

    def is_interactive_peer(self, peer: Peer) -> bool:
        """Whether ``peer`` is proven a live interactive zcoder working in its workspace
        (zcoder.relay.standing): only such a peer can be trusted."""
        if self.registry is None:
            return False
        return is_live_instance(self.registry, peer.instance_id, peer.pid, peer.workspace)

    def send(self, target_instance_id: str, body: str) -> SendResult:
        """Deliver ``body`` to the live peer with exactly this instance id."""
        if not self.available or self.instance_id is None:
            return SendResult(None, f"the relay is unavailable: {self._reason}", None, None)
        if not body:
            return SendResult(None, "the message is empty; nothing was sent", None, None)
        if len(body) > self.settings.max_message_chars:
            return SendResult(
                None,
                f"the message has {len(body)} characters; the limit is "
                f"{self.settings.max_message_chars} (ZCODER_RELAY_MAX_MESSAGE_CHARS)",
                None,
                None,
            )
        found = self.discover()
        peer = next((p for p in found.peers if p.instance_id == target_instance_id), None)
        # Called by the name `zcoder agents` and /list-agents show (name#pid where names
        # collide; the project for zcoder.zsh), the name the user knows it by.
        shown = display_names(found.peers).get(target_instance_id, "")
        if peer is None:
            return SendResult(
                None,
                f"no live zcoder instance has the id {target_instance_id!r}; "
                "call list_agents and use an exact instance_id from it",
                None,
                None,
            )
        message_id = f"{self.instance_id}-{next(self._send_counter)}"
        envelope = Envelope(
            message_id=message_id,
            target_instance_id=peer.instance_id,
            sender_instance_id=self.instance_id,
            sender_pid=os.getpid(),
            sender_project=self.workspace.name or str(self.workspace),
            sender_workspace=str(self.workspace),
            body=body,
            created_at=int(time.time()),
        )
        payload = envelope.to_payload()
        if len(payload) > self.settings.max_bytes:
            return SendResult(
                None,
                f"the message is {len(payload)} bytes framed; the limit is "
                f"{self.settings.max_bytes} (ZCODER_RELAY_MAX_BYTES)",
                peer,
                message_id,
            )
        # Recorded before delivery: a receipt may come back before the ack is read here.
        self.receipts.record_sent(message_id, peer.instance_id, name_of(peer), body)
        self._listener_command("sent", message_id=message_id, target=peer.instance_id)
        ack = self._deliver(Path(peer.socket), payload, message_id)
        if isinstance(ack, str):
            result = SendResult(None, f"delivery to {shown} failed: {ack}", peer, message_id)
        else:
            result = SendResult(
                ack.status, result_text(shown, peer.instance_id, ack), peer, message_id
            )
        if result.status not in ("accepted", "duplicate"):
            self.receipts.forget(message_id)
            self._listener_command("forget", message_id=message_id)
        if self.on_sent is not None:
            with contextlib.suppress(Exception):  # the history is not worth a failed send
                self.on_sent(result, body)
        return result

    def _listener_command(self, op: str, **fields: object) -> dict[str, object] | None:
        """A command whose failure means the listener is gone: the relay stops itself."""
        listener = self.listener
        if listener is None or not listener.configured:
            return None  # not running yet: it has accepted nothing, so there is nothing to say
        try:
            return listener.command(op, **fields)
        except ListenerGone as exc:
            self._mark_unavailable(str(exc))
            return None

    def _deliver(self, path: Path, payload: bytes, message_id: str) -> Ack | str:
        """Send, retrying once with the same payload after an ambiguous failure."""
        last = ""
        for _attempt in range(2):
            try:
                ack = request(
                    path,
                    payload,
                    timeout=self.settings.io_timeout,
                    max_bytes=self.settings.max_bytes,
                )
            except TransportError as exc:
                last = exc.reason
                if exc.ambiguous:
                    continue
                return last
            if ack.message_id != message_id:
                return f"the acknowledgement was for another message ({ack.message_id!r})"
            return ack
        return last

    def send_receipt(self, task: Envelope, outcome: str, summary: str) -> str:
        """Tell ``task``'s sender how it ended; the ack status, or why nothing was sent.

        A sender that answered ``unsupported`` once (zcoder.zsh) is never sent another.
        """
        if not self.available or self.instance_id is None or self.registry is None:
            return "relay unavailable"
        sender = task.sender_instance_id
        if self.receipts.is_receiptless(sender):
            return "receiptless"
        try:
            manifest = read_manifest_file(self.registry, f"a-{sender}.json")
        except ManifestError as exc:
            return f"sender gone ({exc})"
        if manifest.pid != task.sender_pid:
            return "sender gone (another process has its manifest)"
        message_id = f"{self.instance_id}-r{next(self._receipt_counter)}"
        receipt = Receipt(
            message_id=message_id,
            target_instance_id=sender,
            sender_instance_id=self.instance_id,
            sender_pid=os.getpid(),
            in_reply_to=task.message_id,
            outcome=outcome,
            summary=clip_summary(summary),
            created_at=int(time.time()),
        )
        ack = self._deliver(Path(manifest.socket), receipt.to_payload(), message_id)
        if isinstance(ack, str):
            return ack
        if ack.status == "unsupported":
            self.receipts.mark_receiptless(sender)
        return ack.status

    def take_receipts(self) -> list[tuple[Receipt, SentMessage]]:
        """Receipts received since the last call, with the message each answers (every
        receipt the listener process accepted before this call included)."""
        listener = self.listener
        if listener is not None and self.available:
            with contextlib.suppress(ListenerGone):
                listener.sync()
        return self.receipts.take()

    # -- the foreground's side of the queue ---------------------------------------------

    def claim_one(self) -> ClaimResult | None:
        """The oldest queued message, or None. Paused, nothing is claimed: accepted
        messages stay queued and run in order after resume (the seed's pause semantics)."""
        if self.spool is None or not self.available or self._paused:
            return None
        try:
            claimed = self.spool.claim_one()
        except SpoolError as exc:
            self._mark_unavailable(str(exc))
            return None
        if isinstance(claimed, QuarantinedMessage):
            self._slot_freed(claimed.name)
        return claimed

    def sequences(self) -> Sequences:
        """The acceptance sequence of the oldest queued message (None: nothing queued, or
        the relay is unavailable) and of the last one accepted. Paused, messages still wait
        (``claim_one`` returns None) and are reported here."""
        if self.spool is None:
            return Sequences(None, 0)
        found = self.spool.sequences()
        if not self.available:
            return Sequences(None, self._last_accepted)
        reply = self._listener_command("sequence")
        if reply is not None:
            last = reply.get("last_accepted")
            self._last_accepted = max(self._last_accepted, last if isinstance(last, int) else 0)
        return Sequences(found.oldest_waiting, self._last_accepted)

    def complete(self, claimed: ClaimedMessage) -> None:
        if self.spool is not None:
            try:
                self.spool.complete(claimed)
            except OSError as exc:
                log.warning("relay receipt not recorded: %s", exc)
            self._slot_freed(claimed.path.name)


def _os_reason(exc: OSError) -> str:
    where = f" ({exc.filename})" if exc.filename else ""
    return f"the relay could not start: {exc.strerror or exc}{where}"
