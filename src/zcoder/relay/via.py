"""The client a message came through, when another agent sends it with ``zcoder mcp serve``.

An agent (Claude Code, Codex, opencode) that reaches the relay through ``zcoder mcp serve``
names itself in the MCP handshake (``clientInfo.name``). That name is chosen by the client,
so it is treated as hostile text: it only ever travels as one optional scalar member of the
enqueue envelope, ``sender_client`` (after the wire protocol's members; zcoder.zsh ignores
extra scalar members, so interop is unchanged), and a receiver shows it only inside the
fixed words it generates itself, ``via MCP from <label>, pid N, from DIR``, and only for a
sender the kernel proved to be a non-interactive relay peer (zcoder.relay.standing). It
never gives standing and never names a peer.

A label is made to be unable to pose as anything else: ASCII letters, digits, ``.``, ``_``,
``-`` and single spaces only (so no terminal escape, newline, invisible character,
parenthesis, comma or slash can forge the words around it), no hyphen between two digits
(so no run of it has the shape of an instance id, ``<pid>-<nonce>``), at most
CLIENT_LABEL_MAX_CHARS characters. The sender makes any name into one (``client_label``);
the receiver refuses an envelope whose member is not one (``is_client_label``), since only a
program that does not use ``client_label`` could send it.

A message another machine sends over SSH (zcoder.relay.hosts) is the same kind of thing:
the name of the machine it came from, in one more optional member, ``sender_ssh``, shown as
``via SSH from <label>, pid N, from DIR``, for a ``send`` sender only.
"""

from __future__ import annotations

import re
from typing import Final

CLIENT_LABEL_MAX_CHARS: Final = 40
UNNAMED_CLIENT: Final = "unnamed client"
_OUTSIDE: Final = re.compile(r"[^A-Za-z0-9._-]+")
_DIGIT_HYPHEN_DIGIT: Final = re.compile(r"(?<=[0-9])-(?=[0-9])")
_LABEL: Final = re.compile(r"[A-Za-z0-9._-]+(?: [A-Za-z0-9._-]+)*")


def client_label(raw: str | None) -> str:
    """A label for the client named ``raw`` (any text, or None when it gave no name)."""
    words = _OUTSIDE.sub(" ", raw or "").strip()
    label = _DIGIT_HYPHEN_DIGIT.sub("_", words)[:CLIENT_LABEL_MAX_CHARS].strip()
    return label or UNNAMED_CLIENT


def is_client_label(value: object) -> bool:
    """Whether ``value`` is a label exactly as ``client_label`` makes them."""
    return (
        isinstance(value, str)
        and len(value) <= CLIENT_LABEL_MAX_CHARS
        and _LABEL.fullmatch(value) is not None
        and _DIGIT_HYPHEN_DIGIT.search(value) is None
    )


def via_mcp(label: str) -> str:
    """The sender name a receiver records for a message sent through ``zcoder mcp serve``."""
    return f"MCP from {label}"


def via_ssh(label: str) -> str:
    """The sender name a receiver records for a message another machine sent over SSH
    (``zcoder send HOST:NAME`` there runs ``zcoder send --via-ssh LABEL`` here; the label
    is that machine's name, made a label as a client's is, in the ``sender_ssh`` member)."""
    return f"SSH from {label}"
