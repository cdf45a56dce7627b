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

``--steer`` asks for the receiver's running turn; a ``zcoder send`` is never a trusted
instance, so the answer is always that it was queued (the ack says so). ``--wait [--timeout
S]`` stays registered until the task's receipt comes, prints the receiver's progress
(``started``, ``steered``) as it comes, and exits with the outcome's code (RECEIPT_CODES).

``zcoder agents --host HOST`` and ``zcoder send HOST:NAME`` run these commands on another
machine over ssh (zcoder.relay.host_cli); ``--via-ssh LABEL`` is what the sending machine
gives the remote ``zcoder send``, which receivers then show as ``via SSH from LABEL``.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Final, TextIO

from zcoder.base.processes import pid_alive
from zcoder.base.sanitize import json_text, screen_safe, visible
from zcoder.relay.client import Peer, discover
from zcoder.relay.display import peer_table
from zcoder.relay.host_cli import HostSend, agents_on_host, send_to_host
from zcoder.relay.hosts import is_remote_target
from zcoder.relay.instance import Relay
from zcoder.relay.names import display_names, name_of, resolve_target
from zcoder.relay.outbox import SendResult
from zcoder.relay.protocol import STEER
from zcoder.relay.registry import RegistryError, check_registry_dir, choose_registry_dir
from zcoder.relay.settings import RelayMode, load_relay_settings
from zcoder.relay.via import is_client_label

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

# ``--wait``: the task's receipt, by outcome (zcoder.relay.receipts.OUTCOMES), or no receipt.
EXIT_COMPLETED: Final = 0
EXIT_FAILED: Final = 10
EXIT_CANCELLED: Final = 11
EXIT_TASK_REFUSED: Final = 12  # the receiving user (or a hook) refused the task
EXIT_DISCARDED: Final = 13  # the receiver quit (or was killed) before running it
EXIT_TIMED_OUT: Final = 14  # no receipt before --timeout

RECEIPT_CODES: Final = {
    "completed": EXIT_COMPLETED,
    "failed": EXIT_FAILED,
    "cancelled": EXIT_CANCELLED,
    "refused": EXIT_TASK_REFUSED,
    "discarded": EXIT_DISCARDED,
}
# How often a wait with no news checks that the receiver still runs.
ALIVE_CHECK_SECONDS: Final = 2.0

# ``zcoder agents --wait-idle``: 0 once the peer is idle, 1 to 7 as above (no 4), and, as
# --wait's: 13 the peer went away first (its manifest or socket), 14 --timeout passed; or
EXIT_CANNOT_NOTIFY: Final = 15  # the peer does not take watches (zcoder.zsh: unsupported)
WAIT_IDLE_MAX: Final = 12 * 3600.0  # a watch's life (zcoder.relay.watches)


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
    parser.add_argument(
        "--wait-idle",
        metavar="NAME",
        help="wait until that instance is next idle (ready, empty queue); see the exit codes",
    )
    parser.add_argument(
        "--timeout", type=float, metavar="S", help="with --wait-idle: give up after S seconds"
    )
    parser.add_argument(
        "--host",
        metavar="[USER@]HOST[:PORT]",
        help="list that machine's instances instead (ssh runs zcoder agents --json there)",
    )
    parser.epilog = (
        "Exit status of --wait-idle: 0 idle, 1 relay unavailable, 2 usage, 3 no such "
        "instance, 5 too many watches, 6 refused, 7 not delivered, 13 the instance went "
        "away, 14 timed out, 15 it cannot notify. With --host: 16 ssh or the zcoder there "
        "failed (the message says which)."
    )
    args = parser.parse_args(list(argv))
    if args.host is not None:
        if args.watch or args.wait_idle is not None or args.timeout is not None:
            print("zcoder agents: --host goes with --json only", file=err)
            return EXIT_USAGE
        return agents_on_host(args.host, args.json, out=out, err=err, env=os.environ)
    if args.watch:
        found = agents_registry(os.environ)
        if isinstance(found, str) or watch is None:
            why = found if isinstance(found, str) else "the live view is not available"
            print(f"zcoder agents: {screen_safe(why)}", file=err)
            return EXIT_RELAY_UNAVAILABLE
        return watch(*found)

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


