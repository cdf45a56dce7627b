"""The edit journal: every file the agent's tools change, undoable turn by turn.

It is the turn's ``EditGate`` (zcoder.tools.edits). Before write_file, replace_text or
apply_patch writes, ``review`` asks the user when ``ZCODER_EDITS=ask``, or in a relayed
task's turn unless its sender is trusted (``ZCODER_RELAY_EDITS``; zcoder.tools.approval),
through the same approver as commands, then keeps each file's previous content (a snapshot, at most
``SNAPSHOT_MAX_BYTES`` a file and ``SESSION_SNAPSHOT_BUDGET`` a session); after the
write, ``committed`` records what was written (its hash) under the current turn.

``/diff`` shows, per file, the net change from before the agent first touched it (leaving
out changes an undo took back) to what is on disk now. ``/undo`` takes the last turn that changed
files and not yet undone: each file goes back to its content before that turn (a file
the turn created is deleted). A file whose content is no longer what the turn wrote was
changed since (by the user, a command, an editor): it is kept as it is unless the user
chooses to overwrite it too. Restoring goes through the same confinement as the tools:
no symlink is followed, nothing outside the workspace is touched. Edits made by
run_command are not journalled; a helper agent's are (``record_writes``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from zcoder.agent.edit_store import EditRecord, EditStore, sha256
from zcoder.base.plural import counted
from zcoder.tools import (
    ApprovalDecision,
    ConfinementError,
    EditApprovalRequest,
    EditPolicy,
    FileChange,
    Mode,
    Profile,
    ToolContext,
    TurnOrigin,
)
from zcoder.tools.confinement import (
    atomic_write,
    canonical_workspace,
    open_read,
    remove_file,
    resolve_write_target,
)
from zcoder.tools.diffs import FileDiff, file_diff, human_size
from zcoder.tools.offload import in_thread

__all__ = [
    "SESSION_SNAPSHOT_BUDGET",
    "EditJournal",
    "SessionDiff",
    "UndoPlan",
    "UndoStep",
]

SESSION_SNAPSHOT_BUDGET: Final = 256 * 1024 * 1024
"""Previous contents kept for one session, at most; later edits say they cannot be undone."""
LABEL_CHARS: Final = 60
"""How much of a turn's prompt names it in /undo."""
_READ_CHUNK: Final = 1024 * 1024
_CURRENT_DIFF_BYTES: Final = 8 * 1024 * 1024


@dataclass(frozen=True)
class _Current:
    """A journalled file as it is on disk now."""

    exists: bool
    digest: str | None = None
    data: bytes | None = None  # None when too large to hold (its hash is still known)
    problem: str = ""  # it cannot be read or written safely (a symlink now, say)


@dataclass(frozen=True)
class SessionDiff:
    diffs: tuple[FileDiff, ...]

    @property
    def header(self) -> str:
        files = len(self.diffs)
        added = sum(d.added for d in self.diffs)
        removed = sum(d.removed for d in self.diffs)
        return (
            f"{counted(files, 'file')} changed this session, "
            f"+{added} −{removed} lines (from before the agent's first edit of each file "
            "to what is on disk now)"
        )

    def text(self) -> str:
        return "\n".join([self.header, *(line for d in self.diffs for line in d.lines)])


@dataclass(frozen=True)
class UndoStep:
    """One file of an undo: what will happen to it, and what stands in the way."""

    path: str
    action: str  # "restore", "delete" (the turn created it), "recreate" (it deleted it)
    content: bytes | None  # what to write back; None for delete
    expected: str | None  # what the turn left (hash); None: it left no file
    seen: _Current
    changed_since: bool
    problem: str  # non-empty: this file cannot be restored (the reason)
    diff: FileDiff  # from now to after the undo

    def describe(self) -> str:
        what = {
            "restore": f"restore {self.path} to its content before the turn",
            "delete": f"delete {self.path} (the turn created it)",
            "recreate": f"recreate {self.path} (the turn deleted it)",
        }[self.action]
        if self.problem:
            return f"cannot undo {self.path}: {self.problem}"
        if self.changed_since:
            state = "deleted" if not self.seen.exists else "changed"
            return (
                f"{self.path} was {state} since the agent's edit: kept as it is, "
                f"unless you choose to overwrite ({what})"
            )
        return what


