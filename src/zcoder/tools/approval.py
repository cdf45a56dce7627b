"""Command approval: policies, the approver interface the UI implements, and the rules.

The rules, in order:

* sysadmin profile: the catastrophic-command guard refuses first, whatever the policy;
  what it cannot see through is asked with the guard's warning in the dialog;
* deny policy (``--deny-commands``): refuse without asking;
* coding profile, a command the guard refuses: always asked, with the guard's reason and
  no ``a``, whatever ``--yes``, an earlier ``a`` or a PreToolUse hook's ``allow`` said; an
  approver that cannot ask (``--prompt --yes``, no terminal, an editor that does not
  answer) refuses it, and an ``a`` answered anyway approves this command only;
* allow policy (``--yes``, coding only): run without asking, relayed turns included, but
  not a turn a peer's steering reached (``TurnOrigin.STEERED``): there every command asks;
* a process-wide "always" grant (answer ``a``) skips asking, but only for user turns in the
  coding profile and never for a command to run in the background (``background``: its
  dialog says so and offers no ``a``); during a relayed turn it does not apply and ``a``
  approves one command, and a relayed turn ends it (``revoke_always``): afterwards
  commands ask again;
* otherwise ask the approver.  Sysadmin always asks and never offers ``a``.

fetch_url (zcoder.tools.web) is asked the same way, with ``GET URL`` as the command; its
``a`` grants one host (``grant_host``), never every host, and ends with the others.

File edits (write_file, replace_text, apply_patch) are asked about with ``ZCODER_EDITS=ask``
(``EditPolicy.ASK``), and in a relayed task's turn unless its sender is trusted (``/agents
trust``) or ``ZCODER_RELAY_EDITS=auto`` (``relayed_edits_ask``): the same approver shows
the diff of exactly what would be written. There ``a`` allows the edits of the rest of this
turn only, and only in a user turn of the coding profile; a relayed turn asks for every edit.

Above them all, the permission mode (zcoder.tools.modes), which the user switches while
zcoder runs: ``accept-edits`` writes a user turn's edits unasked (coding profile), and
``plan`` refuses, without asking, every command the read-only classifier does not know
changes nothing and every command to run in the background (after the sysadmin guard and
``--deny-commands``, before anything that could allow it: ``--yes``, ``a``, a hook), and
every edit.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum, StrEnum
from pathlib import Path
from typing import Final, Protocol

from zcoder.base.errors import ZcoderError
from zcoder.tools.modes import Mode
from zcoder.tools.profiles import Profile, TurnOrigin

__all__ = [
    "ApprovalConfigError",
    "ApprovalDecision",
    "ApprovalPolicy",
    "Approver",
    "CommandApprovalRequest",
    "CommandAuthorization",
    "CommandPolicy",
    "EditApprovalRequest",
    "EditPolicy",
    "McpServerStart",
    "McpToolCall",
]


class CommandPolicy(StrEnum):
    """How run_command is approved, fixed at start."""

    ASK = "ask"
    """Ask the user for each command (default)."""
    ALLOW = "allow"
    """Run without asking (``--yes``); coding profile only."""
    DENY = "deny"
    """Refuse every command without asking (``--deny-commands``)."""


class EditPolicy(StrEnum):
    """How file edits are approved (``ZCODER_EDITS``), fixed at start."""

    AUTO = "auto"
    """Write without asking (the default); every edit is still shown and can be undone."""
    ASK = "ask"
    """Ask before each write, showing its diff."""


class ApprovalDecision(Enum):
    """The user's answer in the approval dialog."""

    ONCE = "once"
    """``y``: run this command."""
    ALWAYS = "always"
    """``a``: run this one and allow commands for the rest of this process."""
    DENY = "deny"
    """``n`` or Escape: do not run it."""


class ApprovalConfigError(ZcoderError, ValueError):
    """An impossible policy/profile combination; the CLI reports it and exits with 2."""


@dataclass(frozen=True)
class McpToolCall:
    """An MCP tool call awaiting approval (zcoder.mcp.tools), for a dialog that says it is
    one rather than a shell command."""

    server: str
    tool: str
    arguments: str
    """The whole arguments, as indented JSON."""
    description: str
    """The server's description of the tool: its words, shown as such, never the user's."""


@dataclass(frozen=True)
class McpServerStart:
    """A project's MCP server awaiting the user's one-time consent (zcoder.mcp.tools)."""

    server: str
    source: str
    """The file that names it (the repository's ``.mcp.json``)."""
    program: str
    """What it would run: the command line, or the URL."""
    entry: str
    """The whole entry, as JSON: its env and cwd run with it."""
    variables: str = ""
    """The variables of the user's environment it would be given, by name, never by value
    ("" when none): the entry shows only ``${SECRET_TOKEN}``."""
    replaces: str = ""
    """The user's own server of the same name it would replace, described ("" when none)."""


