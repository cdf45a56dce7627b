"""The listener process's program (``python -P -m zcoder.relay.listener_service``; its
parent's side is zcoder.relay.listener_process): the listener loop
on the main thread, with the receiver's decision, the spool's store side, the sender check
and the per-peer policy, and the parent's commands read in the same loop.

State kept here, not in the parent: the instance's state (ready, busy, paused) as the
parent last set it, the ids of accepted messages (for ``duplicate``), the store sequence,
and a copy of the messages sent (so a receipt is judged here; the parent judges it again
with its own book). Everything else lives on disk, where both processes see it: the
spool's directories, the registry's manifests, the per-peer policies (trust.json).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from zcoder.base.processes import pid_alive
from zcoder.relay.control import (
    ACCEPTED,
    Configure,
    Died,
    EventWriter,
    Forget,
    Forwarded,
    LastAccepted,
    LineReader,
    ListenerCommand,
    Log,
    MessageSent,
    SetState,
    SpoolDone,
    Stats,
    Stop,
    Store,
    Sync,
    Synced,
    WatchSent,
    decode,
    encode,
)
from zcoder.relay.listener import Listener
from zcoder.relay.notifier import watcher_alive
from zcoder.relay.peercred import (
    PeerCredentials,
    ProcessStats,
    can_check_ancestry,
    is_sender_in_its_session,
    start_time_of,
)
from zcoder.relay.protocol import (
    MAX_SENDER_PROJECT_CHARS,
    MAX_SENDER_WORKSPACE_CHARS,
    Envelope,
    FrameError,
    Request,
    decode_flat_object,
    validate_envelope,
)
from zcoder.relay.receipts import ReceiptBook
from zcoder.relay.receiver import Decision, Receiver, Refused, Verified
from zcoder.relay.registry import Manifest, ManifestCache, ManifestError
from zcoder.relay.settings import Inbound
from zcoder.relay.spool import Spool, SpoolError
from zcoder.relay.standing import (
    INSTANCE,
    Contradiction,
    LockFacts,
    check_consistent,
    standing_of,
)
from zcoder.relay.trust import TrustBook
from zcoder.relay.watches import Watch, WatchBook

log = logging.getLogger("zcoder.relay.listener")

STATES = ("ready", "busy", "paused")
# How often the loop wakes while events wait for a parent that does not read them.
EVENT_RETRY_SECONDS = 0.2
# How long the child waits for its configuration before it gives up.
CONFIG_WAIT_SECONDS = 10.0

Reply = dict[str, Any] | None  # a command's reply; None: {"ok": true}


class ListenerService:
    def __init__(
        self,
        config: dict[str, Any],
        server: socket.socket,
        commands: socket.socket,
        command_lines: LineReader,
        events: EventWriter,
    ) -> None:
        self.commands = commands
        self.command_lines = command_lines
        self.events = events
        self.state = str(config.get("state", "ready"))
        self.instance_id = str(config["instance_id"])
        self.registry = Path(config["registry"])
        self.max_queue = int(config["max_queue"])
        self.max_message_chars = int(config["max_message_chars"])
        self.spool = Spool(
            Path(config["spool"]),
            self.instance_id,
            int(config["max_bytes"]),
            self.max_message_chars,
        )
        home = config.get("home")
        self.trust = TrustBook(Path(home) if home else None, Inbound(config["inbound"]))
        self.takes_steers = bool(config.get("steers"))  # else every steer is queued
        self.manifests = ManifestCache()
        self.process_stats = ProcessStats()  # of the connecting processes, for check_sender
        # The connecting process's stat as check_sender read it for this request: its
        # start time names the process whose lock facts are remembered (no second read).
        self._peer_stat: tuple[int, list[bytes] | None] | None = None
        self.lock_facts = LockFacts(self.registry, self._peer_start_time)
        self._checked: tuple[str, Manifest] | None = None  # the last sender checked
        self.receipts = ReceiptBook()  # a copy of the parent's sent messages
        # Watches on this instance, handed to the parent once it is idle (its own watches
        # sent are in the copy of its messages sent, ``receipts``).
        self.watchers = WatchBook(lambda watch: watcher_alive(self.registry, watch))
        self.receiver = Receiver(
            self.instance_id,
            self.spool,
            max_message_chars=self.max_message_chars,
            max_queue=self.max_queue,
            state=lambda: self.state,
            sender_check=self.check_sender,
            receipts=self.receipts,
            forward=self._forward,
            verify=self.verify,
            watchers=self.watchers,
        )
        self.listener = Listener(
            server,
            self.receiver,
            max_bytes=int(config["max_bytes"]),
            io_timeout=float(config["io_timeout"]),
            on_accepted=self._accepted,
            on_idle=self._idle,
        )
        commands.setblocking(False)
        self.listener.watch(commands, self._commands_ready)

    def run(self) -> int:
        try:
            self.listener.serve_forever()
        finally:
            self.listener.stop()
            self.process_stats.close()
        if self.listener.error is not None:
            self.events.send(Died(f"the relay listener stopped: {self.listener.error!r}"))
            self.events.flush()
            return 1
        return 0

    # -- the loop's hooks ---------------------------------------------------------------

    def _accepted(self, decision: Decision) -> None:
        if decision.request_type == Envelope.TYPE:
            self.spool.prepare_next()  # after the ack: off the next message's way
            self.events.send(ACCEPTED)
        elif decision.request_type == Watch.TYPE and decision.accepted:
            self._check_idle()

    def _check_idle(self) -> None:
        """Idle (ready, nothing waiting or running): every watch due goes to the parent,
        which sends its notice (zcoder.relay.notifier)."""
        if not len(self.watchers) or self.state != "ready":
            return
        waiting, running, _held = self.spool.counts()
        if waiting + running == 0:
            for watch in self.watchers.take_all():
                self._forward(watch)

    def _forward(self, request: Request) -> None:
        """A request accepted for the parent (a receipt): to it, as its payload."""
        self.events.send(Forwarded(request.TYPE, request.to_payload().decode()))

    def _idle(self) -> float | None:
        """Before each wait: flush events; wake again for a nudge held back, or soon
        when the parent is not reading."""
        if not self.events.flush():
            return EVENT_RETRY_SECONDS
        return self.events.due()

    def _commands_ready(self) -> None:
        batch = self.command_lines.lines()
        for command in batch:
            reply = self.on_command(command)
            self.commands.setblocking(True)
            try:
                self.commands.sendall(encode(reply))
            finally:
                self.commands.setblocking(False)
        if self.command_lines.closed:
            log.info("relay listener: zcoder went away; the listener stops")
            self.listener.stop()

    def on_command(self, line: dict[str, Any]) -> dict[str, Any]:
        """The reply to one command line, through HANDLERS."""
        try:
            command = decode(line, ListenerCommand.BY_OP)
        except ValueError as exc:
            return {"error": str(exc)}
        if command is None:
            return {"error": f"unknown command {line.get('op')!r}"}
        return self.HANDLERS[type(command)](self, command) or {"ok": True}

    def _configured_again(self, command: Configure) -> Reply:
        return {"error": "the listener process is configured already"}

    def _set_state(self, command: SetState) -> Reply:
        if command.state not in STATES:
            return {"error": f"unknown state {command.state!r}"}
        self.state = command.state
        self._check_idle()
        return None

    def _sent(self, command: MessageSent) -> Reply:
        self.receipts.record_sent(command.message_id, command.target, "", "")
        return None

    def _watch_sent(self, command: WatchSent) -> Reply:
        self.receipts.record_sent(command.message_id, command.target, "", "", watch=True)
        return None

    def _forget(self, command: Forget) -> Reply:
        self.receipts.forget(command.message_id)
        return None

    def _last_accepted(self, command: LastAccepted) -> Reply:
        return {"ok": True, "last_accepted": self.spool.sequences().last_accepted}

    def _sync(self, command: Sync) -> Reply:
        self.events.send(Synced(command.token))
        return None

    def _done(self, command: SpoolDone) -> Reply:
        self.spool.forget_pending(command.name)
        self._check_idle()
        return None

    def _stats(self, command: Stats) -> Reply:
        return {
            "ok": True,
            "served": self.listener.served,
            "open": self.listener.open_connections,
            "refused_peers": self.listener.refused_peers,
        }

    def _stop(self, command: Stop) -> Reply:
        self.listener.stop()
        return None

    def _store(self, command: Store) -> Reply:
        """A message recovered from a dead instance, already re-addressed to this one."""
        data = command.payload.encode()
        try:
            envelope = validate_envelope(
                decode_flat_object(data), self.max_message_chars, stored=True
            )
            status, position = self.spool.store(envelope, data, max_queue=1 << 30)
        except (FrameError, ValueError, SpoolError) as exc:
            return {"ok": True, "status": "invalid", "reason": str(exc)}
        if status == "accepted":
            self.events.send(ACCEPTED)
        return {"ok": True, "status": status, "position": position}

    # Each command zcoder's process sends (zcoder.relay.control), and what answers it: a
    # reply, or None for ``{"ok": true}``. One row per ListenerCommand class.
    HANDLERS: ClassVar[Mapping[type[ListenerCommand], Callable[[ListenerService, Any], Reply]]] = {
        Configure: _configured_again,
        SetState: _set_state,
        MessageSent: _sent,
        WatchSent: _watch_sent,
        Forget: _forget,
        Store: _store,
        LastAccepted: _last_accepted,
        Sync: _sync,
        SpoolDone: _done,
        Stats: _stats,
        Stop: _stop,
    }

    # -- what the receiver asks ---------------------------------------------------------

    def check_sender(
        self, sender_id: str, sender_pid: int, peer: PeerCredentials | None
    ) -> str | None:
        self._peer_stat = None
        seen_alive = False  # the sender itself connected, and its stat shows it running
        if peer is not None and can_check_ancestry():
            if not is_sender_in_its_session(peer.pid, sender_pid, self._peer_fields):
                return "the connecting process is not the sender or its descendant in its session"
            seen_alive = peer.pid == sender_pid
        try:
            manifest = self.manifests.read(self.registry, f"a-{sender_id}.json")
        except ManifestError as exc:
            return f"the sender is not a registered instance ({exc})"
        self._checked = (sender_id, manifest)  # for verify(), which comes next
        if manifest.pid != sender_pid:
            return "the sender's manifest has another pid"
        if not seen_alive and not pid_alive(sender_pid):
            return "the sender process is not alive"
        return None

    def _peer_fields(self, pid: int) -> list[bytes] | None:
        fields = self.process_stats.fields(pid)
        if self._peer_stat is None:  # the first read is of the connecting process
            self._peer_stat = (pid, fields)
        return fields

    def _peer_start_time(self, pid: int) -> bytes | None:
        """The start time of ``pid`` if it is the process this request's sender check read
        (else None: its lock facts are looked at afresh, not remembered)."""
        seen = self._peer_stat
        return start_time_of(seen[1]) if seen is not None and seen[0] == pid else None

    def verify(self, envelope: Envelope, peer: PeerCredentials | None) -> Verified | Refused:
        """A checked sender's standing (zcoder.relay.standing): the message as it is stored
        and shown (the sender fields that were verified), and its fate: trust only for a
        proven interactive instance, a block for any path the sender is in or names."""
        checked = self._checked
        if checked is not None and checked[0] == envelope.sender_instance_id:
            manifest = checked[1]
        else:
            try:
                manifest = self.manifests.read(
                    self.registry, f"a-{envelope.sender_instance_id}.json"
                )
            except ManifestError:  # gone since the sender check read it a moment ago
                return Refused("the sender is not a registered instance")
        try:
            check_consistent(envelope, manifest)
        except Contradiction as exc:
            return Refused(str(exc))
        standing = standing_of(envelope, manifest, peer, self.registry, locks=self.lock_facts)
        inbound = self.trust.policy_for(
            standing.workspace, trusted=standing.kind == INSTANCE, claims=standing.places()
        )
        stored = Envelope(  # built directly: dataclasses.replace costs twice as much
            message_id=envelope.message_id,
            target_instance_id=envelope.target_instance_id,
            sender_instance_id=envelope.sender_instance_id,
            sender_pid=envelope.sender_pid,
            sender_project=standing.name[:MAX_SENDER_PROJECT_CHARS],
            sender_workspace=standing.workspace[:MAX_SENDER_WORKSPACE_CHARS],
            body=envelope.body,
            created_at=envelope.created_at,
            sender_kind=standing.kind,
            delivery=envelope.delivery,
        )
        # A steer reaches the running turn only from a proven instance the user trusts.
        trusted = (
            bool(envelope.delivery)
            and self.takes_steers
            and self.trust.trusts(standing.workspace, proven=standing.kind == INSTANCE)
        )
        return Verified(stored, inbound, trusted)


class _ForwardToParent(logging.Handler):
    def __init__(self, events: EventWriter) -> None:
        super().__init__()
        self.events = events

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            message = record.getMessage()
            if record.exc_info:
                message += "\n" + logging.Formatter().formatException(record.exc_info)
            self.events.send(Log(record.levelno, record.name, message))


def main(argv: list[str]) -> int:
    server_fd, command_fd, event_fd = (int(value) for value in argv)
    for number in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(number, signal.SIG_IGN)
    commands = socket.socket(fileno=command_fd)
    events = EventWriter(socket.socket(fileno=event_fd))
    server = socket.socket(fileno=server_fd)
    handler = _ForwardToParent(events)
    root = logging.getLogger("zcoder")
    root.addHandler(handler)
    root.propagate = False
    commands.settimeout(CONFIG_WAIT_SECONDS)
    lines = LineReader(commands)
    first: list[dict[str, Any]] = []
    while not first and not lines.closed:
        first = lines.lines()
    if not first or first[0].get("op") != Configure.OP:
        return 2
    config = Configure.from_fields(first[0]).settings
    commands.sendall(encode({"ok": True}))
    service = ListenerService(config, server, commands, lines, events)
    # At least INFO: the parent logs each line through its own loggers, whose levels rule.
    root.setLevel(min(int(config.get("log_level", logging.INFO)), logging.INFO))
    return service.run()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
