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
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Final, TextIO

from zcoder.base.sanitize import json_text, screen_safe, visible
from zcoder.relay.client import Peer, discover
from zcoder.relay.display import peer_table
from zcoder.relay.instance import Relay
from zcoder.relay.names import display_names, name_of, resolve_target
from zcoder.relay.registry import RegistryError, check_registry_dir, choose_registry_dir
from zcoder.relay.settings import RelayMode, load_relay_settings

EXIT_ACCEPTED: Final = 0
EXIT_RELAY_UNAVAILABLE: Final = 1
EXIT_USAGE: Final = 2
EXIT_NO_SUCH_PEER: Final = 3  # no live instance by that name or id, or the name is ambiguous
EXIT_PAUSED: Final = 4
EXIT_FULL: Final = 5
EXIT_REFUSED: Final = 6  # invalid, unsupported or wrong_target
EXIT_NOT_DELIVERED: Final = 7  # no acknowledgement (the peer vanished, a timeout...)
# ``zcoder agents --wait-idle``: 0 once the peer is idle, 1, 2, 3, 5, 6 and 7 as above, and:
EXIT_WAIT_TIMEOUT: Final = 8  # --timeout passed before the peer was idle
EXIT_WAIT_GONE: Final = 9  # the peer exited (its manifest or socket went away) first
EXIT_CANNOT_NOTIFY: Final = 10  # the peer does not take watches (zcoder.zsh: unsupported)
WAIT_IDLE_MAX: Final = 12 * 3600.0  # a watch's life (zcoder.relay.watches)

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
    }


def live_peers(env: Mapping[str, str]) -> tuple[list[Peer], str | None]:
    """The live instances of this machine's registry (discovery only: nothing published,
    nothing created), or why there are none to tell; also ``--acp``'s ``_zcoder/peers``."""
    settings = load_relay_settings(env)
    if settings.disabled_reason:
        return [], f"relay settings unusable: {settings.disabled_reason}"
    registry = choose_registry_dir(env, settings.directory)
    if not registry.exists():
        return [], None  # nobody ever registered here: nothing to list, nothing created
    try:
        check_registry_dir(registry)
    except RegistryError as exc:
        return [], str(exc)
    found = discover(registry, self_instance_id=None, timeout=settings.io_timeout)
    return found.peers, found.error


