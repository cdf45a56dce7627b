"""``find``'s expression: which of its actions delete, and whether one can act on a file no
test has selected.

find evaluates its expression left to right, so ``-delete -name x`` deletes everything and
``-name x -o -delete`` everything else; a test that selects every file (``-name '*'``,
``-mtime -100000``) filters nothing. The expression is read into items ("filter",
"delete", "other", brackets, ``-o``) and scanned as find would evaluate it.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable

# find: tests that select some files; without one, find acts on everything below.
_FIND_FILTERS = frozenset(
    {
        "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex",
        "-iregex", "-newer", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin",
        "-size", "-user", "-group", "-uid", "-gid", "-nouser", "-nogroup", "-empty",
        "-inum", "-samefile", "-links", "-perm", "-lname", "-ilname", "-newermt",
    }
)  # fmt: skip


# Paths that any test selecting "everything" selects: a pattern or regex matching them all,
# or an age or size bound beyond any real file, is no filter (``-name '*'``, ``-path '*'``,
# ``-regex '.*'``, ``-mtime -100000``).
_EVERY_PATH = ("a", ".hidden", "x y.txt", "/home/u/.cache/z", "./src/a.py", "~", "")
_PATTERN_TESTS = frozenset(
    {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-lname", "-ilname"}
)
_REGEX_TESTS = frozenset({"-regex", "-iregex"})
_AGE_TESTS = {"-mtime": 1, "-atime": 1, "-ctime": 1, "-mmin": 1440, "-amin": 1440, "-cmin": 1440}
_CENTURY_DAYS = 36_600
_SIZE_UNITS = {"": 512, "b": 512, "c": 1, "w": 2, "k": 1 << 10, "M": 1 << 20, "G": 1 << 30}
_TERABYTE = 1 << 40


def _always_true(test: str, value: str) -> bool:
    """Whether ``test value`` selects every file, so that it filters nothing."""
    if test in _PATTERN_TESTS:
        return all(fnmatch.fnmatchcase(path, value) for path in _EVERY_PATH)
    if test in _REGEX_TESTS:
        try:
            return all(re.fullmatch(value, path, re.DOTALL) for path in _EVERY_PATH)
        except re.error:
            return False
    if test in _AGE_TESTS:
        match = re.fullmatch(r"-(\d+)", value)
        return match is not None and int(match.group(1)) > _CENTURY_DAYS * _AGE_TESTS[test]
    if test == "-size":
        match = re.fullmatch(r"-(\d+)([bcwkMG]?)", value)
        return match is not None and int(match.group(1)) * _SIZE_UNITS[match.group(2)] >= _TERABYTE
    return False


# find: its other primaries that take a value (-fprintf takes two).
_FIND_TAKES = {
    "-type": 1, "-xtype": 1, "-maxdepth": 1, "-mindepth": 1, "-fstype": 1, "-printf": 1,
    "-fprint": 1, "-fprint0": 1, "-fls": 1, "-context": 1, "-used": 1, "-files0-from": 1,
    "-fprintf": 2,
}  # fmt: skip
# Deleters that delete what find hands them whatever their options.
_FIND_DELETERS = frozenset({"rm", "srm", "wipe", "rmdir", "unlink", "shred", "truncate"})


def _find_deletes_unfiltered(items: list[str]) -> bool:
    """Whether a deleting action of find's expression (``items``: "filter", "delete",
    "other", "(", ")", "-o", ",") can run on a file no test has selected: find evaluates
    left to right, so ``-delete -name x`` deletes everything, and ``-name x -o -delete``
    deletes everything else."""

    def scan(position: int, selected: bool) -> tuple[int, bool, bool]:
        # -> (where the group ends, an unfiltered delete found, every branch filtered)
        start_selected = selected
        found = False
        every_branch = True
        while position < len(items):
            item = items[position]
            position += 1
            if item == ")":
                break
            if item in ("-o", ","):
                every_branch = every_branch and selected
                selected = start_selected
            elif item == "(":
                position, inner_found, inner_filtered = scan(position, selected)
                found = found or inner_found
                selected = selected or inner_filtered
            elif item == "filter":
                selected = True
            elif item == "delete" and not selected:
                found = True
        return position, found, every_branch and selected

    return scan(0, False)[1]


def _find_items(expression: list[str], exec_deletes: Callable[[list[str]], bool]) -> list[str]:
    """find's expression (after its starting points) as items for
    :func:`_find_deletes_unfiltered`; ``exec_deletes`` checks the command of each ``-exec``
    and says whether it deletes or changes what it is given."""
    items: list[str] = []
    index = 0
    while index < len(expression):
        text = expression[index]
        index += 1
        if text in ("(", "\\(", ")", "\\)", "-o", "-or", ","):
            items.append(text.lstrip("\\").replace("-or", "-o"))
        elif text == "-delete":
            items.append("delete")
        elif text in ("-exec", "-execdir", "-ok", "-okdir"):
            command: list[str] = []
            while index < len(expression) and expression[index] not in (";", "+", "\\;"):
                command.append(expression[index])
                index += 1
            index += 1
            items.append("delete" if exec_deletes(command) else "other")
        elif text in _FIND_FILTERS:
            alone = text in ("-empty", "-nouser", "-nogroup")
            value = "" if alone or index >= len(expression) else expression[index]
            items.append("other" if _always_true(text, value) else "filter")
            index += 0 if alone else 1
        else:
            index += _FIND_TAKES.get(text, 0)
    return items


def _find_parts(texts: list[str]) -> tuple[bool, list[str], list[str], list[str]]:
    """find's arguments: whether it follows links given as starting points (-H, -L; -P,
    the default, does not), its leading options, its starting points, its expression."""
    follow = False
    index = 0
    while index < len(texts) and (
        texts[index] in ("-H", "-L", "-P", "-D") or re.fullmatch(r"-O\d", texts[index])
    ):
        follow = texts[index] in ("-H", "-L") or (follow and texts[index] != "-P")
        index += 2 if texts[index] == "-D" else 1
    options, texts = texts[:index], texts[index:]
    starts: list[str] = []
    for text in texts:
        if text.startswith("-") or text in ("(", ")", "!", ","):
            break
        starts.append(text)
    return follow, options, starts, texts[len(starts) :]