@dataclass(frozen=True)
class CommandApprovalRequest:
    """What the approval dialog shows: the exact command and where and how long it runs."""

    command: str
    cwd: Path
    timeout_seconds: float
    allow_always: bool
    """Whether to offer ``a``; False in sysadmin and during a relayed turn."""
    origin: TurnOrigin
    profile: Profile
    warning: str | None = None
    """The guard's reason when it refuses the command (coding: the question is then
    ``refused``) or cannot see what it would run (both profiles); the dialog shows it."""
    refused: bool = False
    """The guard refuses this command (coding profile; sysadmin never asks): it is asked
    every time, never offers ``a``, and a dialog takes no ``a`` for it; ``warning`` says
    why. An approver with nobody to ask (``--prompt --yes``) must refuse it."""
    requested_by: str | None = None
    """Where the turn came from when it is not the local user, as the dialog's title
    names it after "asked by a task relayed": ``from api (pid 4242, /src/api)`` or
    ``via zcoder send, pid 4242, from /home/me`` (zcoder.relay.display.sender_from)."""
    mcp: McpToolCall | McpServerStart | None = None
    """Set when what is asked is an MCP tool call, or starting a project's MCP server:
    ``command`` then describes it in text (for approvers that show text only) and a
    dialog may show these parts instead."""
    background: bool = False
    """The command is to keep running in the background (run_command's ``background``):
    the dialog says so, no ``a`` is offered and no ``a`` grant covers it."""
    web_host: str | None = None
    """Set when what is asked is fetching a web page (fetch_url): ``command`` is ``GET
    URL``, and ``a`` (where offered) allows this host, not every host, for the rest of the
    run (``ApprovalPolicy.grant_host``)."""
    helper: str | None = None
    """Set when what is asked is handing a task to another coding agent (``Claude Code``;
    zcoder.tools.helpers): ``command`` is its exact command line, ``warning`` says it runs
    with its own permissions; no ``a`` is offered, and an approver with nobody to ask
    (``--prompt --yes``) must refuse it, as a command the guard refuses."""
    kept: bool = False
    """Set when the answer is saved for later sessions (consent to a project's hooks or MCP
    server): an approver that cannot show the question must raise rather than answer no,
    so that no refusal is saved that the user never gave."""


@dataclass(frozen=True)
class EditApprovalRequest:
    """What the edit dialog shows: the tool, the files and the diff of what it would write."""

    tool: str
    paths: tuple[str, ...]
    diff: str
    """The whole unified diff of the edit (every file, every line)."""
    allow_turn: bool
    """Whether to offer ``a`` (the rest of this turn's edits); False in sysadmin and
    during a relayed turn."""
    origin: TurnOrigin
    requested_by: str | None = None


class Approver(Protocol):
    """Implemented by the UI (TUI dialog, /dev/tty prompt, tests)."""

    async def approve_command(self, request: CommandApprovalRequest) -> ApprovalDecision:
        """Ask the user; an approver that cannot ask must answer DENY."""
        ...

    async def approve_edit(self, request: EditApprovalRequest) -> ApprovalDecision:
        """Ask before a file edit (ZCODER_EDITS=ask); one that cannot ask answers DENY."""
        ...


@dataclass(frozen=True)
class CommandAuthorization:
    """The outcome of :meth:`ApprovalPolicy.authorize`."""

    allowed: bool
    reason: str
    """Why: shown to the model when refused, recorded in tool metadata otherwise."""
    asked: bool
    """Whether the approver was asked."""


HOOK_ALLOW: Final = "allow"  # PreToolUse's permissionDecision values (zcoder.hooks)
HOOK_ASK: Final = "ask"


