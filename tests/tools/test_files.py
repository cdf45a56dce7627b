"""The file tools: normal behaviour and the errors the model sees."""

from __future__ import annotations

from pathlib import Path

from zcoder.tools import ToolContext, default_registry

REGISTRY = default_registry()


async def call(ctx: ToolContext, name: str, **args: object):
    return await REGISTRY.dispatch(name, args, ctx)


async def test_list_files_lists_recursively_breadth_first_and_sorted(ctx: ToolContext) -> None:
    ws = ctx.workspace
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "pkg" / "mod.py").write_text("")
    (ws / "README.md").write_text("")
    result = await call(ctx, "list_files")
    assert result.ok
    assert result.output.splitlines() == ["README.md", "src/", "src/pkg/", "src/pkg/mod.py"]


async def test_list_files_skips_noise_dirs_and_gitignored(ctx: ToolContext) -> None:
    ws = ctx.workspace
    for noise in (".git", "node_modules", ".venv", "__pycache__", "dist", "build"):
        (ws / noise).mkdir()
        (ws / noise / "x").write_text("")
    (ws / ".gitignore").write_text("*.log\n/secret/\n!keep.log\n")
    (ws / "a.log").write_text("")
    (ws / "keep.log").write_text("")
    (ws / "secret").mkdir()
    (ws / "secret" / "s").write_text("")
    (ws / "main.py").write_text("")
    result = await call(ctx, "list_files")
    assert result.output.splitlines() == [".gitignore", "keep.log", "main.py"]


async def test_list_files_bounds_entries(ctx: ToolContext) -> None:
    for i in range(20):
        (ctx.workspace / f"f{i:02}.txt").write_text("")
    result = await call(ctx, "list_files", max_entries=5)
    lines = result.output.splitlines()
    assert lines[:5] == [f"f{i:02}.txt" for i in range(5)]
    assert "more entries not shown" in lines[5]
    assert result.metadata["truncated"] is True


async def test_list_files_of_subdir_and_of_file_and_missing(ctx: ToolContext) -> None:
    (ctx.workspace / "d").mkdir()
    (ctx.workspace / "d" / "x.txt").write_text("")
    assert (await call(ctx, "list_files", path="d")).output == "d/x.txt"
    assert (await call(ctx, "list_files", path="d/x.txt")).output == "d/x.txt"
    missing = await call(ctx, "list_files", path="nope")
    assert not missing.ok and "does not exist" in missing.output


async def test_list_files_shows_symlinks_without_following(ctx: ToolContext) -> None:
    (ctx.workspace / "target").mkdir()
    (ctx.workspace / "target" / "inner").write_text("")
    (ctx.workspace / "link").symlink_to("target")
    lines = (await call(ctx, "list_files")).output.splitlines()
    assert "link -> target" in lines
    assert not any(line.startswith("link/") for line in lines)