def _start_as_peer(
    prog: str,
    name: str,
    err: TextIO,
    *,
    paused: bool = False,
    on_message: Callable[[], None] | None = None,
) -> Relay | None:
    """A short-lived relay-only peer registered in the directory this runs in (receivers
    answer only registered live instances), or None when the relay cannot start (said).
    ``paused``: it refuses tasks (nothing here would run them), as long as it waits.
    ``on_message``: told when a receipt or notice came (on a relay thread)."""
    settings = load_relay_settings(os.environ)
    if settings.disabled_reason:
        print(f"{prog}: relay settings unusable: {settings.disabled_reason}", file=err)
        return None
    if paused:
        settings = replace(settings, mode=RelayMode.PAUSED)
    relay = Relay(settings, workspace=Path.cwd().resolve(), name=name, on_message=on_message)
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
            return EXIT_DISCARDED
        print(f"zcoder agents: {shown} was not idle within {timeout:g} s", file=err)
        return EXIT_TIMED_OUT
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
        "(or an ambiguous name), 4 paused, 5 full, 6 refused, 7 not delivered. With --wait, "
        "once accepted: 0 completed, 10 failed, 11 cancelled, 12 refused, 13 discarded (or "
        "the receiver is gone), 14 timed out. To another machine: its zcoder send's status, "
        "or 16 when ssh or the zcoder there failed (the message says which).",
    )
    parser.add_argument(
        "target",
        help="a name unique among the live instances, name#pid, or id; [USER@]HOST[:PORT]:NAME"
        " sends through zcoder send on that machine, over ssh",
    )
    parser.add_argument("message", nargs="?", help="the message; standard input if absent or -")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--steer", action="store_true", help="ask for its running turn (it is queued from here)"
    )
    parser.add_argument(
        "--wait", action="store_true", help="wait for the task's receipt; exit by its outcome"
    )
    parser.add_argument(
        "--timeout", type=float, metavar="S", help="with --wait: give up after S seconds"
    )
    parser.add_argument(
        "--via-ssh",
        metavar="LABEL",
        help="set by zcoder send HOST:NAME on the machine LABEL, which ssh runs this for",
    )
    args = parser.parse_args(list(argv))
    if args.timeout is not None and (not args.wait or not args.timeout > 0):
        parser.error("--timeout needs --wait and a number of seconds above 0")
    refused = _via_ssh_refusal(args.via_ssh, args.target)
    if refused is not None:
        parser.error(refused)
    message = stdin.read() if args.message in (None, "-") else args.message
    if not message.strip():
        print("zcoder send: the message is empty; nothing was sent", file=err)
        return EXIT_USAGE
    if is_remote_target(args.target):
        how = HostSend(args.json, args.steer, args.wait, args.timeout)
        return send_to_host(args.target, message, how, out=out, err=err, env=os.environ)
    # Registered with the directory it runs in: receivers show the message as "via zcoder
    # send, pid N, from DIR", DIR being what the kernel reports as this process's working
    # directory, never a name or path given here (zcoder.relay.standing).
    news = threading.Event()  # a receipt or progress came (set on a relay thread)
    relay = _start_as_peer("zcoder send", "zcoder-send", err, on_message=news.set)
    if relay is None:
        return EXIT_RELAY_UNAVAILABLE
    try:
        peer = _find(relay, args.target, "zcoder send", err, "; nothing was sent")
        if peer is None:
            return EXIT_NO_SUCH_PEER
        delivery = STEER if args.steer else ""
        result = relay.send(
            peer.instance_id, message, sender_ssh=args.via_ssh or "", delivery=delivery
        )
        code = EXIT_CODES.get(result.status or "", EXIT_NOT_DELIVERED)
        if args.json:
            record = {
                "status": result.status,
                "message_id": result.message_id,
                "target": peer.instance_id,
                "name": name_of(peer),
                "text": result.text,
            }
            if result.delivery:
                record["delivery"] = result.delivery
            out.write(json_text(record) + "\n")
        else:
            print(screen_safe(result.text), file=out if code == EXIT_ACCEPTED else err)
        out.flush()  # said now, not when the wait ends: a reader of a pipe acts on it
        if code != EXIT_ACCEPTED or not args.wait:
            return code
        # Over ssh, the wait ends with the connection: sshd, whose child this is, is gone.
        parent = os.getppid()
        return _wait(
            relay,
            result,
            news,
            timeout=args.timeout,
            as_json=args.json,
            out=out,
            err=err,
            caller_gone=(lambda: os.getppid() != parent) if args.via_ssh else None,
        )
    finally:
        relay.stop()


def _via_ssh_refusal(label: str | None, target: str) -> str | None:
    """Why ``--via-ssh`` cannot be taken, or None: it is for a ``zcoder send`` that sshd
    started (its ``SSH_CONNECTION`` set), names a machine as a label (zcoder.relay.via)
    and sends here, not on to a third machine."""
    if label is None:
        return None
    if not os.environ.get("SSH_CONNECTION"):
        return "--via-ssh is for a zcoder send that ssh runs (no SSH_CONNECTION here)"
    if not is_client_label(label):
        return "--via-ssh takes a machine's name as a label (letters, digits, '.', '_', '-')"
    if is_remote_target(target):
        return "--via-ssh does not send on to another machine"
    return None


def _wait(
    relay: Relay,
    sent: SendResult,
    news: threading.Event,
    *,
    timeout: float | None,
    as_json: bool,
    out: TextIO,
    err: TextIO,
    caller_gone: Callable[[], bool] | None = None,
) -> int:
    """``--wait``: print each progress stage of the message ``sent`` as it comes, then its
    receipt; its outcome's exit code, EXIT_TIMED_OUT after ``timeout`` (or once
    ``caller_gone`` says its caller is: the ssh connection that ran it), or EXIT_DISCARDED
    when the receiver is gone without one."""
    assert sent.peer is not None and sent.message_id is not None
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        news.clear()
        # Receipts first, then progress: what came before a receipt is printed before it.
        receipts = [r for r, _ in relay.take_receipts() if r.in_reply_to == sent.message_id]
        for progress, _ in relay.take_progress():
            if progress.in_reply_to == sent.message_id:
                line = json_text({"progress": progress.stage}) if as_json else progress.stage
                print(line, file=out, flush=True)
        for receipt in receipts:
            if as_json:
                record = {"outcome": receipt.outcome, "summary": receipt.summary}
                print(json_text(record), file=out, flush=True)
            else:
                shown = f": {receipt.summary}" if receipt.summary else ""
                print(screen_safe(f"{receipt.outcome}{shown}"), file=out)
            return RECEIPT_CODES.get(receipt.outcome, EXIT_FAILED)
        if caller_gone is not None and caller_gone():
            return EXIT_TIMED_OUT  # nobody is left to tell: the wait ends, said nowhere
        if not pid_alive(sent.peer.pid):
            print("zcoder send: the receiver is gone without a receipt", file=err, flush=True)
            return EXIT_DISCARDED
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            print("zcoder send: no receipt before the timeout", file=err, flush=True)
            return EXIT_TIMED_OUT
        news.wait(ALIVE_CHECK_SECONDS if left is None else min(left, ALIVE_CHECK_SECONDS))
