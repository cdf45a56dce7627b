"""The relay from scripts: ``zcoder agents`` and ``zcoder send``.

``zcoder agents [--json]`` lists the live instances. It only discovers: it publishes
nothing, creates nothing and pings each candidate as discovery always does.

``zcoder send TARGET [MESSAGE]`` delivers one message (MESSAGE, or standard input when it is
absent or ``-``) as a short-lived relay-only peer: it registers (receivers accept messages
only from registered live instances), finds TARGET among the live instances (a name
unique among them, ``name#pid``, or an exact instance id), sends, prints the
acknowledgement and exits, removing its files. It is not an interactive instance, and
receivers know it (zcoder.relay.standing): its messages are shown as ``via zcoder send,
pid N, from DIR`` and never get a trusted peer's standing, whoever runs it. What peers
wrote about themselves is shown made visible (zcoder.base.sanitize), in JSON too. The exit
status says what happened (see EXIT_CODES) so a script can act on it. No confirmation is
asked: the user who runs the command is the one who decided to send.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TextIO

from zcoder.base.sanitize import json_text, screen_safe, visible
from zcoder.relay.client import Peer, discover
from zcoder.relay.display import peer_table
from zcoder.relay.instance import Relay
from zcoder.relay.names import display_names, name_of, resolve_target
from zcoder.relay.registry import RegistryError, check_registry_dir, choose_registry_dir
from zcoder.relay.settings import load_relay_settings

EXIT_ACCEPTED: Final = 0
EXIT_RELAY_UNAVAILABLE: Final = 1
EXIT_USAGE: Final = 2
EXIT_NO_SUCH_PEER: Final = 3  # no live instance by that name or id, or the name is ambiguous
EXIT_PAUSED: Final = 4
EXIT_FULL: Final = 5
EXIT_REFUSED: Final = 6  # invalid, unsupported or wrong_target
EXIT_NOT_DELIVERED: Final = 7  # no acknowledgement (the peer vanished, a timeout...)

EXIT_CODES: Final = {
    "accepted": EXIT_ACCEPTED,
    "duplicate": EXIT_ACCEPTED,
    "paused": EXIT_PAUSED,
    "full": EXIT_FULL,
    "invalid": EXIT_REFUSED,
    "unsupported": EXIT_REFUSED,
    "wrong_target": EXIT_REFUSED,
}


def _peer_record(peer: Any, shown: str) -> dict[str, Any]:
    return {
        "name": shown,
        "project": peer.project,
        "pid": peer.pid,
        "state": peer.state,
        "instance_id": peer.instance_id,
        "workspace": peer.workspace,
        "profile": peer.profile,
        "model": peer.model,
        "session_id": peer.session_id,
        "activity": peer.activity,  # "" when it says nothing (zcoder.relay.activity)
        "activity_since": peer.activity_since,
        "tmux_pane": peer.tmux_pane,
        "queued": peer.queued,  # null when it says nothing
        "last_receipt": peer.last_receipt,  # "" when it says nothing
        "last_receipt_at": peer.last_receipt_at,
    }


def agents_registry(env: Mapping[str, str]) -> tuple[Path, float] | str:
    """This machine's registry directory and the relay's I/O timeout, or why it is unusable
    (a registry that does not exist yet is fine: nobody registered yet)."""
    settings = load_relay_settings(env)
    if settings.disabled_reason:
        return f"relay settings unusable: {settings.disabled_reason}"
    registry = choose_registry_dir(env, settings.directory)
    if registry.exists():
        try:
            check_registry_dir(registry)
        except RegistryError as exc:
            return str(exc)
    return registry, settings.io_timeout


def live_peers(env: Mapping[str, str]) -> tuple[list[Peer], str | None]:
    """The live instances of this machine's registry (discovery only: nothing published,
    nothing created), or why there are none to tell; also ``--acp``'s ``_zcoder/peers``."""
    found_registry = agents_registry(env)
    if isinstance(found_registry, str):
        return [], found_registry
    registry, io_timeout = found_registry
    if not registry.exists():
        return [], None  # nobody ever registered here: nothing to list, nothing created
    found = discover(registry, self_instance_id=None, timeout=io_timeout)
    return found.peers, found.error