@dataclass(frozen=True)
class UndoPlan:
    turn: int
    steps: tuple[UndoStep, ...]
    label: str = ""
    turns: tuple[int, ...] = ()
    """Every turn it takes back (a /rewind's); empty: ``turn`` alone."""
    what: str = ""
    """How the user knows what it takes back, when it is more than one turn."""
    edits: tuple[int, ...] = ()
    """A /rewind's: the records it takes back (their places in the journal), when only
    part of a turn goes (``turns`` holds the turns that go whole)."""

    @property
    def name(self) -> str:
        """The turn as the user knows it: ``the turn "fix the tests"``."""
        if self.what:
            return self.what
        return f'the turn "{self.label}"' if self.label else f"turn {self.turn}"

    @property
    def conflicts(self) -> tuple[UndoStep, ...]:
        return tuple(s for s in self.steps if s.changed_since and not s.problem)

    def text(self) -> str:
        """What will happen to each file, then the diff from now to after the undo."""
        lines = [f"• {step.describe()}" for step in self.steps]
        for step in self.steps:
            if not step.problem:
                lines.append("")
                if step.changed_since:
                    lines.append(f"(only with o: {step.path} as it would become)")
                lines += step.diff.lines
        return "\n".join(lines)


@dataclass
class UndoReport:
    name: str
    done: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def text(self) -> str:
        parts = [f"Undid the file changes of {self.name}."]
        if self.done:
            parts.append("Done: " + "; ".join(self.done) + ".")
        if self.kept:
            parts.append("Kept as they are: " + "; ".join(self.kept) + ".")
        if self.failed:
            parts.append("Not undone: " + "; ".join(self.failed) + ".")
        return " ".join(parts)

    def note_for_model(self) -> str:
        """The user-role record the model reads: its earlier edits are gone."""
        changed = "; ".join(self.done) or "nothing"
        text = f"The user undid the file changes of an earlier turn (/undo): {changed}."
        if self.kept or self.failed:
            text += " Left as they were: " + "; ".join(self.kept + self.failed) + "."
        return text + " Read files again before editing them."


