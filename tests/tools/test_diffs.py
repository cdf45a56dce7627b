"""Unified diffs of file contents (tools/diffs.py) and the tools' diff metadata."""

from __future__ import annotations

from zcoder.tools import ToolContext, default_registry
from zcoder.tools.diffs import DIFF_MAX_BYTES, compact_lines, file_diff

REGISTRY = default_registry()


def test_a_modified_file_gives_hunks_with_context_and_counts() -> None:
    before = b"".join(f"line {i}\n".encode() for i in range(1, 11))
    after = before.replace(b"line 5\n", b"line five\nline 5b\n")
    diff = file_diff("src/a.py", before, after)
    assert diff.lines[:3] == ("--- a/src/a.py", "+++ b/src/a.py", "@@ -2,7 +2,8 @@")
    assert "-line 5" in diff.lines and "+line five" in diff.lines and "+line 5b" in diff.lines
    assert " line 2" in diff.lines and " line 8" in diff.lines and " line 1" not in diff.lines
    assert (diff.added, diff.removed, diff.stats) == (2, 1, "+2 −1")


def test_created_and_deleted_files_diff_against_dev_null() -> None:
    created = file_diff("new.txt", None, b"a\nb\n")
    assert created.lines[:2] == ("--- /dev/null", "+++ b/new.txt")
    assert created.lines[3:] == ("+a", "+b")
    deleted = file_diff("old.txt", b"x\n", None)
    assert deleted.lines[:2] == ("--- a/old.txt", "+++ /dev/null")
    assert deleted.lines[3:] == ("-x",)


def test_a_missing_final_newline_is_marked() -> None:
    diff = file_diff("f", b"a\nb", b"a\nc")
    assert diff.lines[3:] == (
        " a",
        "-b",
        "\\ No newline at end of file",
        "+c",
        "\\ No newline at end of file",
    )


def test_removed_lines_that_look_like_headers_are_kept() -> None:
    diff = file_diff("notes.md", b"---- title\n++ x\n", b"")
    assert "----- title" in diff.lines and "-++ x" in diff.lines
    assert diff.removed == 2


def test_binary_large_and_unkept_content_say_so_instead_of_a_diff() -> None:
    binary = file_diff("img.png", b"\x89PNG\x00\x01", b"\x89PNG\x00\x02")
    assert binary.note.startswith("binary content") and binary.lines[-1].startswith("(binary")
    big = file_diff("big.txt", b"a" * DIFF_MAX_BYTES, b"b")
    assert big.note.startswith("too large to compare")
    unkept = file_diff("huge.log", None, b"x\n", before_note="9.0 MiB, over the limit")
    assert unkept.lines[0] == "--- a/huge.log"  # it existed: not /dev/null
    assert "previous content not kept" in unkept.note


def test_long_lines_are_clipped_only_when_asked() -> None:
    long_line = b"x" * 1000 + b"\n"
    clipped = file_diff("f", b"", long_line)
    assert clipped.lines[-1].endswith("…") and len(clipped.lines[-1]) < 500
    whole = file_diff("f", b"", long_line, clip=False)
    assert whole.lines[-1] == "+" + "x" * 1000


def test_compact_lines_caps_and_says_how_many_more() -> None:
    diff = file_diff("f", None, b"".join(f"{i}\n".encode() for i in range(100)))
    lines = compact_lines([diff], 10)
    assert len(lines) == 11
    assert lines[-1] == "… 93 more lines (/diff shows them all)"


async def test_edit_tools_put_a_capped_diff_in_metadata_and_counts_in_the_output(
    ctx: ToolContext,
) -> None:
    (ctx.workspace / "a.py").write_text("x = 1\ny = 2\n")
    replaced = await REGISTRY.dispatch(
        "replace_text", {"path": "a.py", "old_text": "y = 2", "new_text": "y = 3"}, ctx
    )
    assert replaced.output.endswith("(+1 −1 lines)")
    assert "-y = 2\n+y = 3" in replaced.metadata["diff"]
    assert "diff" not in replaced.output and "+y = 3" not in replaced.output
    written = await REGISTRY.dispatch(
        "write_file", {"path": "many.txt", "content": "".join(f"{i}\n" for i in range(200))}, ctx
    )
    assert written.output.endswith("(+200 −0 lines)")
    assert written.metadata["diff"].splitlines()[-1].startswith("… ")
    patch = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 10\n y = 3\n"
    patched = await REGISTRY.dispatch("apply_patch", {"patch": patch}, ctx)
    assert patched.ok and patched.output.endswith("(+1 −1 lines)")
    assert "+x = 10" in patched.metadata["diff"]


async def test_write_file_reads_the_old_content_but_never_opens_a_fifo(ctx: ToolContext) -> None:
    import os

    os.mkfifo(ctx.workspace / "pipe")
    result = await REGISTRY.dispatch("write_file", {"path": "pipe", "content": "x"}, ctx)
    assert not result.ok and "is a named pipe" in result.output