async def test_read_file_returns_whole_text(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("one\ntwo\n")
    result = await call(ctx, "read_file", path="a.txt")
    assert result.ok and result.output == "one\ntwo\n"
    assert result.metadata["lines"] == 2


async def test_read_file_refuses_large_file_instead_of_truncating(make_ctx) -> None:
    ctx = make_ctx(max_output=2048)
    (ctx.workspace / "big.txt").write_text("x" * 5000)
    result = await call(ctx, "read_file", path="big.txt")
    assert not result.ok
    assert "larger than" in result.output and "read_file_range" in result.output
    assert "xxxx" not in result.output


async def test_read_file_refuses_binary_and_non_utf8(ctx: ToolContext) -> None:
    (ctx.workspace / "bin").write_bytes(b"\x7fELF\x00\x01")
    (ctx.workspace / "latin1").write_bytes(b"caf\xe9")
    assert "binary" in (await call(ctx, "read_file", path="bin")).output
    assert "not UTF-8" in (await call(ctx, "read_file", path="latin1")).output


async def test_read_file_errors(ctx: ToolContext) -> None:
    (ctx.workspace / "d").mkdir()
    assert "does not exist" in (await call(ctx, "read_file", path="nope.txt")).output
    assert "directory" in (await call(ctx, "read_file", path="d")).output
    assert "directory" in (await call(ctx, "read_file", path=".")).output


async def test_read_file_range_numbers_lines(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await call(ctx, "read_file_range", path="a.txt", start_line=3, end_line=4)
    assert result.output == "     3\tline 3\n     4\tline 4"
    tail = await call(ctx, "read_file_range", path="a.txt", start_line=9, end_line=50)
    assert tail.output.splitlines()[-1] == "    10\tline 10"
    assert tail.metadata["end_line"] == 10


async def test_read_file_range_errors(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("only\n")
    past = await call(ctx, "read_file_range", path="a.txt", start_line=5, end_line=6)
    assert not past.ok and "has 1 line" in past.output
    backwards = await call(ctx, "read_file_range", path="a.txt", start_line=3, end_line=2)
    assert not backwards.ok and "before start_line" in backwards.output
    zero = await call(ctx, "read_file_range", path="a.txt", start_line=0, end_line=2)
    assert not zero.ok and "at least 1" in zero.output


async def test_read_file_range_works_on_files_larger_than_the_bound(make_ctx) -> None:
    ctx = make_ctx(max_output=2048)
    (ctx.workspace / "big.txt").write_text("".join(f"{i}\n" for i in range(100000)))
    result = await call(ctx, "read_file_range", path="big.txt", start_line=50000, end_line=50001)
    assert result.output == " 50000\t49999\n 50001\t50000"


async def test_write_file_creates_parents_and_replaces(ctx: ToolContext) -> None:
    created = await call(ctx, "write_file", path="new/dir/f.txt", content="héllo\n")
    assert created.output.startswith("Created new/dir/f.txt (7 bytes, 1 line)"), created.output
    assert created.metadata["created"] is True
    assert (ctx.workspace / "new/dir/f.txt").read_text() == "héllo\n"
    replaced = await call(ctx, "write_file", path="new/dir/f.txt", content="bye")
    assert replaced.output.startswith("Replaced new/dir/f.txt (3 bytes, 1 line)"), replaced.output
    one = await call(ctx, "write_file", path="one", content="x")
    assert one.output.startswith("Created one (1 byte, 1 line)"), one.output
    assert (ctx.workspace / "new/dir/f.txt").read_text() == "bye"


async def test_write_file_onto_directory_is_an_error(ctx: ToolContext) -> None:
    (ctx.workspace / "d").mkdir()
    result = await call(ctx, "write_file", path="d", content="x")
    assert not result.ok and "directory" in result.output


async def test_write_file_through_a_file_parent_is_an_error(ctx: ToolContext) -> None:
    (ctx.workspace / "f").write_text("")
    result = await call(ctx, "write_file", path="f/x.txt", content="x")
    assert not result.ok and "not a directory" in result.output


async def test_replace_text_exactly_once(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.py"
    path.write_text("a = 1\nb = 2\n")
    result = await call(ctx, "replace_text", path="a.py", old_text="b = 2", new_text="b = 3")
    assert result.ok and result.metadata["line"] == 2
    assert path.read_text() == "a = 1\nb = 3\n"


async def test_replace_text_counts_occurrences_and_changes_nothing(ctx: ToolContext) -> None:
    path = ctx.workspace / "a.py"
    path.write_text("x\nx\nx\n")
    many = await call(ctx, "replace_text", path="a.py", old_text="x", new_text="y")
    assert not many.ok and "occurs 3 times" in many.output
    none = await call(ctx, "replace_text", path="a.py", old_text="zz", new_text="y")
    assert not none.ok and "not found" in none.output
    empty = await call(ctx, "replace_text", path="a.py", old_text="", new_text="y")
    assert not empty.ok
    assert path.read_text() == "x\nx\nx\n"


async def test_replace_text_missing_file(ctx: ToolContext) -> None:
    result = await call(ctx, "replace_text", path="none.py", old_text="a", new_text="b")
    assert not result.ok and "does not exist" in result.output


async def test_files_left_untouched_outside(ctx: ToolContext, tmp_path: Path) -> None:
    await call(ctx, "write_file", path="x.txt", content="1")
    assert sorted(p.name for p in tmp_path.iterdir()) == [ctx.workspace.name]