class EditJournal:
    """The session's edits: the gate of every turn, /diff and /undo."""

    def __init__(
        self, workspace: Path, *, home: Path | None, policy: EditPolicy = EditPolicy.AUTO
    ) -> None:
        self.workspace = canonical_workspace(workspace)
        self.home = home
        self.policy = policy
        self.store = EditStore(None)
        self.turn = 0
        self.label = ""
        self.ledger_size: Callable[[], int | None] = lambda: None
        """How many prompts the user's ledger holds now (the agent's), kept with each edit."""
        self._turn_allowed = False  # `a` in the edit dialog: the rest of this turn
        self._snapshots: dict[int, str] = {}  # id(change) -> note when not kept, per call

    # -- sessions and turns ------------------------------------------------------------

    def use_session(self, session_id: str | None) -> None:
        self.store = EditStore.for_session(self.home, session_id)
        self.turn = max((r.turn for r in self.store.records), default=0)
        self.turn = max(self.turn, max(self.store.undone, default=0))

    def begin_turn(self, label: str = "") -> None:
        """A turn starts; ``label`` names it in /undo (the user's prompt, shortened)."""
        self.turn += 1
        self.label = " ".join(label.split())
        if len(self.label) > LABEL_CHARS:
            self.label = self.label[: LABEL_CHARS - 1] + "…"
        self._turn_allowed = False

    # -- the gate ----------------------------------------------------------------------

    async def review(self, tool: str, changes: Sequence[FileChange], ctx: ToolContext) -> str:
        paths = ", ".join(change.path for change in changes)
        if ctx.approval.mode is Mode.PLAN:  # the registry refuses edit tools there already
            return f"plan mode is read-only; nothing was written to {paths}"
        asks = ctx.approval.edits_ask(self.policy, ctx.origin, sender_trusted=ctx.sender_trusted)
        # An `a` for this turn's edits was the user's, before a peer's steering landed.
        if asks and not (self._turn_allowed and ctx.origin is TurnOrigin.USER):
            allow_turn = ctx.profile is Profile.CODING and ctx.origin is TurnOrigin.USER
            diff = await in_thread(
                ctx.stop,
                lambda: "\n".join(line for c in changes for line in _full_diff(c).lines),
                name="diff",
            )
            request = EditApprovalRequest(
                tool=tool,
                paths=tuple(change.path for change in changes),
                diff=diff,
                allow_turn=allow_turn,
                origin=ctx.origin,
                requested_by=ctx.requested_by,
            )
            try:
                decision = await ctx.approver.approve_edit(request)
            except Exception as exc:  # noqa: BLE001 - a broken dialog refuses, never crashes
                return f"the edit could not be approved ({exc}); nothing was written"
            if decision is ApprovalDecision.DENY:
                return (
                    f"the user refused this edit of {paths}; nothing was written. "
                    "Do not retry it unchanged: ask the user what they want instead"
                )
            if decision is ApprovalDecision.ALWAYS and allow_turn:
                self._turn_allowed = True
        # Off the event loop: a snapshot is written to the session's store. Stopped here,
        # nothing is written to the workspace; a snapshot already kept is harmless.
        await in_thread(ctx.stop, lambda: self._take_snapshots(changes), name="snapshot")
        return ""

    def _take_snapshots(self, changes: Sequence[FileChange]) -> None:
        self._snapshots.clear()
        for change in changes:
            self._snapshots[id(change)] = self._snapshot(change)

    def _snapshot(self, change: FileChange) -> str:
        """Keep the previous content; "" when kept (or absent), else why it was not."""
        if change.before_note:
            return change.before_note
        if change.before is None:
            return ""
        if self.store.stored_bytes + len(change.before) > SESSION_SNAPSHOT_BUDGET:
            return f"the session's {human_size(SESSION_SNAPSHOT_BUDGET)} of snapshots are used up"
        self.store.put(change.before)
        return ""

    def record_writes(self, tool: str, changes: Sequence[FileChange]) -> None:
        """Writes made outside the edit tools once the user said yes (``/init``'s
        AGENTS.md, a helper agent's edits): in the journal as a tool's edits are, for
        /diff, /undo and /rewind."""
        for change in changes:
            self._snapshots[id(change)] = self._snapshot(change)
        self.committed(tool, changes)

    def committed(
        self, tool: str, changes: Sequence[FileChange], _ctx: ToolContext | None = None
    ) -> None:
        records = []
        prompts = self.ledger_size()
        for change in changes:
            note = self._snapshots.pop(id(change), change.before_note)
            records.append(
                EditRecord(
                    turn=self.turn,
                    tool=tool,
                    path=change.path,
                    before=None if change.before is None or note else sha256(change.before),
                    after=None if change.after is None else sha256(change.after),
                    before_note=note,
                    label=self.label,
                    prompts=prompts,
                )
            )
        self._snapshots.clear()
        self.store.add(records)

    # -- what is on disk now -----------------------------------------------------------

    def _current(self, path: str) -> _Current:
        try:
            target = resolve_write_target(self.workspace, path)
            handle = open_read(target)  # a FIFO put there is refused, never waited on
        except FileNotFoundError:
            return _Current(False)
        except ConfinementError as exc:
            return _Current(True, problem=str(exc))
        except OSError as exc:
            return _Current(True, problem=exc.strerror or str(exc))
        digest = hashlib.sha256()
        held = bytearray()
        keep = True
        with handle:
            while chunk := handle.read(_READ_CHUNK):
                digest.update(chunk)
                if keep:
                    held += chunk
                    if len(held) > _CURRENT_DIFF_BYTES:
                        keep, held = False, bytearray()
        return _Current(True, digest.hexdigest(), bytes(held) if keep else None)

    def _live(self) -> list[EditRecord]:
        """The records of turns not undone: what /undo can take back."""
        return [self.store.records[i] for i in self._live_places()]

    def _live_places(self) -> list[int]:
        store = self.store
        return [
            place
            for place, record in enumerate(store.records)
            if record.turn not in store.undone and place not in store.undone_edits
        ]

    def _standing(self) -> list[EditRecord]:
        """The records whose change no undo reverted: what /diff shows."""
        return [r for r in self.store.records if (r.turn, r.path) not in self.store.reverted]

    # -- /diff -------------------------------------------------------------------------

    def session_diff(self, since_turn: int = 0) -> SessionDiff:
        """The net change of each file the turns after ``since_turn`` changed (0: all)."""
        first: dict[str, EditRecord] = {}
        for record in self._standing():
            if record.turn > since_turn:
                first.setdefault(record.path, record)
        diffs = []
        for path, record in first.items():
            before, note = self._before(record)
            now = self._current(path)
            after_note = ""
            if now.problem:
                after_note = f"cannot be read now: {now.problem}"
            elif now.exists and now.data is None:
                after_note = "too large to compare now"
            if before is None and not note and not now.exists:
                continue  # created and gone again
            if not note and not after_note and before == now.data:
                continue  # back to how it was
            diffs.append(file_diff(path, before, now.data, before_note=note, after_note=after_note))
        return SessionDiff(tuple(diffs))

    def _before(self, record: EditRecord) -> tuple[bytes | None, str]:
        if record.before_note:
            return None, record.before_note
        if record.before is None:
            return None, ""
        data = self.store.get(record.before)
        if data is None:
            return None, "its snapshot is missing or damaged"
        return data, ""

    # -- /undo -------------------------------------------------------------------------

    def has_undo(self) -> bool:
        return bool(self._live())

    def plan_undo(self) -> UndoPlan | None:
        """The undo of the last turn that changed files; None when there is none."""
        live = self._live()
        if not live:
            return None
        turn = live[-1].turn
        records = [r for r in live if r.turn == turn]
        return UndoPlan(turn, self._steps(records), records[0].label)

    def plan_rewind(self, prompts: int, what: str) -> UndoPlan | None:
        """The undo of every edit, of turns not undone, made after the ledger's first
        ``prompts`` prompts (a /rewind to before prompt ``prompts``); None when there is
        none. ``what`` names them for the user."""
        every, live = self.store.records, self._live_places()
        places = [p for p in live if (self.store.position(every[p]) or 0) > prompts]
        if not places:
            return None
        records = [every[p] for p in places]
        chosen = set(places)
        split = {every[p].turn for p in live if p not in chosen}  # a steer split: part stays
        whole = {r.turn for r in records} - split
        partial = tuple(p for p in places if every[p].turn in split)
        return UndoPlan(
            records[-1].turn,
            self._steps(records),
            turns=tuple(sorted(whole)),
            what=what,
            edits=partial,
        )

    def rewound(self, prompts: int) -> list[int]:
        """The conversation went back to before the ledger's prompt ``prompts``: the edits
        after it now count as made before it; returns their turns."""
        turns = sorted(
            {r.turn for r in self.store.records if (self.store.position(r) or 0) > prompts}
        )
        if turns:
            self.store.mark_rewound(turns, prompts)
        return turns

    def _steps(self, records: list[EditRecord]) -> tuple[UndoStep, ...]:
        """Per file ``records`` touched: back to before the first of them."""
        first: dict[str, EditRecord] = {}
        last: dict[str, EditRecord] = {}
        for record in records:
            first.setdefault(record.path, record)
            last[record.path] = record
        steps = []
        for path, earliest in first.items():
            expected = last[path].after
            before, note = self._before(earliest)
            now = self._current(path)
            if earliest.before is None and not earliest.before_note:
                action = "delete"
            elif expected is None:
                action = "recreate"
            else:
                action = "restore"
            problem = note and f"its previous content was not kept ({note})"
            problem = problem or now.problem
            changed = now.digest != expected if now.exists else expected is not None
            unreadable = now.problem or (now.exists and now.data is None)
            diff = file_diff(
                path, now.data, before, after_note="too large to compare" if unreadable else ""
            )
            steps.append(UndoStep(path, action, before, expected, now, changed, problem, diff))
        return tuple(steps)

    def undo(self, plan: UndoPlan, *, overwrite_changed: bool = False) -> UndoReport:
        """Carry out ``plan``; files that changed since it was made are left alone."""
        report = UndoReport(plan.name)
        restored: list[str] = []
        for step in plan.steps:
            if step.problem:
                report.failed.append(f"{step.path} ({step.problem})")
                continue
            if step.changed_since and not overwrite_changed:
                report.kept.append(f"{step.path} (changed since the agent's edit)")
                continue
            now = self._current(step.path)
            if now.problem or now.exists != step.seen.exists or now.digest != step.seen.digest:
                report.kept.append(f"{step.path} (it changed while you were deciding)")
                continue
            try:
                target = resolve_write_target(self.workspace, step.path)
                if step.action == "delete":
                    if now.exists:
                        remove_file(target)
                    report.done.append(f"deleted {step.path}")
                    restored.append(step.path)
                else:
                    assert step.content is not None
                    atomic_write(target, step.content)
                    verb = "recreated" if step.action == "recreate" else "restored"
                    report.done.append(f"{verb} {step.path}")
                    restored.append(step.path)
            except FileNotFoundError:
                report.done.append(f"{step.path} was already gone")
                restored.append(step.path)
            except ConfinementError as exc:
                report.failed.append(f"{step.path} (refused: {exc})")
            except OSError as exc:
                report.failed.append(f"{step.path} ({exc.strerror or exc})")
        for turn in plan.turns or (() if plan.edits else (plan.turn,)):
            self.store.mark_undone(turn, restored)
        split = sorted({self.store.records[p].turn for p in plan.edits})
        for turn in split:
            edits = [p for p in plan.edits if self.store.records[p].turn == turn]
            self.store.mark_undone(turn, restored, edits)
        return report


def _full_diff(change: FileChange) -> FileDiff:
    """The diff a dialog approves: every line whole."""
    return file_diff(
        change.path, change.before, change.after, before_note=change.before_note, clip=False
    )
