"""The edit journal (agent/edits.py) under the real file tools: snapshots, turns, /undo.

Every edit here goes through the registry's write_file, replace_text and apply_patch in a
real temporary workspace, with the journal as the turn's edit gate, as in a turn.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.fixtures.approver import ALWAYS, DENY, ONCE, ScriptedApprover
from tests.fixtures.workspace import home, outside, workspace
from zcoder.agent.edit_store import EDITS_DIR_NAME
from zcoder.agent.edits import EditJournal
from zcoder.tools import (
    ApprovalPolicy,
    CommandPolicy,
    EditPolicy,
    Profile,
    ToolContext,
    ToolResult,
    TurnOrigin,
    default_registry,
)

REGISTRY = default_registry()
SESSION = "1788012120_10392"

__all__ = ["home", "outside", "workspace"]  # the shared fixtures: home, project, beside it


def journal_for(workspace: Path, home: Path | None, **kwargs: object) -> EditJournal:
    journal = EditJournal(workspace, home=home, **kwargs)  # type: ignore[arg-type]
    journal.use_session(SESSION)
    return journal


def ctx_for(
    journal: EditJournal,
    approver: ScriptedApprover | None = None,
    *,
    origin: TurnOrigin = TurnOrigin.USER,
    profile: Profile = Profile.CODING,
) -> ToolContext:
    return ToolContext(
        workspace=journal.workspace,
        profile=profile,
        origin=origin,
        approval=ApprovalPolicy(CommandPolicy.ASK, profile),
        approver=approver or ScriptedApprover(),
        edits=journal,
        requested_by="peer (pid 7)" if origin is TurnOrigin.RELAY else None,
    )


async def call(ctx: ToolContext, name: str, **args: object) -> ToolResult:
    result = await REGISTRY.dispatch(name, args, ctx)
    return result


async def test_edits_are_grouped_by_turn_and_undone_last_turn_first(workspace, home) -> None:
    (workspace / "b.txt").write_bytes(b"b original\n")
    journal = journal_for(workspace, home)
    ctx = ctx_for(journal)
    journal.begin_turn("first prompt")
    assert (await call(ctx, "write_file", path="a.txt", content="new file\n")).ok
    assert (await call(ctx, "replace_text", path="b.txt", old_text="original", new_text="one")).ok
    journal.begin_turn("second prompt")
    patch = (
        "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b one\n+b two\n"
        "--- /dev/null\n+++ b/c.txt\n@@ -0,0 +1 @@\n+c\n"
    )
    assert (await call(ctx, "apply_patch", patch=patch)).ok
    assert [(r.turn, r.path) for r in journal.store.records] == [
        (1, "a.txt"),
        (1, "b.txt"),
        (2, "b.txt"),
        (2, "c.txt"),
    ]

    plan = journal.plan_undo()
    assert plan is not None and plan.label == "second prompt"
    assert [(s.path, s.action) for s in plan.steps] == [("b.txt", "restore"), ("c.txt", "delete")]
    report = journal.undo(plan)
    assert report.done == ["restored b.txt", "deleted c.txt"]
    assert (workspace / "b.txt").read_bytes() == b"b one\n"
    assert not (workspace / "c.txt").exists()

    plan = journal.plan_undo()  # a second /undo goes one turn further back
    assert plan is not None and plan.label == "first prompt"
    journal.undo(plan)
    assert not (workspace / "a.txt").exists()
    assert (workspace / "b.txt").read_bytes() == b"b original\n"
    assert journal.plan_undo() is None


async def test_undo_of_a_patch_restores_modified_created_and_deleted_files_exactly(
    workspace, home
) -> None:
    (workspace / "keep.txt").write_bytes(b"one\r\ntwo\r\n")  # CRLF comes back byte for byte
    (workspace / "gone.txt").write_bytes(b"bye\n")
    os.chmod(workspace / "gone.txt", 0o640)
    journal = journal_for(workspace, home)
    ctx = ctx_for(journal)
    journal.begin_turn("refactor")
    patch = (
        "--- a/keep.txt\n+++ b/keep.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
        "--- /dev/null\n+++ b/sub/made.txt\n@@ -0,0 +1 @@\n+made\n"
        "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
    )
    result = await call(ctx, "apply_patch", patch=patch)
    assert result.ok, result.output
    assert not (workspace / "gone.txt").exists()
    plan = journal.plan_undo()
    assert plan is not None
    actions = {s.path: s.action for s in plan.steps}
    assert actions == {"keep.txt": "restore", "sub/made.txt": "delete", "gone.txt": "recreate"}
    report = journal.undo(plan)
    assert not report.failed and not report.kept
    assert (workspace / "keep.txt").read_bytes() == b"one\r\ntwo\r\n"
    assert (workspace / "gone.txt").read_bytes() == b"bye\n"
    assert not (workspace / "sub" / "made.txt").exists()


async def test_a_binary_file_overwritten_by_write_file_is_restored(workspace, home) -> None:
    data = bytes(range(256)) * 4
    (workspace / "blob.bin").write_bytes(data)
    journal = journal_for(workspace, home)
    journal.begin_turn("overwrite")
    result = await call(ctx_for(journal), "write_file", path="blob.bin", content="text now\n")
    assert result.ok and "binary content" in result.metadata["diff"]
    plan = journal.plan_undo()
    assert plan is not None
    journal.undo(plan)
    assert (workspace / "blob.bin").read_bytes() == data


async def edit_both(workspace: Path, home: Path) -> EditJournal:
    """A turn that rewrote a.txt (a0 to a1) and b.txt (b0 to b1); its journal."""
    (workspace / "a.txt").write_text("a0\n")
    (workspace / "b.txt").write_text("b0\n")
    journal = journal_for(workspace, home)
    ctx = ctx_for(journal)
    journal.begin_turn("edit both")
    await call(ctx, "write_file", path="a.txt", content="a1\n")
    await call(ctx, "write_file", path="b.txt", content="b1\n")
    return journal


async def test_a_file_changed_since_the_edit_is_kept_unless_overwrite_is_chosen(
    workspace, home
) -> None:
    journal = await edit_both(workspace, home)
    (workspace / "b.txt").write_text("b edited by the user\n")
    plan = journal.plan_undo()
    assert plan is not None
    assert [s.path for s in plan.conflicts] == ["b.txt"]
    assert "b.txt was changed since the agent's edit" in plan.text()
    report = journal.undo(plan)
    assert (workspace / "a.txt").read_text() == "a0\n"
    assert (workspace / "b.txt").read_text() == "b edited by the user\n"
    assert report.kept == ["b.txt (changed since the agent's edit)"]
    assert "b.txt" in report.note_for_model()
    assert journal.plan_undo() is None  # the turn counts as undone either way
    # The kept file still carries the agent's change (under the user's): /diff shows it.
    [diff] = journal.session_diff().diffs
    assert diff.path == "b.txt" and "-b0" in diff.lines
    assert [d.path for d in journal_for(workspace, home).session_diff().diffs] == ["b.txt"]


async def test_overwrite_restores_a_file_changed_or_deleted_since(workspace, home) -> None:
    journal = await edit_both(workspace, home)
    (workspace / "a.txt").write_text("user\n")
    (workspace / "b.txt").unlink()
    plan = journal.plan_undo()
    assert plan is not None and len(plan.conflicts) == 2
    assert "b.txt was deleted since" in plan.text()
    journal.undo(plan, overwrite_changed=True)
    assert (workspace / "a.txt").read_text() == "a0\n"
    assert (workspace / "b.txt").read_text() == "b0\n"


async def test_a_file_changed_while_the_dialog_was_open_is_left_alone(workspace, home) -> None:
    (workspace / "a.txt").write_text("a0\n")
    journal = journal_for(workspace, home)
    journal.begin_turn("edit")
    await call(ctx_for(journal), "write_file", path="a.txt", content="a1\n")
    plan = journal.plan_undo()
    assert plan is not None and not plan.conflicts
    (workspace / "a.txt").write_text("typed meanwhile\n")
    report = journal.undo(plan, overwrite_changed=True)
    assert (workspace / "a.txt").read_text() == "typed meanwhile\n"
    assert report.kept == ["a.txt (it changed while you were deciding)"]


async def test_attack_undo_never_writes_through_a_directory_swapped_for_a_symlink(
    workspace, home, outside
) -> None:
    # A prompt-injected model edits sub/config, then (by a command, say) swaps sub for
    # a link to a directory outside holding a file with the very content it wrote, so
    # that the "unchanged since" check passes, hoping /undo writes outside.
    (workspace / "sub").mkdir()
    (workspace / "sub" / "config").write_text("safe\n")
    journal = journal_for(workspace, home)
    journal.begin_turn("innocent")
    await call(ctx_for(journal), "write_file", path="sub/config", content="payload\n")
    (outside / "config").write_text("payload\n")
    (workspace / "sub" / "config").unlink()
    (workspace / "sub").rmdir()
    (workspace / "sub").symlink_to(outside, target_is_directory=True)
    plan = journal.plan_undo()
    assert plan is not None
    [step] = plan.steps
    assert "outside the workspace" in step.problem
    report = journal.undo(plan, overwrite_changed=True)
    assert (outside / "config").read_text() == "payload\n"
    assert report.failed and not report.done


async def test_attack_undo_never_follows_a_final_symlink(workspace, home, outside) -> None:
    (outside / "secret").write_text("secret\n")
    (workspace / "a.txt").write_text("a0\n")
    journal = journal_for(workspace, home)
    journal.begin_turn("edit")
    ctx = ctx_for(journal)
    await call(ctx, "write_file", path="a.txt", content="a1\n")
    await call(ctx, "write_file", path="made.txt", content="made\n")
    for name in ("a.txt", "made.txt"):
        (workspace / name).unlink()
        (workspace / name).symlink_to(outside / "secret")
    plan = journal.plan_undo()
    assert plan is not None
    assert all("symbolic link" in step.problem for step in plan.steps)
    journal.undo(plan, overwrite_changed=True)
    assert (outside / "secret").read_text() == "secret\n"
    assert (workspace / "a.txt").is_symlink() and (workspace / "made.txt").is_symlink()


async def test_the_journal_is_persisted_privately_and_undo_works_after_resume(
    workspace, home
) -> None:
    (workspace / "a.txt").write_text("before\n")
    first = journal_for(workspace, home)
    first.begin_turn("one")
    await call(ctx_for(first), "replace_text", path="a.txt", old_text="before", new_text="after")
    first.begin_turn("two")
    await call(ctx_for(first), "write_file", path="b.txt", content="b\n")
    plan = first.plan_undo()
    assert plan is not None
    first.undo(plan)

    directory = home / EDITS_DIR_NAME / SESSION
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE((directory / "journal.jsonl").stat().st_mode) == 0o600
    for blob in (directory / "blobs").iterdir():
        assert stat.S_IMODE(blob.stat().st_mode) == 0o600

    resumed = journal_for(workspace, home)  # a new process opening the same session
    plan = resumed.plan_undo()
    assert plan is not None and plan.label == "one"  # "two" stays undone
    resumed.begin_turn("three")
    assert resumed.turn == 3  # turn numbers go on after the saved ones
    resumed.undo(plan)
    assert (workspace / "a.txt").read_text() == "before\n"
    assert journal_for(workspace, home).plan_undo() is None


async def test_another_session_has_its_own_journal(workspace, home) -> None:
    journal = journal_for(workspace, home)
    journal.begin_turn("one")
    await call(ctx_for(journal), "write_file", path="a.txt", content="a\n")
    other = EditJournal(workspace, home=home)
    other.use_session("1788012121_55555")
    assert other.plan_undo() is None
    assert not other.session_diff().diffs


async def test_a_torn_last_line_is_skipped_and_later_records_still_read(workspace, home) -> None:
    journal = journal_for(workspace, home)
    journal.begin_turn("one")
    await call(ctx_for(journal), "write_file", path="a.txt", content="a\n")
    path = home / EDITS_DIR_NAME / SESSION / "journal.jsonl"
    with path.open("ab") as handle:
        handle.write(b'{"v": 1, "kind": "edit", "tu')  # a crash in the middle of a line
    again = journal_for(workspace, home)
    again.begin_turn("two")
    await call(ctx_for(again), "write_file", path="b.txt", content="b\n")
    third = journal_for(workspace, home)
    assert [r.path for r in third.store.records] == ["a.txt", "b.txt"]


async def test_a_file_too_large_to_snapshot_is_written_but_says_it_cannot_be_undone(
    workspace, home, monkeypatch
) -> None:
    monkeypatch.setattr("zcoder.tools.edits.SNAPSHOT_MAX_BYTES", 1000)
    (workspace / "big.txt").write_text("x" * 5000)
    journal = journal_for(workspace, home)
    journal.begin_turn("shrink")
    result = await call(ctx_for(journal), "write_file", path="big.txt", content="small\n")
    assert result.ok
    assert "previous content not kept" in result.metadata["diff"]
    plan = journal.plan_undo()
    assert plan is not None
    [step] = plan.steps
    assert step.problem.startswith("its previous content was not kept (4.9 KiB, over the")
    report = journal.undo(plan)
    assert (workspace / "big.txt").read_text() == "small\n"
    assert report.failed and "not kept" in report.failed[0]


async def test_snapshots_stop_at_the_session_budget_and_say_so(
    workspace, home, monkeypatch
) -> None:
    monkeypatch.setattr("zcoder.agent.edits.SESSION_SNAPSHOT_BUDGET", 100)
    (workspace / "a.txt").write_text("a" * 80)
    (workspace / "b.txt").write_text("b" * 80)
    journal = journal_for(workspace, home)
    journal.begin_turn("both")
    ctx = ctx_for(journal)
    await call(ctx, "write_file", path="a.txt", content="A\n")
    await call(ctx, "write_file", path="b.txt", content="B\n")
    first, second = journal.store.records
    assert first.undoable and not second.undoable
    assert "snapshots are used up" in second.before_note


async def test_session_diff_is_net_per_file_and_leaves_out_undone_turns(workspace, home) -> None:
    (workspace / "a.txt").write_text("1\n2\n3\n")
    journal = journal_for(workspace, home)
    ctx = ctx_for(journal)
    journal.begin_turn("one")
    await call(ctx, "replace_text", path="a.txt", old_text="2", new_text="two")
    journal.begin_turn("two")
    await call(ctx, "replace_text", path="a.txt", old_text="3", new_text="three")
    await call(ctx, "write_file", path="n.txt", content="new\n")
    diff = journal.session_diff()
    assert [d.path for d in diff.diffs] == ["a.txt", "n.txt"]
    a_lines = diff.diffs[0].lines
    assert "-2" in a_lines and "+two" in a_lines and "+three" in a_lines
    assert diff.header.startswith("2 files changed this session, +3 −2 lines")
    plan = journal.plan_undo()
    assert plan is not None
    journal.undo(plan)
    diff = journal.session_diff()
    assert [d.path for d in diff.diffs] == ["a.txt"]
    assert "+three" not in diff.diffs[0].lines
    (workspace / "a.txt").write_text("1\n2\n3\n")  # back to how it was: nothing to show
    assert not journal.session_diff().diffs


async def test_without_a_home_the_journal_works_in_memory(workspace) -> None:
    (workspace / "a.txt").write_text("a0\n")
    journal = journal_for(workspace, None)
    journal.begin_turn("edit")
    await call(ctx_for(journal), "write_file", path="a.txt", content="a1\n")
    plan = journal.plan_undo()
    assert plan is not None
    journal.undo(plan)
    assert (workspace / "a.txt").read_text() == "a0\n"


# -- ZCODER_EDITS=ask -------------------------------------------------------------------


async def test_ask_mode_refused_edit_writes_nothing_and_tells_the_model(workspace, home) -> None:
    (workspace / "a.txt").write_text("keep me\n")
    journal = journal_for(workspace, home, policy=EditPolicy.ASK)
    approver = ScriptedApprover(DENY)
    journal.begin_turn("edit")
    result = await call(ctx_for(journal, approver), "write_file", path="a.txt", content="gone\n")
    assert not result.ok
    assert "the user refused this edit of a.txt; nothing was written" in result.output
    assert (workspace / "a.txt").read_text() == "keep me\n"
    assert journal.store.records == []
    [request] = approver.edit_requests
    assert request.tool == "write_file" and request.paths == ("a.txt",)
    assert "-keep me\n+gone" in request.diff and request.allow_turn


async def test_ask_mode_shows_the_exact_patch_and_writes_once_approved(workspace, home) -> None:
    (workspace / "a.txt").write_text("x" * 600 + "\n")
    journal = journal_for(workspace, home, policy=EditPolicy.ASK)
    approver = ScriptedApprover(ONCE)
    journal.begin_turn("edit")
    patch = f"--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-{'x' * 600}\n+{'y' * 600}\n"
    result = await call(ctx_for(journal, approver), "apply_patch", patch=patch)
    assert result.ok
    [request] = approver.edit_requests
    assert "+" + "y" * 600 in request.diff.splitlines()  # whole, never clipped
    assert (workspace / "a.txt").read_text() == "y" * 600 + "\n"


async def test_ask_mode_a_allows_the_rest_of_the_turn_only(workspace, home) -> None:
    journal = journal_for(workspace, home, policy=EditPolicy.ASK)
    approver = ScriptedApprover(ALWAYS, ONCE)
    ctx = ctx_for(journal, approver)
    journal.begin_turn("one")
    await call(ctx, "write_file", path="a.txt", content="a\n")
    await call(ctx, "write_file", path="b.txt", content="b\n")
    assert len(approver.edit_requests) == 1
    journal.begin_turn("two")
    await call(ctx, "write_file", path="c.txt", content="c\n")
    assert len(approver.edit_requests) == 2  # a new turn asks again


async def test_ask_mode_always_asks_in_a_relayed_turn_and_in_sysadmin(workspace, home) -> None:
    journal = journal_for(workspace, home, policy=EditPolicy.ASK)
    approver = ScriptedApprover(ALWAYS, ALWAYS, ALWAYS)
    relayed = ctx_for(journal, approver, origin=TurnOrigin.RELAY)
    journal.begin_turn("relayed from peer")
    await call(relayed, "write_file", path="a.txt", content="a\n")
    await call(relayed, "write_file", path="b.txt", content="b\n")
    assert [r.allow_turn for r in approver.edit_requests] == [False, False]
    assert approver.edit_requests[0].requested_by == "peer (pid 7)"
    assert (workspace / "b.txt").exists()  # `a` there approves one edit
    admin = ctx_for(journal, approver, profile=Profile.SYSADMIN)
    journal.begin_turn("admin")
    await call(admin, "write_file", path="c.txt", content="c\n")
    assert approver.edit_requests[-1].allow_turn is False


async def test_an_approver_that_fails_refuses_the_edit(workspace, home) -> None:
    class Broken(ScriptedApprover):
        async def approve_edit(self, request):
            raise RuntimeError("no room for the dialog")

    journal = journal_for(workspace, home, policy=EditPolicy.ASK)
    journal.begin_turn("edit")
    result = await call(ctx_for(journal, Broken()), "write_file", path="a.txt", content="a\n")
    assert not result.ok and "no room for the dialog" in result.output
    assert not (workspace / "a.txt").exists()


async def test_a_journal_that_cannot_be_saved_does_not_fail_the_write(workspace, tmp_path) -> None:
    home = tmp_path / "home-file"
    home.write_text("not a directory")  # nothing can be saved under it
    (workspace / "a.txt").write_text("a0\n")
    journal = journal_for(workspace, home)
    journal.begin_turn("edit")
    result = await call(ctx_for(journal), "write_file", path="a.txt", content="a1\n")
    assert result.ok, result.output
    plan = journal.plan_undo()  # kept in memory: this process can still undo it
    assert plan is not None and not plan.steps[0].problem
    journal.undo(plan)
    assert (workspace / "a.txt").read_text() == "a0\n"


async def test_attack_a_fifo_put_in_place_of_an_edited_file_cannot_hang_diff_or_undo(
    workspace, home
) -> None:
    journal = journal_for(workspace, home)
    journal.begin_turn("edit")
    await call(ctx_for(journal), "write_file", path="a.txt", content="a\n")
    (workspace / "a.txt").unlink()
    os.mkfifo(workspace / "a.txt")
    [diff] = journal.session_diff().diffs
    assert "named pipe" in diff.note
    plan = journal.plan_undo()
    assert plan is not None and "named pipe" in plan.steps[0].problem
    journal.undo(plan, overwrite_changed=True)
    assert stat.S_ISFIFO(os.lstat(workspace / "a.txt").st_mode)


# -- relayed turns under ZCODER_EDITS=auto (ZCODER_RELAY_EDITS) -------------------------


@pytest.mark.parametrize(
    ("relay_edits", "trusted", "asked"),
    [
        (EditPolicy.ASK, False, True),  # the default: an untrusted sender's edit asks
        (EditPolicy.ASK, True, False),  # a trusted sender's goes through as before
        (EditPolicy.AUTO, False, False),  # the user chose so for relayed turns
    ],
)
async def test_a_relayed_edit_asks_unless_trusted_or_relay_edits_auto(
    workspace, home, relay_edits: EditPolicy, trusted: bool, asked: bool
) -> None:
    (workspace / "a.txt").write_text("keep me\n")
    journal = journal_for(workspace, home)  # ZCODER_EDITS=auto
    approver = ScriptedApprover(DENY)
    ctx = ctx_for(journal, approver, origin=TurnOrigin.RELAY)
    ctx.approval = ApprovalPolicy(CommandPolicy.ASK, Profile.CODING, relay_edits=relay_edits)
    ctx.sender_trusted = trusted
    journal.begin_turn("relayed from peer")
    result = await call(ctx, "write_file", path="a.txt", content="pwned\n")
    assert bool(approver.edit_requests) is asked
    assert (workspace / "a.txt").read_text() == ("keep me\n" if asked else "pwned\n")
    assert result.ok is not asked
    if asked:
        [request] = approver.edit_requests
        assert request.requested_by == "peer (pid 7)" and not request.allow_turn


async def test_a_user_turn_under_auto_never_asks_for_being_relayed(workspace, home) -> None:
    journal = journal_for(workspace, home)
    ctx = ctx_for(journal, ScriptedApprover())  # raises if asked
    journal.begin_turn("mine")
    assert (await call(ctx, "write_file", path="a.txt", content="mine\n")).ok
