"""Trust per peer in the app: held messages (announced, listed, run or discarded), the
per-peer policies of ``/agents trust|block|forget`` and ``/agents recover`` for what a
crashed instance left unrun. The policies themselves are zcoder.relay.trust's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING

from zcoder.base.plural import counted
from zcoder.base.sanitize import visible
from zcoder.relay import (
    BLOCK,
    TRUST,
    ClaimedMessage,
    Inbound,
    QuarantinedMessage,
    Relay,
    TrustError,
    resolve_target,
    sender_from,
    sender_name,
)
from zcoder.tui.parts.services import Part

if TYPE_CHECKING:
    from zcoder.tui.parts.inbox_ui import InboxUI


@dataclass(eq=False)
class RelayPolicyUI(Part):
    """Takes, besides its context (the services' relay: None while there is none), never
    the app nor RelayUI: the ``inbox`` (the history and receipts), RelayUI's
    ``report_quarantined`` and ``refresh_header``, and ``user_acted`` (the user let relayed
    tasks run again)."""

    _: KW_ONLY
    inbox: InboxUI
    report_quarantined: Callable[[QuarantinedMessage], None]
    refresh_header: Callable[[], None]
    user_acted: Callable[[], None]
    _held_seen: set[str] = field(default_factory=set, init=False)  # announced already

    def _live(self) -> Relay:
        """The relay, when a command that needs it runs (RelayUI checked it is there)."""
        relay = self.services.relay
        assert relay is not None
        return relay

    def announce_held(self) -> None:
        """Say once per message that one is held for the user (they never expire)."""
        relay = self.services.relay
        if relay is None:
            return
        held = [m for m in relay.held() if isinstance(m, ClaimedMessage)]
        new = [m for m in held if m.path.name not in self._held_seen]
        self._held_seen = {m.path.name for m in held}
        for message in new:
            self.say.notice(
                f"⏸ A message {visible(sender_from(message.envelope))} is held for you"
                " (ZCODER_RELAY_INBOUND or your policy for it). /agents held shows it;"
                " /agents run N runs it, /agents discard N drops it."
            )

    def announced(self, name: str) -> None:
        """A held message the user was already told of, with its reason (a hook held it)."""
        self._held_seen.add(name)

    def held_command(self, argument: str) -> None:
        held = self._live().held()
        for item in held:
            if isinstance(item, QuarantinedMessage):
                self.report_quarantined(item)
        messages = [m for m in held if isinstance(m, ClaimedMessage)]
        verb, _, number = argument.partition(" ")
        if verb == "held":
            if not messages:
                self.say.notice("No message is held for you.")
                return
            lines = ["Held for you (oldest first):"]
            for index, message in enumerate(messages, 1):
                env = message.envelope
                preview = " ".join(env.body.split())
                preview = preview[:70] + ("…" if len(preview) > 70 else "")
                lines.append(f"  {index}. {visible(sender_from(env))}: {visible(preview)}")
            lines.append("/agents run N runs one now; /agents discard N drops it.")
            self.say.notice("\n".join(lines))
            return
        if not number.strip().isdigit() or not 1 <= int(number) <= len(messages):
            self.say.error(
                f"usage: /agents {verb} N, with N from /agents held (1 to {len(messages)})"
            )
            return
        message = messages[int(number) - 1]
        sender = visible(sender_name(message.envelope))
        if verb == "run":
            if self._live().release(message.path.name):
                self.inbox.received(message.envelope, "queued")
                self.say.notice(f"The message from {sender} joins the queue and runs next.")
                self.user_acted()
        elif self._live().discard(message.path.name):
            self.inbox.history.finished(
                message.envelope, "refused", "the receiving user discarded it without running it"
            )
            self.say.notice(f"The message from {sender} was discarded; its sender is told.")
        self.refresh_header()

    def recover(self, *, discard: bool) -> None:
        """/agents recover [discard]: a dead instance's unrun messages, queued or dropped."""
        leftovers = self._live().leftovers()
        if not leftovers:
            self.say.notice("Nothing to recover: no zcoder that stopped here left unrun messages.")
            return
        total, problems = 0, []
        for leftover in list(leftovers):
            try:
                if discard:
                    self._live().drop_leftover(leftover)
                else:
                    queued, trouble = self._live().recover(leftover)
                    total += queued
                    problems += trouble
            except OSError as exc:
                problems.append(str(exc))
        if discard:
            self.say.notice("The stopped zcoder's unrun messages were dropped.")
        else:
            self.say.notice(f"Recovered {counted(total, 'message')}; they run in order.")
            self.user_acted()
        for problem in problems:
            self.say.error(f"not recovered: {problem}")
        self.refresh_header()

    def trust_command(self, argument: str) -> None:
        verb, _, name = argument.partition(" ")
        name = name.strip()
        if not name:
            self.say.notice(self.trust_line())
            return
        found = self._live().discover()
        resolved = resolve_target(found.peers, name)
        if resolved.peer is None:
            extra = "".join(f"\n  {c}" for c in resolved.candidates)
            self.say.error(f"{resolved.problem}{extra}")
            return
        workspace = resolved.peer.workspace
        if verb == "trust" and not self._live().is_interactive_peer(resolved.peer):
            # Trust goes with a workspace only to an instance proven to work there; a
            # `zcoder send`, a relay-only peer or a zcoder.zsh cannot be proven to.
            self.say.error(
                f"{visible(name)} is not an interactive zcoder instance that can be verified"
                " (zcoder send, a relay-only peer or zcoder.zsh): it cannot be trusted."
                " /agents block works for any peer."
            )
            return
        policy = {"trust": TRUST, "block": BLOCK}.get(verb)
        try:
            self._live().trust.set(workspace, policy)
        except TrustError as exc:
            self.say.error(str(exc))
            return
        default = self._live().trust.default
        said = {
            "trust": "Its messages run as they come."
            + (
                " So do every other peer's now: ZCODER_RELAY_INBOUND=hold makes the others"
                " wait for you."
                if default is Inbound.ACCEPT
                else f" Other peers' still follow ZCODER_RELAY_INBOUND ({default.value})."
            ),
            "block": "Its messages are refused: it is told you do not take messages from it.",
            "forget": f"It follows ZCODER_RELAY_INBOUND ({default.value}).",
        }[verb]
        self.say.notice(f"{verb.capitalize()}: {visible(workspace)}. {said}")

    def trust_line(self) -> str:
        book = self._live().trust
        policies = book.policies()
        text = f"Inbound: {book.default.value} (ZCODER_RELAY_INBOUND)"
        if policies:
            text += "; " + ", ".join(f"{p} {visible(w)}" for w, p in sorted(policies.items()))
        if book.problem:
            text += f" — {book.problem}"
        return text
