"""A relay-only zcoder peer: no model, no agent, no UI, just the relay.

For trying the relay by hand in two shells, and for tests, which drive it as a separate
process in ``--json`` mode. Run it with ``python -m zcoder.relay``::

    list                 show the other live instances
    send ID              then type the message; end it with a line holding only "."
    send ID TEXT         send a one-line message
    status | pause | resume | quit

Received messages are printed (and completed) as they arrive, unless ``--no-consume``.
In ``--json`` mode every input line is a JSON command and every output line a JSON event.
What peers wrote is shown made visible (zcoder.base.sanitize): in JSON as ``\\uXXXX``
escapes, otherwise as ``screen_safe`` shows it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any, Final, TextIO

from zcoder.base.sanitize import json_text, screen_safe, visible
from zcoder.relay.client import Peer
from zcoder.relay.display import peer_table, sender_label
from zcoder.relay.instance import Relay
from zcoder.relay.settings import load_relay_settings
from zcoder.relay.spool import ClaimedMessage, QuarantinedMessage


@dataclass(eq=False)
class PeerProgram:
    relay: Relay
    out: TextIO
    _: KW_ONLY
    json_mode: bool
    consume: bool

    def __post_init__(self) -> None:
        self._out_lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._consumer = threading.Thread(target=self._consume_loop, daemon=True)
        self._held: list[ClaimedMessage] = []

    def emit(self, event: str, **fields: Any) -> None:
        with self._out_lock:
            if self.json_mode:
                self.out.write(json_text({"event": event, **fields}) + "\n")
            else:
                self.out.write(screen_safe(self._human(event, fields)) + "\n")
            self.out.flush()

    def _human(self, event: str, fields: dict[str, Any]) -> str:
        if event == "received":
            head = f"── message from {visible(fields['sender'])} ──"
            return f"{head}\n{fields['body']}\n{'─' * min(len(head), 60)}"
        if event == "ready":
            return (
                f"relay peer {fields['project']} ready: id {fields['instance_id']}\n"
                f"registry {fields['registry']}; type 'list', 'send ID', 'status' or 'quit'"
            )
        if event == "peers":
            return str(fields["table"])
        if event in ("sent", "error", "info"):
            return str(fields["text"])
        if event == "quarantined":
            return f"rejected spool entry {fields['name']}: {fields['reason']}"
        if event == "status":
            return ", ".join(f"{k}={v}" for k, v in fields.items())
        return f"{event} {fields}"

    # -- receiving ------------------------------------------------------------------------

    def nudge(self) -> None:
        self._wake.set()

    def _consume_loop(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait(0.5)
            self._wake.clear()
            if self.consume:
                while self.claim_and_report(complete=True):
                    pass
            self.relay.set_queued(self.relay.status().waiting)  # as a front end tells it

    def claim_and_report(self, *, complete: bool) -> bool:
        claimed = self.relay.claim_one()
        if claimed is None:
            return False
        if isinstance(claimed, QuarantinedMessage):
            self.emit("quarantined", name=claimed.name, reason=claimed.reason)
            return True
        self._report(claimed)
        if complete:
            self.relay.complete(claimed)
        else:
            self._held.append(claimed)
        return True

    def _report(self, claimed: ClaimedMessage) -> None:
        env = claimed.envelope
        self.emit(
            "received",
            sequence=claimed.sequence,
            **_attributes(env, _RECEIVED_FIELDS),
            sender=sender_label(env),
            body=env.body,
        )

    # -- commands -------------------------------------------------------------------------

    def run(self, lines: TextIO) -> int:
        self._consumer.start()
        try:
            while True:
                line = lines.readline()
                if not line:
                    return 0
                if self.json_mode:
                    try:
                        command = json.loads(line)
                    except ValueError:
                        self.emit("error", text="not a JSON command")
                        continue
                    if not isinstance(command, dict):
                        self.emit("error", text="not a JSON command")
                        continue
                else:
                    command = self._parse_human(line.rstrip("\n"), lines)
                    if command is None:
                        continue
                if self.execute(command) is False:
                    return 0
        finally:
            self._stopping.set()
            self._wake.set()

    def _parse_human(self, line: str, lines: TextIO) -> dict[str, Any] | None:
        words = line.strip().split(maxsplit=2)
        if not words:
            return None
        name = words[0]
        if name == "send":
            if len(words) < 2:
                self.emit("error", text="usage: send ID [TEXT]")
                return None
            if len(words) == 3:
                return {"cmd": "send", "target": words[1], "body": words[2]}
            self.emit("info", text='type the message; end it with a line holding only "."')
            body: list[str] = []
            while True:
                more = lines.readline()
                if not more or more.rstrip("\n") == ".":
                    break
                body.append(more.rstrip("\n"))
            return {"cmd": "send", "target": words[1], "body": "\n".join(body)}
        return {"cmd": name}

    def execute(self, command: dict[str, Any]) -> bool:
        name = command.get("cmd")
        if name == "quit":
            return False
        if name == "list":
            found = self.relay.discover()
            if found.error:
                self.emit("error", text=found.error)
            else:
                self.emit(
                    "peers",
                    peers=[_peer_json(p) for p in found.peers],
                    table=peer_table(found.peers),
                )
        elif name == "send":
            result = self.relay.send(str(command.get("target", "")), str(command.get("body", "")))
            self.emit("sent", status=result.status, text=result.text, message_id=result.message_id)
        elif name == "status":
            self.emit("status", **_attributes(self.relay.status(), _STATUS_FIELDS))
        elif name == "pause":
            self.relay.pause()
            self.emit("info", text="paused: new messages are refused, queued ones are kept")
        elif name == "resume":
            self.relay.resume()
            self.emit("info", text="resumed")
        elif name == "busy":
            self.relay.set_state("busy")
            self.emit("info", text="busy")
        elif name == "ready":
            self.relay.set_state("ready")
            self.emit("info", text="ready")
        elif name == "claim":
            if not self.claim_and_report(complete=False):
                self.emit("info", text="nothing queued")
        elif name == "complete":
            if self._held:
                self.relay.complete(self._held.pop(0))
                self.emit("info", text="completed")
            else:
                self.emit("info", text="nothing claimed")
        else:
            self.emit("error", text=f"unknown command {name!r}")
        return True


def _peer_json(peer: Peer) -> dict[str, Any]:
    return dict(peer.__dict__)


# What the ``received`` and ``status`` events tell of a message's envelope and of the relay.
_RECEIVED_FIELDS: Final = (
    "message_id",
    "sender_instance_id",
    "sender_pid",
    "sender_project",
    "sender_workspace",
    "sender_kind",
)
_STATUS_FIELDS: Final = ("available", "state", "reason", "instance_id", "queued")


def _attributes(obj: object, names: Sequence[str]) -> dict[str, Any]:
    """``obj``'s attributes of these names, in this order (an event's fields)."""
    return {name: getattr(obj, name) for name in names}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m zcoder.relay", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "-w", "--workspace", default=os.getcwd(), help="the project this peer stands for"
    )
    parser.add_argument("--model", default="", help="model name to advertise")
    parser.add_argument("--profile", default="coding", help="profile to advertise")
    parser.add_argument("--json", action="store_true", help="JSON lines in and out (for tests)")
    parser.add_argument("--no-consume", action="store_true", help="leave received messages queued")
    args = parser.parse_args(argv)
    workspace = Path(args.workspace).resolve()
    settings = load_relay_settings(os.environ)
    if settings.disabled_reason:
        print(f"relay unavailable: {settings.disabled_reason}", file=sys.stderr)
        return 2
    program: PeerProgram | None = None
    relay = Relay(
        settings,
        workspace=workspace,
        profile=args.profile,
        model=args.model,
        on_message=lambda: program.nudge() if program is not None else None,
    )
    program = PeerProgram(relay, sys.stdout, json_mode=args.json, consume=not args.no_consume)
    status = relay.start()
    if not status.available:
        program.emit("error", text=f"relay unavailable: {status.reason}")
        return 1
    try:
        program.emit(
            "ready",
            instance_id=status.instance_id,
            pid=os.getpid(),
            project=workspace.name,
            workspace=str(workspace),
            registry=str(status.registry),
            socket=str(status.socket),
        )
        return program.run(sys.stdin)
    except KeyboardInterrupt:
        return 130
    finally:
        relay.stop()