class ApprovalPolicy:
    """The command policy of this process plus its process-wide ``a`` grant."""

    def __init__(
        self,
        policy: CommandPolicy,
        profile: Profile,
        *,
        edits: EditPolicy = EditPolicy.AUTO,
        relay_edits: EditPolicy = EditPolicy.ASK,
        mode: Mode = Mode.ASK,
    ) -> None:
        if policy is CommandPolicy.ALLOW and profile is Profile.SYSADMIN:
            raise ApprovalConfigError(
                "--yes cannot be used with the sysadmin profile: every command must be "
                "approved there; drop --yes or use --profile coding"
            )
        self.policy = policy
        self.profile = profile
        self.edits = edits
        self.relay_edits = relay_edits
        self.chosen_mode = mode
        """The mode the user chose; only the user changes it (``switch_mode``)."""
        self._pinned: Mode | None = None
        self.mode_before_plan = Mode.ASK
        """The mode an accepted plan goes back to (the one before plan mode)."""
        self._always_granted = False
        self._granted_planning = False  # the `a` was said in plan mode (``switch_mode``)
        self._hosts: set[str] = set()
        self._grant_from: ApprovalPolicy | None = None  # whose `a` also holds (planning)

    def planning(self) -> ApprovalPolicy:
        """A policy of these settings, always in plan mode (a read-only subagent's,
        zcoder.agent.subagent). This policy's standing ``a`` holds there too, as it stands
        now and later (a relayed turn that ends it ends it there): it lets commands run
        unasked, and plan mode still lets only read-only ones run. An ``a`` said there
        stays there: it was said of read-only commands."""
        child = ApprovalPolicy(
            self.policy,
            self.profile,
            edits=self.edits,
            relay_edits=self.relay_edits,
            mode=Mode.PLAN,
        )
        child._grant_from = self
        return child

    @property
    def mode(self) -> Mode:
        """The permission mode now: the user's, unless a turn of zcoder's own pinned one."""
        return self._pinned or self.chosen_mode

    @contextmanager
    def pinned(self, mode: Mode) -> Iterator[None]:
        """``mode`` for what runs inside (/init drafts in plan mode) whatever the user
        switches meanwhile: a switch is taken as the user's choice, in force after."""
        self._pinned = mode
        try:
            yield
        finally:
            self._pinned = None
            if self._granted_planning and self.chosen_mode is not Mode.PLAN:
                # An `a` said in the pinned plan turn was said of commands that only read:
                # it ends with the turn, as it would on leaving plan mode (``switch_mode``).
                self._always_granted = self._granted_planning = False

    def switch_mode(self, mode: Mode) -> Mode:
        """The user chose ``mode``; returns the one it replaces."""
        before, self.chosen_mode = self.chosen_mode, mode
        if mode is Mode.PLAN and before is not Mode.PLAN:
            self.mode_before_plan = before
        if before is Mode.PLAN and mode is not Mode.PLAN and self._granted_planning:
            # An `a` said while planning was said of commands that only read: it does not
            # follow the user out of plan mode, where any command could run unasked.
            self._always_granted = self._granted_planning = False
        return before

    def edits_ask(self, policy: EditPolicy, origin: TurnOrigin, *, sender_trusted: bool) -> bool:
        """Whether an edit of a turn of ``origin`` is asked about before it is written:
        relayed rules first, then accept-edits (a user turn, coding profile: the sysadmin
        profile never grants a standing yes), then the edit setting ``policy``."""
        if self.relayed_edits_ask(origin, sender_trusted=sender_trusted):
            return True
        if self.mode is Mode.ACCEPT_EDITS and self.profile is Profile.CODING:
            return False
        return policy is EditPolicy.ASK

    @property
    def always_granted(self) -> bool:
        """True once the user answered ``a`` during a user turn (coding only), here or in
        the policy this one plans for (``planning``)."""
        source = self._grant_from
        return self._always_granted or (source is not None and source.always_granted)

    def revoke_always(self) -> bool:
        """End a standing ``a`` grant; True when there was one.

        A relayed turn does this: its text has been in the conversation since, so a later
        local turn could be steered into running what it asked for without a question.
        """
        granted = self._always_granted or bool(self._hosts)
        self._always_granted = self._granted_planning = False
        self._hosts.clear()
        return granted

    def host_granted(self, host: str) -> bool:
        """Whether the user answered ``a`` to fetching a page of ``host`` (fetch_url)."""
        return host in self._hosts

    def grant_host(self, host: str) -> None:
        """``a`` in fetch_url's dialog: pages of ``host`` are fetched without asking, in
        the user's own turns, until a relayed turn ends the grant (``revoke_always``)."""
        self._hosts.add(host)

    def relayed_edits_ask(self, origin: TurnOrigin, *, sender_trusted: bool) -> bool:
        """Whether a turn of ``origin`` asks before each edit even where ZCODER_EDITS does
        not: a relayed task's, unless its sender is trusted or ZCODER_RELAY_EDITS=auto,
        and a turn a peer's steering reached, always. The README's promise: zcoder never
        acts behind your back."""
        if origin is TurnOrigin.STEERED:
            return True
        return (
            origin is TurnOrigin.RELAY and self.relay_edits is EditPolicy.ASK and not sender_trusted
        )

    def offers_always(self, origin: TurnOrigin) -> bool:
        """Whether the dialog may offer ``a`` for a command of a turn with this origin."""
        return self.profile is Profile.CODING and origin is TurnOrigin.USER

    async def authorize(
        self,
        command: str,
        *,
        cwd: Path,
        timeout_seconds: float,
        origin: TurnOrigin,
        approver: Approver,
        workspace: Path | None = None,
        requested_by: str | None = None,
        hook: str = "",
        background: bool = False,
    ) -> CommandAuthorization:
        """Decide whether ``command`` may run now, asking ``approver`` if the rules say so.

        ``hook``: what a PreToolUse hook said (zcoder.agent.hook_points). ``ask`` asks even
        where --yes or an ``a`` grant would not; ``allow`` runs a command of the user's own
        turn in the coding profile without asking. Neither lifts --deny-commands or the
        guard (a command it refuses is asked in coding, refused in sysadmin), and a relayed
        task's command is never run unasked by a hook."""
        # The guard (a shell parser) is loaded with the first command, not at start-up.
        from zcoder.tools.guard import Verdict, check_command, read_only_refusal

        verdict = check_command(command, workspace=workspace)
        if self.profile is Profile.SYSADMIN and verdict.refused:
            return CommandAuthorization(
                False, f"refused by the sysadmin safety guard: {verdict.reason}", asked=False
            )
        danger = verdict.reason if verdict.verdict is not Verdict.ALLOW else None
        if self.policy is CommandPolicy.DENY:
            return CommandAuthorization(
                False, "commands are disabled in this session (--deny-commands)", asked=False
            )
        if self.mode is Mode.PLAN and background:
            return CommandAuthorization(
                False,
                "plan mode starts no background job (it would outlive the plan); run it "
                "in the foreground, or the user starts it after accepting the plan",
                asked=False,
            )
        if self.mode is Mode.PLAN and (why := read_only_refusal(command)) is not None:
            return CommandAuthorization(
                False,
                f"plan mode runs only read-only commands, and this one may change something "
                f"({why}); the user can run it after accepting the plan",
                asked=False,
            )
        request = CommandApprovalRequest(
            command=command,
            cwd=cwd,
            timeout_seconds=timeout_seconds,
            allow_always=not verdict.refused and not background and self.offers_always(origin),
            origin=origin,
            profile=self.profile,
            warning=danger,
            requested_by=requested_by,
            refused=verdict.refused,
            background=background,
        )
        if verdict.refused:  # coding: asked whatever --yes, `a` or a hook said
            return await self._ask_refused(approver, request)
        if hook == HOOK_ALLOW and self.offers_always(origin):
            return CommandAuthorization(True, "allowed by a hook", asked=False)
        steered = origin is TurnOrigin.STEERED  # a peer's words reached this turn: ask
        if hook != HOOK_ASK and self.policy is CommandPolicy.ALLOW and not steered:
            return CommandAuthorization(True, "allowed by --yes", asked=False)
        granted = self.always_granted and not background  # `a` was said of foreground ones
        if hook != HOOK_ASK and granted and self.offers_always(origin):
            return CommandAuthorization(True, "allowed for this process (a)", asked=False)
        try:
            decision = await approver.approve_command(request)
        except Exception as exc:  # noqa: BLE001 - a broken dialog must deny, not crash the turn
            return CommandAuthorization(
                False, f"the approval could not be asked ({exc}); treated as denied", asked=True
            )
        if decision is ApprovalDecision.ALWAYS:
            if request.allow_always:
                self._always_granted = True
                self._granted_planning = self.mode is Mode.PLAN
                return CommandAuthorization(True, "approved for this process (a)", asked=True)
            # No `a` was offered (sysadmin or relayed turn): it approves this command only.
            return CommandAuthorization(True, "approved once", asked=True)
        if decision is ApprovalDecision.ONCE:
            return CommandAuthorization(True, "approved once", asked=True)
        return CommandAuthorization(False, "the user denied this command", asked=True)

    @staticmethod
    async def _ask_refused(
        approver: Approver, request: CommandApprovalRequest
    ) -> CommandAuthorization:
        """A command the guard refuses, in the coding profile: the user decides, every time.

        Nothing the user or a hook said earlier answers it, and no answer grants more than
        this one command. An approver that cannot ask refuses it (it raises or says no)."""
        refusal = f"refused by the safety guard: {request.warning}"
        try:
            decision = await approver.approve_command(request)
        except Exception as exc:  # noqa: BLE001 - nobody could be asked: refused
            return CommandAuthorization(
                False, f"{refusal}; the user could not be asked ({exc})", asked=True
            )
        if decision is ApprovalDecision.DENY:
            return CommandAuthorization(
                False, f"{refusal}; the user was asked and said no", asked=True
            )
        return CommandAuthorization(
            True, "approved once by the user despite the safety guard", asked=True
        )
