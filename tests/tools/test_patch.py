"""apply_patch: unified diffs applied all or nothing, paths confined."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from zcoder.tools import ToolContext, default_registry
from zcoder.tools.patch import PatchError, parse_patch

REGISTRY = default_registry()


async def apply(ctx: ToolContext, patch: str):
    return await REGISTRY.dispatch("apply_patch", {"patch": patch}, ctx)


def write(ws: Path, name: str, text: str) -> None:
    (ws / name).parent.mkdir(parents=True, exist_ok=True)
    (ws / name).write_text(text)


MULTI = """\
diff --git a/a.py b/a.py
index 111..222 100644
--- a/a.py
+++ b/a.py
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1,2 @@
+print("new")
+# end
--- a/old.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-bye
-now
"""


async def test_multi_file_patch_modifies_creates_and_deletes(ctx: ToolContext) -> None:
    ws = ctx.workspace
    write(ws, "a.py", "one\ntwo\nthree\n")
    write(ws, "old.txt", "bye\nnow\n")
    result = await apply(ctx, MULTI)
    assert result.ok, result.output
    assert (ws / "a.py").read_text() == "one\nTWO\nthree\n"
    assert (ws / "pkg" / "new.py").read_text() == 'print("new")\n# end\n'
    assert not (ws / "old.txt").exists()
    assert sorted(result.metadata["files"]) == ["a.py", "old.txt", "pkg/new.py"]


async def test_hunk_found_despite_wrong_line_numbers(ctx: ToolContext) -> None:
    write(ctx.workspace, "f.txt", "".join(f"{i}\n" for i in range(1, 31)))
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -3,3 +3,3 @@\n 20\n-21\n+twenty-one\n 22\n"
    result = await apply(ctx, patch)
    assert result.ok, result.output
    assert "twenty-one\n22\n" in (ctx.workspace / "f.txt").read_text()


async def test_several_hunks_in_one_file(ctx: ToolContext) -> None:
    write(ctx.workspace, "f.txt", "".join(f"{i}\n" for i in range(1, 21)))
    patch = (
        "--- a/f.txt\n+++ b/f.txt\n"
        "@@ -2,3 +2,4 @@\n 2\n+2.5\n 3\n 4\n"
        "@@ -15,3 +16,2 @@\n 15\n-16\n 17\n"
    )
    result = await apply(ctx, patch)
    assert result.ok, result.output
    lines = (ctx.workspace / "f.txt").read_text().splitlines()
    assert lines[:4] == ["1", "2", "2.5", "3"]
    assert "16" not in lines and len(lines) == 20


async def test_no_newline_at_end_of_file_markers(ctx: ToolContext) -> None:
    write(ctx.workspace, "f.txt", "a\nb")
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"
    result = await apply(ctx, patch)
    assert result.ok, result.output
    assert (ctx.workspace / "f.txt").read_text() == "a\nc\n"


async def test_crlf_file_keeps_its_line_endings(ctx: ToolContext) -> None:
    (ctx.workspace / "w.txt").write_bytes(b"a\r\nb\r\n")
    result = await apply(ctx, "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n")
    assert result.ok, result.output
    assert (ctx.workspace / "w.txt").read_bytes() == b"a\r\nc\r\n"


async def test_nothing_written_when_one_hunk_does_not_apply(ctx: ToolContext) -> None:
    ws = ctx.workspace
    write(ws, "a.py", "one\ntwo\nthree\n")
    write(ws, "b.py", "alpha\n")
    patch = (
        "--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
        "--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-beta\n+gamma\n"
    )
    result = await apply(ctx, patch)
    assert not result.ok
    assert "hunk 1 of b.py does not apply" in result.output
    assert "nothing was changed" in result.output
    assert (ws / "a.py").read_text() == "one\ntwo\nthree\n"


@pytest.mark.parametrize(
    "bad_path", ["../outside/secret.txt", "/etc/passwd", "out/secret.txt", "link.txt"]
)
async def test_nothing_written_when_any_path_is_outside(
    ctx: ToolContext, outside: Path, bad_path: str
) -> None:
    ws = ctx.workspace
    (ws / "out").symlink_to(outside)
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    write(ws, "ok.py", "x\n")
    patch = (
        "--- a/ok.py\n+++ b/ok.py\n@@ -1 +1 @@\n-x\n+y\n"
        f"--- a/{bad_path}\n+++ b/{bad_path}\n@@ -1 +1 @@\n-outside secret\n+pwned\n"
    )
    result = await apply(ctx, patch)
    assert not result.ok
    assert "nothing was changed" in result.output
    assert (ws / "ok.py").read_text() == "x\n"
    assert (outside / "secret.txt").read_text() == "outside secret\n"
    assert sorted(os.listdir(outside)) == ["secret.txt"]


async def test_new_file_outside_is_refused(ctx: ToolContext, outside: Path) -> None:
    patch = "--- /dev/null\n+++ b/../outside/new.txt\n@@ -0,0 +1 @@\n+x\n"
    result = await apply(ctx, patch)
    assert not result.ok and "outside the workspace" in result.output
    assert sorted(os.listdir(outside)) == ["secret.txt"]


async def test_creating_an_existing_file_is_refused(ctx: ToolContext) -> None:
    write(ctx.workspace, "a.txt", "x\n")
    result = await apply(ctx, "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+y\n")
    assert not result.ok and "already exists" in result.output


async def test_patch_of_missing_file_is_refused(ctx: ToolContext) -> None:
    result = await apply(ctx, "--- a/none.txt\n+++ b/none.txt\n@@ -1 +1 @@\n-a\n+b\n")
    assert not result.ok and "does not exist" in result.output


async def test_partial_deletion_is_refused(ctx: ToolContext) -> None:
    write(ctx.workspace, "a.txt", "x\ny\n")
    result = await apply(ctx, "--- a/a.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x\n")
    assert not result.ok and "does not remove all" in result.output
    assert (ctx.workspace / "a.txt").exists()


async def test_rename_with_edit(ctx: ToolContext) -> None:
    write(ctx.workspace, "old.py", "a\n")
    result = await apply(ctx, "--- a/old.py\n+++ b/new.py\n@@ -1 +1 @@\n-a\n+b\n")
    assert result.ok, result.output
    assert not (ctx.workspace / "old.py").exists()
    assert (ctx.workspace / "new.py").read_text() == "b\n"


@pytest.mark.parametrize(
    "patch",
    [
        "",
        "just some text",
        "@@ -1 +1 @@\n-a\n+b\n",
        "--- a/x\n+++ b/x\n",
        "--- a/x\n+++ b/x\n@@ -1 +1 @@\n a\n",
    ],
)
def test_malformed_patches_are_rejected(patch: str) -> None:
    with pytest.raises(PatchError):
        parse_patch(patch)


def test_parse_strips_prefixes_and_timestamps() -> None:
    (file_patch,) = parse_patch(
        "--- a/src/x.py\t2024-01-01 00:00:00\n+++ b/src/x.py\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n"
    )
    assert file_patch.old_path == file_patch.new_path == "src/x.py"


def test_hunk_lines_starting_with_dashes_are_counted() -> None:
    (file_patch,) = parse_patch("--- a/x\n+++ b/x\n@@ -1,2 +1,1 @@\n--- removed\n keep\n")
    assert file_patch.hunks[0].old == ["-- removed", "keep"]
