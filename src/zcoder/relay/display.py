"""Text shown to the user and to the model about peers: one function per fact.

``/list-agents`` and the ``list_agents`` tool both render records from the same
``discover`` call through this module, with control bytes and invisible characters made
visible first (``zcoder.base.sanitize``). What the model is given is also defused of
chat-template control tokens, bounded a field, and marked as self-reported.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from zcoder.base.sanitize import bounded, defuse_tokens, field_for_model, visible
from zcoder.relay.activity import (
    MAX_ACTIVITY_CHARS,
    MAX_RECEIPT_CHARS,
    activity_words,
    receipt_words,
)
from zcoder.relay.names import display_names, explicit_name, name_of

if TYPE_CHECKING:
    from zcoder.relay.client import Peer
    from zcoder.relay.protocol import Envelope

__all__ = [
    "FIELD_LIMIT",
    "NO_PEERS_TEXT",
    "PEERS_HEADING",
    "doing",
    "from_words",
    "last_receipt",
    "paused_warning",
    "peer_label",
    "peer_list_for_model",
    "peer_table",
    "queue",
    "sender_from",
    "sender_label",
    "sender_name",
    "sender_words",
    "steer_note",
]

NO_PEERS_TEXT: Final = "No other local zcoder instances are available."


_COLUMNS: Final = (
    ("NAME", 12),
    ("PROJECT", 17),
    ("PID", 7),
    ("STATE", 8),
    ("ACTIVITY", 10),
    ("QUEUE", 7),
    ("LAST RECEIPT", 14),
    ("INSTANCE ID", 18),
)


def doing(peer: Peer, now: float | None = None) -> str:
    """What ``peer`` says it is doing and for how long (``running a command for 2m``),
    made visible and bounded (its manifest is self-reported); ``""`` when it says nothing."""
    activity = bounded(visible(peer.activity), MAX_ACTIVITY_CHARS)
    return activity_words(activity, peer.activity_since, time.time() if now is None else now)


def queue(peer: Peer) -> str:
    """How many messages wait their turn at ``peer`` (``3``); ``-`` when it says nothing."""
    return "-" if peer.queued is None else str(peer.queued)


def last_receipt(peer: Peer, now: float | None = None) -> str:
    """The last receipt ``peer`` received and how long ago (``completed from web, 3m
    ago``), made visible and bounded; ``""`` when it says nothing."""
    note = bounded(visible(peer.last_receipt), MAX_RECEIPT_CHARS)
    return receipt_words(note, peer.last_receipt_at, time.time() if now is None else now)


def peer_table(peers: Sequence[Peer], width: int | None = None) -> str:
    """The seed's table with a NAME column first: one peer per row, workspace last (it is
    the distinguishing column). Names that collide show their pid (``api#4242``). Where a
    row would not fit in ``width`` columns, each peer takes three short lines instead."""
    if not peers:
        return NO_PEERS_TEXT
    table = _table(peers)
    if width is not None and max(len(line) for line in table.splitlines()) > width:
        return _stacked(peers)
    return table


def _stacked(peers: Sequence[Peer]) -> str:
    """The table's facts for a narrow terminal: name, project, pid and state; the
    instance id; the workspace."""
    names = display_names(peers)
    lines: list[str] = []
    for p in peers:
        activity = doing(p)
        waiting = f" · {p.queued} queued" if p.queued else ""
        lines.append(
            f"{_with_project(names[p.instance_id], visible(p.project))} · pid {p.pid} · "
            f"{visible(p.state)}" + (f" · {activity}" if activity else "") + waiting
        )
        lines.append(f"  id {visible(p.instance_id)}")
        if receipt := last_receipt(p):
            lines.append(f"  last receipt: {receipt}")
        lines.append(f"  {visible(p.workspace)}")
    return "\n".join(lines)


def _table(peers: Sequence[Peer]) -> str:
    names = display_names(peers)
    rows = [
        (
            names[p.instance_id],
            visible(p.project),
            str(p.pid),
            visible(p.state),
            doing(p),
            queue(p),
            last_receipt(p),
            visible(p.instance_id),
            visible(p.workspace),
        )
        for p in peers
    ]
    # QUEUE and LAST RECEIPT only when a peer says one (zcoder.zsh says neither).
    said = {
        "QUEUE": any(p.queued is not None for p in peers),
        "LAST RECEIPT": any(p.last_receipt for p in peers),
    }
    shown = [n for n, (title, _m) in enumerate(_COLUMNS) if said.get(title, True)]
    widths = {n: max(_COLUMNS[n][1], *(len(row[n]) + 2 for row in rows)) for n in shown}
    lines = ["".join(_COLUMNS[n][0].ljust(widths[n]) for n in shown) + "WORKSPACE"]
    for row in rows:
        lines.append("".join(row[n].ljust(widths[n]) for n in shown) + row[-1])
    return "\n".join(lines)


def peer_label(peer: Peer) -> str:
    """A peer as the user reads it: its name, then its project when that says more
    (``api (backend)``; ``weekly-digest`` once when both are the same), then the machine
    when it is another (``api (backend) on build-box``); made visible."""
    label = _with_project(visible(name_of(peer)), visible(peer.project))
    return f"{label} on {visible(peer.host)}" if peer.host else label


def _with_project(name: str, project: str) -> str:
    return name if project in ("", name) else f"{name} ({project})"


def paused_warning(peer: Peer) -> str | None:
    """What to tell a user about to send to ``peer`` while it is paused (as it was listed:
    a paused zcoder refuses every message, none is queued); None when it is not."""
    if peer.state != "paused":
        return None
    return (
        f"{peer_label(peer)} is paused: it refuses messages until its user resumes it "
        "(/agents resume), so this one would not be delivered."
    )


def steer_note(peer: Peer) -> str:
    """What to tell a user about to send ``peer`` a steer (``delivery`` steer): where it
    goes, and when it is queued instead (docs/relay.md, Steering a running turn)."""
    name = peer_label(peer)
    return (
        f"Steering: it joins {name}'s running turn at its next safe point, if {name} trusts"
        " this workspace and runs a turn; otherwise it is queued."
    )


# A peer writes its own manifest: the model is told so, and each field is bounded.
PEERS_HEADING: Final = "Peers (details are self-reported by each instance):"
FIELD_LIMIT: Final = 80


def _field(value: str, *, keep_end: bool = False) -> str:
    return bounded(field_for_model(value), FIELD_LIMIT, keep_end=keep_end)


def peer_list_for_model(peers: Sequence[Peer]) -> str:
    """The ``list_agents`` tool result: a heading, then two lines a peer (zcoder.zsh's form).

    Every manifest field is escaped, defused and cut to FIELD_LIMIT characters (a path
    keeps its end, the distinguishing part); the instance id is given whole and exact,
    since the model must send to it (the protocol allows only ``[A-Za-z0-9_.-]`` in it).
    """
    if not peers:
        return NO_PEERS_TEXT
    names = display_names(peers)
    lines: list[str] = [PEERS_HEADING]
    for p in peers:
        project = _field(p.project)
        # A peer that chose a name is called by it; others (zcoder.zsh) by their project.
        # Called by the name it chose, or its project's (zcoder.zsh), with the pid where
        # names collide; the project follows when it says something more.
        shown = names[p.instance_id]
        special = explicit_name(p) is not None or "#" in shown
        who = f"{shown} ({project})" if special and shown != p.project else project
        # What it is doing, briefly, after its state: "busy (running a command for 2m)".
        activity = doing(p)
        state = f"{_field(p.state)} ({defuse_tokens(activity)})" if activity else _field(p.state)
        lines.append(f"{who} — pid {p.pid}, {state}, id {p.instance_id}")
        lines.append(
            f"  {_field(p.workspace, keep_end=True)} · {_field(p.profile)} · {_field(p.model)}"
        )
    return "\n".join(lines)


# -- who sent a relayed message, as the receiver verified it (zcoder.relay.standing) ------
# The listener records the verified sender fields in the stored envelope: the instance's
# name and proven workspace, "zcoder send" and its working directory, or the manifest's
# claims marked unverified. These are the only words used to show a sender.


def sender_name(envelope: Envelope) -> str:
    """The sender in a few words: ``api``, ``zcoder send (pid 4242)`` or ``legacy
    (unverified)``; raw text (make it visible before it is shown)."""
    name = envelope.sender_project or envelope.sender_instance_id
    if envelope.sender_kind == "instance":
        return name
    if envelope.sender_kind == "send":  # "zcoder send", or "MCP from CLIENT"
        return f"{envelope.sender_project or 'zcoder send'} (pid {envelope.sender_pid})"
    return f"{name} (unverified)"


def sender_label(envelope: Envelope) -> str:
    """The sender in full: ``api (pid 4242, /src/api)``, ``via zcoder send, pid 4242,
    from /home/me`` (``via MCP from codex, pid 4242, from /home/me``) or ``legacy
    (unverified: pid 4242, /src/legacy)``; raw text."""
    return sender_words(
        envelope.sender_kind,
        envelope.sender_project or envelope.sender_instance_id,
        envelope.sender_pid,
        envelope.sender_workspace,
    )


def sender_from(envelope: Envelope) -> str:
    """Where a message came from, to follow "a message": ``from api (pid 4242, …)`` or
    ``via zcoder send, pid 4242, from /home/me``; raw text."""
    return from_words(envelope.sender_kind, sender_label(envelope))


def from_words(kind: str, label: str) -> str:
    return label if kind == "send" else f"from {label}"


def sender_words(kind: str, name: str, pid: int | str, workspace: str) -> str:
    """``sender_label`` from the recorded fields (a saved session's event keeps these)."""
    where = workspace or "an unknown directory"
    if kind == "instance":
        return f"{name} (pid {pid}, {where})"
    if kind == "send":  # the name is "zcoder send", or "MCP from CLIENT" (zcoder.relay.via)
        return f"via {name or 'zcoder send'}, pid {pid}, from {where}"
    return f"{name} (unverified: pid {pid}, {where})"
