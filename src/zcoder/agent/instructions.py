"""Project instructions: AGENTS.md from $ZCODER_HOME, then from the git root down to the
workspace. Later (nearer) files come last so they win on conflict; 32 KiB in total."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

INSTRUCTIONS_FILE: Final = "AGENTS.md"
MAX_INSTRUCTIONS_BYTES: Final = 32 * 1024


@dataclass(frozen=True)
class InstructionFile:
    path: Path
    text: str
    truncated: bool = False


def _git_root(workspace: Path) -> Path | None:
    for candidate in (workspace, *workspace.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def instruction_paths(workspace: Path, home: Path) -> list[Path]:
    """Where AGENTS.md files are looked for, general first, nearest last."""
    paths = [home / INSTRUCTIONS_FILE]
    root = _git_root(workspace) or workspace
    chain = [workspace, *workspace.parents]
    for directory in reversed(chain[: chain.index(root) + 1] if root in chain else [workspace]):
        paths.append(directory / INSTRUCTIONS_FILE)
    seen: set[Path] = set()
    unique = []
    for path in paths:
        if path not in seen:
            seen.add(path)
            unique.append(path)
    return unique


def load_instructions(workspace: Path, home: Path) -> list[InstructionFile]:
    """The files that exist, read as UTF-8 (bad bytes replaced), capped at 32 KiB in all.

    The budget goes to the nearest files first, since they win on conflict: a large
    general file is cut (or left out) rather than the workspace's own. The list is still
    in chain order, general first, nearest last.
    """
    budget = MAX_INSTRUCTIONS_BYTES
    found: list[InstructionFile] = []
    for path in reversed(instruction_paths(workspace, home)):
        if budget <= 0:
            break
        try:
            if not path.is_file():
                continue
            data = path.read_bytes()
        except OSError:
            continue
        truncated = len(data) > budget
        text = data[:budget].decode("utf-8", errors="replace")
        budget -= min(len(data), budget)
        found.append(InstructionFile(path, text, truncated))
    found.reverse()
    return found


def render_instructions(files: list[InstructionFile]) -> str:
    parts = []
    for item in files:
        note = " (cut at the 32 KiB limit)" if item.truncated else ""
        parts.append(f"## From {item.path}{note}\n\n{item.text.strip()}")
    return "\n\n".join(parts)
