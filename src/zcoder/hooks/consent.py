"""The user's one-time consent to a project's hooks, as for a project's MCP servers.

A hook in ``.zcoder/settings.json`` is a program the repository chose: cloning a repository
must not be enough to run it. So a project hook runs only after the user said yes to it, in
this workspace, for exactly the content of its entry (event, matcher, command, timeout); an
entry changed since asks again, and a no is kept the same way. The answers are kept by
zcoder.base.consent's book in ``$ZCODER_HOME/hook-consent.json``.

Who asks: the TUI, once, when a hook first needs it (at start, its SessionStart), with one
dialog listing every exact command not answered yet (``consent_request``); ``zcoder hooks
list|trust|refuse|reset`` from a shell. ``--prompt`` and ``--acp`` have no person to ask:
an unanswered project hook does not run there, and the notice says how to allow it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Final

from zcoder.base.consent import Consent, ConsentError, ConsentFile
from zcoder.hooks.config import HookCommand, HookSet
from zcoder.hooks.engine import Asker
from zcoder.tools.approval import ApprovalDecision, Approver, CommandApprovalRequest
from zcoder.tools.profiles import Profile, TurnOrigin

__all__ = ["CONSENT_FILE", "HOW_TO_CONSENT", "HookConsent", "consent_request", "dialog_asker"]

CONSENT_FILE: Final = "hook-consent.json"
HOW_TO_CONSENT: Final = "`zcoder hooks list` shows them, `zcoder hooks trust` allows them"


class HookConsent:
    """The answers about one workspace's project hooks."""

    def __init__(self, home: Path | None, workspace: Path) -> None:
        self.file = ConsentFile(home, CONSENT_FILE, what="project hooks")
        self.workspace = workspace

    def status(self, command: HookCommand) -> Consent:
        if not command.project:
            return Consent.NOT_NEEDED
        return self.file.status(self.workspace, command.key, command.digest)

    def allows(self, command: HookCommand) -> bool:
        return self.status(command) in (Consent.NOT_NEEDED, Consent.GRANTED)

    def unasked(self, hooks: HookSet) -> list[HookCommand]:
        """The project hooks (as they are now) the user has not answered about."""
        return _once(c for c in hooks.project_commands() if self.status(c) is Consent.UNASKED)

    def record(self, commands: Iterable[HookCommand], decision: Consent | None) -> int:
        """Keep one answer for each of ``commands`` (None forgets it); how many."""
        count = 0
        for command in _once(commands):
            if command.project:
                self.file.record(self.workspace, command.key, command.digest, decision)
                count += 1
        return count


def _once(commands: Iterable[HookCommand]) -> list[HookCommand]:
    seen: set[tuple[str, str]] = set()
    out = []
    for command in commands:
        if (command.key, command.digest) not in seen:
            seen.add((command.key, command.digest))
            out.append(command)
    return out


def describe_all(commands: Iterable[HookCommand]) -> str:
    """Every hook's event, matcher, deadline and exact command, one entry a paragraph."""
    return "\n".join(
        f"{c.event} (matcher {c.matcher}, at most {c.timeout:g} s):\n  {c.command}"
        for c in commands
    )


def consent_request(
    commands: list[HookCommand], workspace: Path, profile: Profile
) -> CommandApprovalRequest:
    """The command dialog's question: may these project hooks run here (y for all)?"""
    sources = sorted({str(c.source) for c in commands})
    return CommandApprovalRequest(
        command=f"run these hooks of the project when their events happen:\n"
        f"{describe_all(commands)}",
        cwd=workspace,
        timeout_seconds=max(c.timeout for c in commands),
        allow_always=False,
        origin=TurnOrigin.USER,
        profile=profile,
        kept=True,
        warning=(
            f"{', '.join(sources)} (from the repository) asks to run these hooks on your machine;"
            " y allows them in this workspace until an entry changes, n refuses them"
        ),
    )


def dialog_asker(approver: Approver, consent: HookConsent, profile: Profile) -> Asker:
    """``HookEngine.ask`` for a front end with a person at it: one command dialog for every
    project hook not answered yet (y allows them all, n refuses them all), the answer kept."""

    async def ask(commands: list[HookCommand]) -> list[str]:
        request = consent_request(commands, consent.workspace, profile)
        try:
            decision = await approver.approve_command(request)
        except Exception as exc:  # noqa: BLE001 - a dialog that cannot ask decides nothing
            return [f"The project's hooks were not run: their consent could not be asked ({exc})"]
        granted = decision in (ApprovalDecision.ONCE, ApprovalDecision.ALWAYS)
        try:
            consent.record(commands, Consent.GRANTED if granted else Consent.REFUSED)
        except ConsentError as exc:
            return [f"The project's hooks were not run: the answer could not be saved ({exc})"]
        if granted:
            return []
        listed = "\n".join(f"  {c.describe()}" for c in commands)
        return [
            "Project hooks refused; they do not run in this workspace until their entry"
            f" changes (`zcoder hooks reset` forgets the answer):\n{listed}"
        ]

    return ask
