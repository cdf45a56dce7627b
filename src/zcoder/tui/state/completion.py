"""What Tab completes in the prompt: slash commands, their fixed arguments, workspace paths.

Only the word before the cursor is looked at, and only the text before the cursor is
replaced (as shells do).

- A slash command: the input's first word, starting with ``/`` (``/mo`` → ``/model``);
  then a command's fixed argument (``/agents p`` → ``/agents pause``). The names come
  from the command registry (slash/registry.py), so a new command completes
  without a change here.
- A path, relative to the workspace (``src/zc`` → ``src/zcoder/``): directories end with
  ``/`` (a symlink only when it leads to a directory inside the workspace); hidden names
  are offered only once the word's last part starts with ``.``; nothing outside the
  workspace is ever listed (``..``, absolute paths and symlinks are resolved and checked).
  A word may start with ``@`` (kept) or a quote. A name with blanks or quotes is put in
  double quotes (single ones if it has a double quote), which stay open after a directory
  so the next Tab goes on inside it, and close after a file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

MAX_LISTED: Final = 5000  # directory entries looked at for one Tab (a huge folder)
MAX_CANDIDATES: Final = 500
_NEEDS_QUOTES: Final = re.compile(r"[\s\"'`$\\]")


@dataclass(frozen=True)
class Candidate:
    text: str  # what replaces the word
    label: str  # how the hint lists it
    final: bool  # a whole word: a single completion adds a space after it


@dataclass(frozen=True)
class Completions:
    start: int  # where the word starts in the line
    word: str  # the text before the cursor being completed
    candidates: tuple[Candidate, ...]

    def common_prefix(self) -> str:
        texts = [c.text for c in self.candidates]
        shortest = min(texts, key=len, default="")
        for index, char in enumerate(shortest):
            if any(text[index] != char for text in texts):
                return shortest[:index]
        return shortest


def command_words(commands: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Command names and their fixed first arguments, from help entries such as
    ``/agents pause``, ``/agents run N | discard N`` or ``/model [NAME]`` (a bracketed or
    capitalised word is a value to type, not a fixed word)."""
    found: dict[str, list[str]] = {}
    for entry in commands:
        name, _, rest = entry.partition(" ")
        arguments = found.setdefault(name, [])
        for alternative in rest.split("|"):
            first = alternative.split()[:1]
            if first and first[0].islower() and first[0] not in arguments:
                arguments.append(first[0])
    return {name: tuple(arguments) for name, arguments in found.items()}


def complete(
    before: str, *, first_row: bool, workspace: Path | None, commands: Iterable[str]
) -> Completions | None:
    """The completions of the word ending ``before`` (the cursor's line up to the cursor);
    ``first_row``: that line is the input's first, where a slash command is. Without a
    workspace only commands complete."""
    if first_row and (found := _complete_command(before, command_words(commands))):
        return found
    return None if workspace is None else _complete_path(before, workspace)


def _complete_command(before: str, words: dict[str, tuple[str, ...]]) -> Completions | None:
    if re.fullmatch(r"/[^\s/]*", before):
        names = sorted(name for name in words if name.startswith(before.lower()))
        return Completions(0, before, tuple(Candidate(n, n, True) for n in names))
    argument = re.fullmatch(r"(/\S+)(\s+)(\S*)", before)
    if argument is None or argument.group(1).lower() not in words:
        return None
    choices = words[argument.group(1).lower()]
    if not choices:
        return None
    start = argument.start(3)
    typed = argument.group(3)
    chosen = sorted(c for c in choices if c.startswith(typed.lower()))
    return Completions(start, typed, tuple(Candidate(c, c, True) for c in chosen))


def _word_start(before: str) -> int:
    """Where the word before the cursor starts: after the last blank outside quotes (a
    quote opens only at a word's start, after an optional ``@``: not in ``don't``)."""
    start, quote = 0, ""
    for index, char in enumerate(before):
        if quote:
            quote = "" if char == quote else quote
        elif char.isspace():
            start = index + 1
        elif char in "\"'" and before[start:index] in ("", "@"):
            quote = char
    return start


def _complete_path(before: str, workspace: Path) -> Completions | None:
    start = _word_start(before)
    word = before[start:]
    if not word:
        return None  # nothing typed: listing the whole workspace helps nobody
    marker = "@" if word.startswith("@") else ""
    path = word[len(marker) :]
    quote = path[0] if path[:1] in ('"', "'") else ""
    path = path[len(quote) :]
    folder, _, prefix = path.rpartition("/")
    folder_text = f"{folder}/" if _ else ""
    root = workspace.resolve()
    try:
        directory = (root / folder_text).resolve() if folder_text else root
    except (OSError, RuntimeError):
        return None
    if not _inside(directory, root) or not directory.is_dir():
        return None
    names = _listing(directory, prefix, root)
    candidates = []
    for name, is_dir in names[:MAX_CANDIDATES]:
        full = folder_text + name
        use = quote or ""
        if not use and _NEEDS_QUOTES.search(full):
            use = "'" if '"' in full else '"'
        text = f"{marker}{use}{full}{'/' if is_dir else use}"
        candidates.append(Candidate(text, name + ("/" if is_dir else ""), not is_dir))
    return Completions(start, word, tuple(candidates))


def _listing(directory: Path, prefix: str, root: Path) -> list[tuple[str, bool]]:
    """Names in ``directory`` starting with ``prefix``, each with whether it is a
    directory inside the workspace; sorted, hidden ones only for a ``.`` prefix."""
    found: list[tuple[str, bool]] = []
    try:
        with os.scandir(directory) as entries:
            for number, entry in enumerate(entries):
                if number >= MAX_LISTED:
                    break
                name = entry.name
                if not name.startswith(prefix) or (name.startswith(".") and prefix[:1] != "."):
                    continue
                found.append((name, _is_directory_inside(entry, root)))
    except OSError:
        return []
    return sorted(found, key=lambda item: (item[0].lower(), item[0]))


def _is_directory_inside(entry: os.DirEntry[str], root: Path) -> bool:
    try:
        if not entry.is_dir():
            return False
        if not entry.is_symlink():
            return True
        return _inside(Path(entry.path).resolve(), root)
    except (OSError, RuntimeError):
        return False


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
