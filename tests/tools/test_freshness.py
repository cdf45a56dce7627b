"""Edits over changes the agent has not seen are refused; the model is told to read again."""

from __future__ import annotations

from zcoder.tools import ToolContext, default_registry
from zcoder.tools.freshness import FreshnessBook

REGISTRY = default_registry()


async def call(ctx: ToolContext, name: str, **args: object):
    return await REGISTRY.dispatch(name, args, ctx)


def _with_book(ctx: ToolContext) -> ToolContext:
    ctx.freshness = FreshnessBook()
    return ctx


async def test_replace_text_refuses_a_file_changed_since_it_was_read(ctx: ToolContext) -> None:
    _with_book(ctx)
    path = ctx.workspace / "app.py"
    path.write_text("value = 1\n")
    assert (await call(ctx, "read_file", path="app.py")).ok
    path.write_text("value = 1\nother = 2\n")  # the user's editor, another agent...
    result = await call(ctx, "replace_text", path="app.py", old_text="value = 1", new_text="v = 9")
    assert not result.ok
    assert "changed on disk since you last read or wrote it" in result.output
    assert "Read it again" in result.output
    assert path.read_text() == "value = 1\nother = 2\n"  # nothing lost
    assert (await call(ctx, "read_file", path="app.py")).ok
    result = await call(ctx, "replace_text", path="app.py", old_text="value = 1", new_text="v = 9")
    assert result.ok, result.output
    assert path.read_text() == "v = 9\nother = 2\n"


async def test_the_agents_own_writes_count_as_seen(ctx: ToolContext) -> None:
    _with_book(ctx)
    path = ctx.workspace / "notes.md"
    assert (await call(ctx, "write_file", path="notes.md", content="a\n")).ok
    assert (await call(ctx, "replace_text", path="notes.md", old_text="a", new_text="b")).ok
    assert (await call(ctx, "write_file", path="notes.md", content="c\n")).ok
    path.write_text("someone else\n")
    result = await call(ctx, "write_file", path="notes.md", content="d\n")
    assert not result.ok and "changed on disk" in result.output
    assert path.read_text() == "someone else\n"


async def test_a_range_read_is_enough_and_apply_patch_is_checked_too(ctx: ToolContext) -> None:
    _with_book(ctx)
    path = ctx.workspace / "big.txt"
    path.write_text("".join(f"line {n}\n" for n in range(1, 200)))
    assert (await call(ctx, "read_file_range", path="big.txt", start_line=1, end_line=3)).ok
    patch = "--- a/big.txt\n+++ b/big.txt\n@@ -1,2 +1,2 @@\n-line 1\n+LINE 1\n line 2\n"
    with path.open("a") as handle:
        handle.write("appended by a command\n")
    result = await call(ctx, "apply_patch", patch=patch)
    assert not result.ok and "changed on disk" in result.output
    assert path.read_text().startswith("line 1\n")
    assert (await call(ctx, "read_file_range", path="big.txt", start_line=1, end_line=3)).ok
    assert (await call(ctx, "apply_patch", patch=patch)).ok
    assert path.read_text().startswith("LINE 1\n")


async def test_a_deleted_file_is_a_change_and_an_unread_file_is_not_checked(
    ctx: ToolContext,
) -> None:
    _with_book(ctx)
    seen = ctx.workspace / "seen.txt"
    seen.write_text("x\n")
    assert (await call(ctx, "read_file", path="seen.txt")).ok
    seen.unlink()
    result = await call(ctx, "write_file", path="seen.txt", content="y\n")
    assert not result.ok and "changed on disk" in result.output
    assert not seen.exists()
    # Once the model has looked again (and found it gone), it may create it anew.
    assert not (await call(ctx, "read_file", path="seen.txt")).ok
    assert (await call(ctx, "write_file", path="seen.txt", content="y\n")).ok
    unread = ctx.workspace / "unread.txt"
    unread.write_text("old\n")
    assert (await call(ctx, "write_file", path="unread.txt", content="new\n")).ok