def agents_main(
    argv: Sequence[str],
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    *,
    watch: Callable[[Path, float], int] | None = None,
) -> int:
    """``watch``: the live view (zcoder.watch, Textual), which the relay cannot import."""
    parser = argparse.ArgumentParser(
        prog="zcoder agents",
        description="List the live zcoder instances on this machine (discovery only).",
    )
    shown_as = parser.add_mutually_exclusive_group()
    shown_as.add_argument("--json", action="store_true", help="one JSON array on standard output")
    shown_as.add_argument(
        "--watch",
        action="store_true",
        help="a live view, updated as they change, those waiting for their user first; "
        "Enter goes to one's tmux pane, q quits",
    )
    args = parser.parse_args(list(argv))
    if args.watch:
        found = agents_registry(os.environ)
        if isinstance(found, str) or watch is None:
            why = found if isinstance(found, str) else "the live view is not available"
            print(f"zcoder agents: {screen_safe(why)}", file=err)
            return EXIT_RELAY_UNAVAILABLE
        return watch(*found)
    peers, problem = live_peers(os.environ)
    if problem is not None:
        print(f"zcoder agents: {screen_safe(problem)}", file=err)
        return EXIT_RELAY_UNAVAILABLE
    shown = display_names(peers)
    if args.json:
        records = [_peer_record(peer, shown[peer.instance_id]) for peer in peers]
        out.write(json_text(records, indent=2) + "\n")
    else:
        out.write(peer_table(peers) + "\n")
    return EXIT_ACCEPTED


def send_main(
    argv: Sequence[str],
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    stdin: TextIO = sys.stdin,
) -> int:
    parser = argparse.ArgumentParser(
        prog="zcoder send",
        description="Send one message to another zcoder instance and print its answer.",
        epilog="Exit status: 0 accepted, 1 relay unavailable, 2 usage, 3 no such instance "
        "(or an ambiguous name), 4 paused, 5 full, 6 refused, 7 not delivered.",
    )
    parser.add_argument("target", help="a name unique among the live instances, name#pid, or id")
    parser.add_argument("message", nargs="?", help="the message; standard input if absent or -")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(list(argv))
    message = stdin.read() if args.message in (None, "-") else args.message
    if not message.strip():
        print("zcoder send: the message is empty; nothing was sent", file=err)
        return EXIT_USAGE
    settings = load_relay_settings(os.environ)
    if settings.disabled_reason:
        print(f"zcoder send: relay settings unusable: {settings.disabled_reason}", file=err)
        return EXIT_RELAY_UNAVAILABLE
    # Registered with the directory it runs in: receivers show the message as "via zcoder
    # send, pid N, from DIR", DIR being what the kernel reports as this process's working
    # directory, never a name or path given here (zcoder.relay.standing).
    relay = Relay(settings, workspace=Path.cwd().resolve(), name="zcoder-send")
    status = relay.start()
    try:
        if not status.available:
            print(f"zcoder send: relay unavailable: {status.reason}", file=err)
            return EXIT_RELAY_UNAVAILABLE
        found = relay.discover()
        resolved = resolve_target(found.peers, args.target)
        if resolved.peer is None:
            print(f"zcoder send: {visible(resolved.problem)}; nothing was sent", file=err)
            for candidate in resolved.candidates:
                print(f"  {visible(candidate)}", file=err)
            return EXIT_NO_SUCH_PEER
        result = relay.send(resolved.peer.instance_id, message)
        code = EXIT_CODES.get(result.status or "", EXIT_NOT_DELIVERED)
        if args.json:
            record = {
                "status": result.status,
                "message_id": result.message_id,
                "target": resolved.peer.instance_id,
                "name": name_of(resolved.peer),
                "text": result.text,
            }
            out.write(json_text(record) + "\n")
        else:
            print(screen_safe(result.text), file=out if code == EXIT_ACCEPTED else err)
        return code
    finally:
        relay.stop()