def agents_main(argv: Sequence[str], out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    parser = argparse.ArgumentParser(
        prog="zcoder agents",
        description="List the live zcoder instances on this machine (discovery only).",
    )
    parser.add_argument("--json", action="store_true", help="one JSON array on standard output")
    parser.add_argument(
        "--wait-idle",
        metavar="NAME",
        help="wait until that instance is next idle (ready, empty queue); see the exit codes",
    )
    parser.add_argument(
        "--timeout", type=float, metavar="S", help="with --wait-idle: give up after S seconds"
    )
    parser.epilog = (
        "Exit status of --wait-idle: 0 idle, 1 relay unavailable, 2 usage, 3 no such "
        "instance, 5 too many watches, 6 refused, 7 not delivered, 8 timed out, 9 the "
        "instance went away, 10 it cannot notify."
    )
    args = parser.parse_args(list(argv))
    if args.wait_idle is not None:
        timeout = WAIT_IDLE_MAX if args.timeout is None else args.timeout
        return wait_idle_main(args.wait_idle, timeout, out, err)
    if args.timeout is not None:
        print("zcoder agents: --timeout goes with --wait-idle", file=err)
        return EXIT_USAGE
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


def _start_as_peer(prog: str, name: str, err: TextIO, *, paused: bool = False) -> Relay | None:
    """A short-lived relay-only peer registered in the directory this runs in (receivers
    answer only registered live instances), or None when the relay cannot start (said).
    ``paused``: it refuses tasks (nothing here would run them), as long as it waits."""
    settings = load_relay_settings(os.environ)
    if settings.disabled_reason:
        print(f"{prog}: relay settings unusable: {settings.disabled_reason}", file=err)
        return None
    if paused:
        settings = replace(settings, mode=RelayMode.PAUSED)
    relay = Relay(settings, workspace=Path.cwd().resolve(), name=name)
    status = relay.start()
    if not status.available:
        print(f"{prog}: relay unavailable: {status.reason}", file=err)
        relay.stop()
        return None
    return relay


def _find(relay: Relay, target: str, prog: str, err: TextIO, after: str = "") -> Peer | None:
    """The live instance ``target`` names (a unique name, name#pid or an id), or None when
    none does (said, with the candidates of an ambiguous name)."""
    resolved = resolve_target(relay.discover().peers, target)
    if resolved.peer is None:
        print(f"{prog}: {visible(resolved.problem)}{after}", file=err)
        for candidate in resolved.candidates:
            print(f"  {visible(candidate)}", file=err)
    return resolved.peer


def wait_idle_main(target: str, timeout: float, out: TextIO, err: TextIO) -> int:
    """``zcoder agents --wait-idle NAME``: registered as ``zcoder send`` is (a watch is
    answered only to a live registered instance), one watch, then the wait."""
    if not 0 <= timeout <= WAIT_IDLE_MAX:
        print(f"zcoder agents: --timeout must be 0 to {WAIT_IDLE_MAX:.0f} seconds", file=err)
        return EXIT_USAGE
    relay = _start_as_peer("zcoder agents", "zcoder-wait", err, paused=True)
    if relay is None:
        return EXIT_RELAY_UNAVAILABLE
    try:
        peer = _find(relay, target, "zcoder agents", err)
        if peer is None:
            return EXIT_NO_SUCH_PEER
        shown = visible(name_of(peer))
        result = relay.watch(peer.instance_id)
        if not result.accepted:
            print(f"zcoder agents: {screen_safe(result.text)}", file=err)
            if result.status == "unsupported":
                return EXIT_CANNOT_NOTIFY
            return EXIT_CODES.get(result.status or "", EXIT_NOT_DELIVERED)
        # Published once the watch is in place (a fresh instance closes no cycle, but
        # another's check walks through it).
        refused = relay.begin_wait(peer.instance_id)
        if refused is not None:
            print(f"zcoder agents: {visible(refused)}", file=err)
            return EXIT_REFUSED
        try:
            outcome = relay.wait_idle(result, timeout)
        finally:
            relay.end_wait()
        if outcome == "idle":
            print(f"{shown} is idle", file=out)
            return EXIT_ACCEPTED
        if outcome == "gone":
            print(f"zcoder agents: {shown} went away before it was idle", file=err)
            return EXIT_WAIT_GONE
        print(f"zcoder agents: {shown} was not idle within {timeout:g} s", file=err)
        return EXIT_WAIT_TIMEOUT
    finally:
        relay.stop()


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
    # Registered with the directory it runs in: receivers show the message as "via zcoder
    # send, pid N, from DIR", DIR being what the kernel reports as this process's working
    # directory, never a name or path given here (zcoder.relay.standing).
    relay = _start_as_peer("zcoder send", "zcoder-send", err)
    if relay is None:
        return EXIT_RELAY_UNAVAILABLE
    try:
        peer = _find(relay, args.target, "zcoder send", err, "; nothing was sent")
        if peer is None:
            return EXIT_NO_SUCH_PEER
        result = relay.send(peer.instance_id, message)
        code = EXIT_CODES.get(result.status or "", EXIT_NOT_DELIVERED)
        if args.json:
            record = {
                "status": result.status,
                "message_id": result.message_id,
                "target": peer.instance_id,
                "name": name_of(peer),
                "text": result.text,
            }
            out.write(json_text(record) + "\n")
        else:
            print(screen_safe(result.text), file=out if code == EXIT_ACCEPTED else err)
        return code
    finally:
        relay.stop()
