"""Friendly names for instances: what a user types, and how a name finds one live peer.

An instance's name (``--name``, ``ZCODER_AGENT_NAME``, ``/rename``; by default its project's
basename) goes in its manifest as the scalar ``name`` member. zcoder.zsh writes no name:
its instances are known by their project. A name is self-reported, so it is only ever a
way to find a peer among the live ones at one moment; the exact instance id is what a
message is sent to and what every confirmation shows.

Names that collide among live peers are shown with their pid (``api#4242``), which is also
accepted as a target.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from zcoder.base.errors import ZcoderError

if TYPE_CHECKING:
    from zcoder.relay.client import Peer

NAME_MAX_CHARS: Final = 40
# Letters and digits of any script, then also "_", "." and "-": typeable, one word, no
# spaces, nothing invisible (each character is checked against Unicode categories too).
_NAME_RE: Final = re.compile(r"[^\W_][\w.-]*")
_DISAMBIGUATED_RE: Final = re.compile(r"(.+)#(\d{1,10})")


class BadName(ZcoderError, ValueError):
    """A name that cannot be used; the message says why."""


def check_name(raw: str) -> str:
    """The name, validated: one word of letters, digits, ``_ . -``, at most 40 characters."""
    name = unicodedata.normalize("NFC", raw.strip())
    if not name:
        raise BadName("a name cannot be empty")
    if len(name) > NAME_MAX_CHARS:
        raise BadName(f"a name has at most {NAME_MAX_CHARS} characters")
    if _NAME_RE.fullmatch(name) is None or any(
        unicodedata.category(char)[0] in "CZM" for char in name
    ):
        raise BadName(
            f"{raw.strip()!r} is not a usable name: use one word of letters, digits, "
            "'_', '.' and '-', starting with a letter or digit"
        )
    return name


def default_name(project: str) -> str:
    """A usable name from a project's basename (characters that cannot be in one become -)."""
    cleaned = "".join(
        char
        if (char.isalnum() and unicodedata.category(char)[0] not in "CZM") or char in "_.-"
        else "-"
        for char in unicodedata.normalize("NFC", project)
    )
    cleaned = cleaned.strip("-_.")[:NAME_MAX_CHARS].strip("-_.")
    return cleaned or "zcoder"


def explicit_name(peer: Peer) -> str | None:
    """The usable name a peer's manifest gives, if any (zcoder.zsh gives none)."""
    if peer.name:
        try:
            return check_name(peer.name)
        except BadName:
            pass  # a manifest is self-reported: an unusable name is not shown
    return None


def name_of(peer: Peer) -> str:
    """A peer's name: its manifest's, else (zcoder.zsh, older zcoders) its project's."""
    return explicit_name(peer) or default_name(peer.project)


def display_names(peers: Sequence[Peer]) -> dict[str, str]:
    """Instance id -> the name to show: ``name``, or ``name#pid`` where names collide."""
    names = {peer.instance_id: name_of(peer) for peer in peers}
    counts: dict[str, int] = {}
    for name in names.values():
        counts[name.casefold()] = counts.get(name.casefold(), 0) + 1
    return {
        peer.instance_id: (
            f"{names[peer.instance_id]}#{peer.pid}"
            if counts[names[peer.instance_id].casefold()] > 1
            else names[peer.instance_id]
        )
        for peer in peers
    }


@dataclass(frozen=True)
class Resolved:
    """What a target found among live peers: one peer, or why not (and the candidates)."""

    peer: Peer | None
    problem: str = ""
    candidates: tuple[str, ...] = ()


def resolve_target(peers: Sequence[Peer], target: str) -> Resolved:
    """An exact instance id, else a name (case-insensitive) unique among ``peers``, else
    ``name#pid`` as shown where names collide."""
    target = target.strip()
    for peer in peers:
        if peer.instance_id == target:
            return Resolved(peer)
    shown = display_names(peers)
    wanted = target.casefold()
    matches = [
        peer for peer in peers if wanted in (name_of(peer).casefold(), peer.project.casefold())
    ]
    if len(matches) == 1:
        return Resolved(matches[0])
    if len(matches) > 1:
        choices = tuple(
            f"{shown[peer.instance_id]} (instance {peer.instance_id}, {peer.workspace})"
            for peer in matches
        )
        return Resolved(None, f"the name {target!r} is ambiguous", choices)
    pinned = _DISAMBIGUATED_RE.fullmatch(target)
    if pinned is not None:
        name, pid = pinned.group(1).casefold(), int(pinned.group(2))
        for peer in peers:
            if name_of(peer).casefold() == name and peer.pid == pid:
                return Resolved(peer)
    return Resolved(None, f"no live zcoder instance is named or has the id {target!r}")
